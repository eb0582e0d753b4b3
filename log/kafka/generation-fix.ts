/**
 * kafkajs 2.2.4's GROUP_JOIN event names the member, the leader and the assignment, but not
 * the group's generation id that the JoinGroup response gave (`consumerGroup.generationId`).
 * Without it a membership's generation could only count this member's own joins, which is not
 * comparable across members, so nothing could tell from the log whether two members acted on
 * one key in the same generation. This fix adds `generationId` to the event's payload: it wraps
 * `ConsumerGroup.prototype.joinAndSync` so that the group's instrumentation emitter, when it
 * emits GROUP_JOIN, adds the generation the join just got. Applied when this adapter is loaded;
 * any other kafkajs version is left alone (the payload then has no `generationId`).
 *
 * A consumer that crashes and restarts (a broker gone, a coordinator moved) builds a new
 * ConsumerGroup that shares the consumer's one emitter: the payload must carry the generation
 * of the group that is joining now, never that of the crashed one (which stays at the
 * generation it last had, so a restarted member would stamp every later rebalance with it).
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

/** Emitter → the consumer group joining through it now (the latest to call `joinAndSync`). */
const joiningGroup = new WeakMap<Emitter, ConsumerGroupInstance>();

/** Makes `group`'s emitter add the joining group's generation to every GROUP_JOIN payload. */
export const withGenerationOnJoin = (group: ConsumerGroupInstance): void => {
  const emitter = group.instrumentationEmitter;
  const wrapped = joiningGroup.has(emitter);
  joiningGroup.set(emitter, group);
  if (wrapped) return;
  const emit = emitter.emit.bind(emitter);
  emitter.emit = (eventName, payload) => {
    const generationId = joiningGroup.get(emitter)?.generationId ?? null;
    return eventName === GROUP_JOIN_EVENT && typeof payload === 'object' && payload !== null && generationId !== null
      ? emit(eventName, { ...payload, generationId })
      : emit(eventName, payload);
  };
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
