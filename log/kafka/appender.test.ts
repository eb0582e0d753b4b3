/**
 * The appender's pure parts that keep a multi-broker cluster from writing a batch twice:
 * one kafkajs call per partition, and an answer naming a partition twice refused.
 */
import { describe, expect, it } from 'vitest';
import { LogError } from '../errors.ts';
import type { NewRecord } from '../port.ts';
import { assignPositions, byPartition, type PendingAppend, planRequest, prepareRecord } from './appender.ts';

const pending = (topic: string, records: readonly NewRecord[], partitions: number): PendingAppend => ({
  topic,
  records: records.map((record, i) => prepareRecord(record, i, partitions)),
  positions: new Array(records.length),
  sent: 0,
});

const records = (count: number): NewRecord[] =>
  Array.from({ length: count }, (_, i) => ({ key: `Pod/default/p-${i}`, value: Buffer.from(`v-${i}`) }));

describe('kafka appender: one send per partition', () => {
  it('splits a request into one topicMessages per topic partition, keeping batch order', () => {
    const plan = planRequest([pending('a.desired', records(30), 3), pending('a.observed', records(5), 3)]);
    const split = byPartition(plan.topicMessages);
    for (const group of split) {
      expect(group).toHaveLength(1);
      expect(new Set(group[0]!.messages.map((message) => message.partition)).size).toBe(1);
    }
    const partitionsOf = (topic: string) => split.filter((group) => group[0]!.topic === topic).map((group) => group[0]!.messages[0]!.partition);
    expect(new Set(partitionsOf('a.desired')).size).toBe(partitionsOf('a.desired').length);
    const rejoined = plan.topicMessages.map(({ topic, messages }) => ({
      topic,
      messages: split.filter((group) => group[0]!.topic === topic).flatMap((group) => group[0]!.messages),
    }));
    for (const { topic, messages } of plan.topicMessages) {
      const byPart = (list: typeof messages) => [0, 1, 2].map((p) => list.filter((m) => m.partition === p).map((m) => m.key));
      expect(byPart(rejoined.find((t) => t.topic === topic)!.messages)).toEqual(byPart(messages));
    }
  });

  it('refuses a produce answer that names a partition twice (its records were written twice)', () => {
    const append = pending('a.desired', records(4), 1);
    const plan = planRequest([append]);
    const answer = { topicName: 'a.desired', partition: 0, errorCode: 0 };
    expect(() => assignPositions(plan, [{ ...answer, baseOffset: '0' }, { ...answer, baseOffset: '4' }])).toThrow(LogError);
    expect(() => assignPositions(plan, [{ ...answer, baseOffset: '0' }])).not.toThrow();
    expect(append.positions.map((position) => position.offset)).toEqual([0, 1, 2, 3]);
  });
});
