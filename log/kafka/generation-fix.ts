/**
 * kafkajs 2.2.4's GROUP_JOIN event names the member, the leader and the assignment, but not
 * the group's generation id that the JoinGroup response gave (`consumerGroup.generationId`).
 * Without it a membership's generation could only count this member's own joins, which is not
 * comparable across members, so nothing could tell from the log whether two members acted on
 * one key in the same generation. This fix adds `generationId` to the event's payload: it wraps
 * `ConsumerGroup.prototype.joinAndSync` so that the group's instrumentation emitter, when it
 * emits GROUP_JOIN, adds the generation the join just got. Applied when this adapter is loaded;
 * any other kafkajs version is left alone (the payload then has no `generationId`).
 */
import { createRequire } from 'node:module';

interface Emitter {
  emit(eventName: string, payload?: unknown): unknown;
}

interface ConsumerGroupPrototype {
  joinAndSync(this: ConsumerGroupInstance): Promise<void>;
}

interface ConsumerGroupInstance {
  readonly generationId: number | null;
  readonly instrumentationEmitter: Emitter;
}

/** kafkajs' event name for GROUP_JOIN (`consumer/instrumentationEvents.js`). */
const GROUP_JOIN_EVENT = 'consumer.group_join';

const patched = new WeakSet<Emitter>();

/** Makes `emitter` add the group's current generation to every GROUP_JOIN payload of `group`. */
export const withGenerationOnJoin = (group: ConsumerGroupInstance): void => {
  const emitter = group.instrumentationEmitter;
  if (patched.has(emitter)) return;
  patched.add(emitter);
  const emit = emitter.emit.bind(emitter);
  emitter.emit = (eventName, payload) =>
    eventName === GROUP_JOIN_EVENT && typeof payload === 'object' && payload !== null && group.generationId !== null
      ? emit(eventName, { ...payload, generationId: group.generationId })
      : emit(eventName, payload);
};

const require = createRequire(import.meta.url);

/** Installs the fix on kafkajs 2.2.4; returns whether it is in place. */
export const fixKafkajsJoinGeneration = (): boolean => {
  const { version } = require('kafkajs/package.json') as { version: string };
  if (version !== '2.2.4') return false;
  const ConsumerGroup = require('kafkajs/src/consumer/consumerGroup.js') as { prototype: ConsumerGroupPrototype };
  const original = ConsumerGroup.prototype.joinAndSync;
  ConsumerGroup.prototype.joinAndSync = function joinAndSync(this: ConsumerGroupInstance) {
    withGenerationOnJoin(this);
    return original.call(this);
  };
  return true;
};

/** Whether the fix is installed (it is, once this module is loaded, on kafkajs 2.2.4). */
export const joinGenerationFixed = fixKafkajsJoinGeneration();
