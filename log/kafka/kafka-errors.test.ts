import { KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { isLeadershipError } from './kafka-errors.ts';

// kafkajs' own error classes, built from the broker's error codes as kafkajs builds them.
const protocolError = (type: string, code: number): KafkaJSProtocolError =>
  new KafkaJSProtocolError({ message: `broker said ${type}`, type, code, retriable: true } as never);

describe('isLeadershipError', () => {
  it('recognises a partition without a settled leader, also wrapped by kafkajs retries', () => {
    expect(isLeadershipError(protocolError('NOT_LEADER_FOR_PARTITION', 6))).toBe(true);
    expect(isLeadershipError(protocolError('LEADER_NOT_AVAILABLE', 5))).toBe(true);
    expect(isLeadershipError(protocolError('UNKNOWN_TOPIC_OR_PARTITION', 3))).toBe(true);
    expect(isLeadershipError(new KafkaJSNumberOfRetriesExceeded(protocolError('NOT_LEADER_FOR_PARTITION', 6), { retryCount: 2, retryTime: 400 }))).toBe(true);
  });

  it('leaves every other failure to the caller', () => {
    expect(isLeadershipError(protocolError('TOPIC_AUTHORIZATION_FAILED', 29))).toBe(false);
    expect(isLeadershipError(new KafkaJSNonRetriableError(new Error('connection refused')))).toBe(false);
    expect(isLeadershipError(new Error('anything'))).toBe(false);
    expect(isLeadershipError('not an error')).toBe(false);
  });
});
