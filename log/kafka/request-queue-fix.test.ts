/**
 * The kafkajs request-queue fix (request-queue-fix.ts): kafkajs' own queue with the fixed
 * scheduling, and an idle log on a real broker.
 */
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { kafkaBrokers } from '../../test/kafka-env.ts';
import { createKafkaLog } from './index.ts';
import { requestQueueFixed } from './request-queue-fix.ts';

interface Queue {
  pending: unknown[];
  inflight: Map<number, unknown>;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  maybeThrottle(ms: number): void;
  push(request: { entry: Record<string, unknown>; expectResponse: boolean; sendRequest: () => void }): void;
  fulfillRequest(response: { correlationId: number; payload: Buffer | null; size: number }): void;
  checkPendingRequests(): void;
  destroy(): void;
}
type QueueClass = (new (options: Record<string, unknown>) => Queue) & { prototype: Queue };

const require = createRequire(import.meta.url);
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as QueueClass;
const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const newQueue = (maxInFlightRequests: number | null = null): Queue =>
  new RequestQueue({ maxInFlightRequests, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'test', broker: 'test:9092', logger: quiet });
const request = (correlationId: number, sent: number[]) => ({
  entry: { correlationId, apiKey: 0, apiName: 'Produce', apiVersion: 3, resolve: () => undefined, reject: () => undefined },
  expectResponse: true,
  sendRequest: () => void sent.push(correlationId),
});
const waitUntil = async (condition: () => boolean, timeoutMs: number): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
};

const queues: Queue[] = [];
afterEach(() => {
  for (const queue of queues.splice(0)) queue.destroy();
});

describe('the kafkajs request queue fix', () => {
  it('is installed on kafkajs 2.2.4', () => {
    expect(require('kafkajs/package.json')).toMatchObject({ version: '2.2.4' });
    expect(requestQueueFixed).toBe(true);
  });

  it('arms no timer when nothing is pending (kafkajs 2.2.4 re-armed a 1 ms one forever)', () => {
    const queue = newQueue();
    queues.push(queue);
    const sent: number[] = [];
    queue.push(request(1, sent));
    queue.fulfillRequest({ correlationId: 1, payload: null, size: 0 });
    queue.checkPendingRequests();
    expect(sent).toEqual([1]);
    expect(queue.throttleCheckTimeoutId).toBeNull();
  });

  it('still sends a request held back by a broker throttle once the throttle ends', async () => {
    const queue = newQueue();
    queues.push(queue);
    const sent: number[] = [];
    queue.maybeThrottle(40);
    const pushed = Date.now();
    queue.push(request(1, sent));
    expect(sent).toEqual([]);
    expect(queue.throttleCheckTimeoutId).not.toBeNull();
    await waitUntil(() => sent.length === 1, 2_000);
    expect(Date.now() - pushed).toBeGreaterThanOrEqual(35);
    expect(queue.throttleCheckTimeoutId).toBeNull();
  });

  it('still sends a request held back by the in-flight limit when a response frees a slot', async () => {
    const queue = newQueue(1);
    queues.push(queue);
    const sent: number[] = [];
    queue.push(request(1, sent));
    queue.push(request(2, sent));
    expect(sent).toEqual([1]);
    queue.fulfillRequest({ correlationId: 1, payload: null, size: 0 });
    expect(sent).toEqual([1, 2]);
    queue.fulfillRequest({ correlationId: 2, payload: null, size: 0 });
    expect(queue.pending).toEqual([]);
    // The check armed when request 2 was held back (10 ms, as kafkajs) runs once, finds
    // nothing pending and arms no other.
    await waitUntil(() => queue.throttleCheckTimeoutId === null, 2_000);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(queue.throttleCheckTimeoutId).toBeNull();
  });

  it('keeps an idle log on a real broker from checking its queues every millisecond', async () => {
    const log = await createKafkaLog({ brokers: kafkaBrokers(), cluster: `rqfix-${Date.now().toString(36)}`, logLevel: 'error' });
    const original = RequestQueue.prototype.checkPendingRequests;
    let checks = 0;
    try {
      const received: number[] = [];
      const subscription = log.subscribe('desired').subscribe((batch) => received.push(batch.records.length));
      await log.append('desired', [{ key: 'Pod/default/a', value: Buffer.from('x') }]);
      await waitUntil(() => received.length > 0, 20_000);
      RequestQueue.prototype.checkPendingRequests = function (this: Queue) {
        checks += 1;
        original.call(this);
      };
      await new Promise((resolve) => setTimeout(resolve, 500));
      subscription.unsubscribe();
    } finally {
      RequestQueue.prototype.checkPendingRequests = original;
      await log.close();
    }
    // One check per response: the reader's long polls (maxWait 100 ms) and group heartbeats,
    // a few dozen in 500 ms. The 1 ms loop made it ~500 per connection (admin, producer, reader).
    expect(checks).toBeLessThan(100);
  }, 30_000);
});
