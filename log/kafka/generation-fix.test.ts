import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { joinGenerationFixed, withGenerationOnJoin } from './generation-fix.ts';

const GROUP_JOIN = 'consumer.group_join';

/** A consumer's one emitter, as kafkajs hands it to every ConsumerGroup the consumer builds. */
const recordingEmitter = () => {
  const emitter = new EventEmitter();
  const payloads: unknown[] = [];
  emitter.on(GROUP_JOIN, (payload: unknown) => payloads.push(payload));
  return { emitter, payloads };
};

describe('the GROUP_JOIN generation fix', () => {
  it('is installed on the kafkajs version in use', () => {
    expect(joinGenerationFixed).toBe(true);
  });

  it('adds the joining group generation to GROUP_JOIN and leaves other events alone', () => {
    const { emitter, payloads } = recordingEmitter();
    const other: unknown[] = [];
    emitter.on('consumer.heartbeat', (payload: unknown) => other.push(payload));
    const group = { generationId: 7 as number | null, instrumentationEmitter: emitter };
    withGenerationOnJoin(group);
    emitter.emit(GROUP_JOIN, { memberId: 'm' });
    group.generationId = 8;
    emitter.emit(GROUP_JOIN, { memberId: 'm' });
    emitter.emit('consumer.heartbeat', { memberId: 'm' });
    expect(payloads).toEqual([{ memberId: 'm', generationId: 7 }, { memberId: 'm', generationId: 8 }]);
    expect(other).toEqual([{ memberId: 'm' }]);
  });

  it('after a restart, reports the new group generation, not the crashed one', () => {
    const { emitter, payloads } = recordingEmitter();
    const crashed = { generationId: 12 as number | null, instrumentationEmitter: emitter };
    withGenerationOnJoin(crashed);
    emitter.emit(GROUP_JOIN, { memberId: 'a' });
    // kafkajs restarts the consumer with a new ConsumerGroup on the same emitter.
    const restarted = { generationId: null as number | null, instrumentationEmitter: emitter };
    withGenerationOnJoin(restarted);
    restarted.generationId = 15;
    emitter.emit(GROUP_JOIN, { memberId: 'b' });
    withGenerationOnJoin(restarted);
    restarted.generationId = 16;
    emitter.emit(GROUP_JOIN, { memberId: 'b' });
    expect(payloads).toEqual([
      { memberId: 'a', generationId: 12 },
      { memberId: 'b', generationId: 15 },
      { memberId: 'b', generationId: 16 },
    ]);
  });

  it('adds nothing before the group has a generation', () => {
    const { emitter, payloads } = recordingEmitter();
    withGenerationOnJoin({ generationId: null, instrumentationEmitter: emitter });
    emitter.emit(GROUP_JOIN, { memberId: 'm' });
    expect(payloads).toEqual([{ memberId: 'm' }]);
  });
});
