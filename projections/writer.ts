/**
 * Appending events and learning their verdicts: every writer (apiserver, reconcilers,
 * node agents) appends through this, so events are keyed and routed the same way
 * everywhere: the partition key is the object key, status goes to `observed`,
 * heartbeats to `heartbeats`, everything else to `desired`.
 */
import { kindRef } from '../schemas/keys.ts';
import { partitionKeyOf } from '../log/partitioner.ts';
import type { EventLog, RecordHeaders, Topic } from '../log/port.ts';
import { CLUSTER_CONFIGURATION_KEY, CUSTOM_RESOURCE_DEFINITION_REF } from '../schemas/kinds/domains.ts';
import { kindRefOf } from '../schemas/kinds/refs.ts';
import { assertNever, encodeEvent, newEventId, objectKey, type Actor, type EventBody, type EventEnvelope } from '../schemas/index.ts';
import type { Projection } from './projection.ts';
import type { EventRecord } from './store.ts';

/** The key an event body is about ("Kind/namespace/name"). */
export const keyOfBody = (body: EventBody): string => {
  switch (body.type) {
    case 'ObjectCreated':
    case 'ObjectUpdated':
      return objectKey(body.object);
    case 'ObjectDeleted':
      return `${kindRef(body.kind)}/${body.namespace ?? ''}/${body.name}`;
    case 'PodBound':
    case 'PodStatusChanged':
      return `Pod/${body.namespace}/${body.name}`;
    case 'NodeStatusChanged':
      return `Node//${body.name}`;
    case 'NodeHeartbeat':
      return `Node//${body.node}`;
    case 'ClusterConfigured':
      return CLUSTER_CONFIGURATION_KEY;
    case 'SchemaRegistered':
      return `${CUSTOM_RESOURCE_DEFINITION_REF}//${body.resource}`;
    case 'CustomObjectCreated':
    case 'CustomObjectUpdated':
      return customObjectKey(body.object.apiVersion, body.object.kind, body.object.metadata.namespace, body.object.metadata.name ?? '');
    case 'CustomObjectDeleted':
      return customObjectKey(body.apiVersion, body.kind, body.namespace, body.name);
    default:
      return assertNever(body);
  }
};

/** The key of a custom object: `<Kind>.<group>/<namespace>/<name>` (no namespace for a cluster-scoped kind). */
export const customObjectKey = (apiVersion: string, kind: string, namespace: string | null | undefined, name: string): string =>
  `${kindRefOf(apiVersion.slice(0, Math.max(0, apiVersion.lastIndexOf('/'))), kind)}/${namespace ?? ''}/${name}`;

/** The topic an event body belongs on. */
export const topicOfBody = (body: EventBody): Topic => {
  switch (body.type) {
    case 'ObjectUpdated':
      return body.subresource === 'status' ? 'observed' : 'desired';
    case 'ObjectCreated':
    case 'ObjectDeleted':
    case 'PodBound':
    case 'ClusterConfigured':
    case 'SchemaRegistered':
    case 'CustomObjectCreated':
    case 'CustomObjectDeleted':
      return 'desired';
    // A custom object's status is written on the desired topic too: it is read with a schema
    // registered there, which an observed event could overtake in a replay.
    case 'CustomObjectUpdated':
      return 'desired';
    case 'PodStatusChanged':
    case 'NodeStatusChanged':
      return 'observed';
    case 'NodeHeartbeat':
      return 'heartbeats';
    default:
      return assertNever(body);
  }
};

/** Provenance of a write: who, and (for derived writes) which event caused it. */
export interface WriteContext {
  readonly actor: Actor;
  readonly causationId?: string | null;
  readonly correlationId?: string | null;
  /** Event time; defaults to now. */
  readonly time?: number;
  /** For controller decisions: the position of the view the decision read. */
  readonly decidedAt?: string;
}

/** An event as appended, with where it landed. */
export interface AppendedEvent {
  readonly event: EventEnvelope;
  readonly topic: Topic;
  readonly partition: number;
  readonly offset: number;
}

/** Builds the envelope of `body`. */
export const envelope = (body: EventBody, context: WriteContext): EventEnvelope => {
  const time = context.time ?? Date.now();
  const id = newEventId(time);
  return {
    id,
    time,
    actor: context.actor,
    causationId: context.causationId ?? null,
    correlationId: context.correlationId ?? context.causationId ?? id,
    key: keyOfBody(body),
    ...(context.decidedAt ? { decidedAt: context.decidedAt } : {}),
    body,
  };
};

/** Appends `bodies` (grouped per topic, one append per topic) and returns where each landed. */
export const appendBodies = (
  log: EventLog,
  bodies: readonly EventBody[],
  context: WriteContext,
): Promise<AppendedEvent[]> => appendEnvelopes(log, bodies.map((body) => envelope(body, context)));

/** Appends ready-made envelopes (one append per topic) and returns where each landed, in input order. */
export const appendEnvelopes = async (
  log: EventLog,
  envelopes: readonly EventEnvelope[],
  headersOf?: (event: EventEnvelope) => RecordHeaders | undefined,
): Promise<AppendedEvent[]> => {
  const byTopic = new Map<Topic, EventEnvelope[]>();
  const order: { topic: Topic; index: number }[] = [];
  for (const event of envelopes) {
    const topic = topicOfBody(event.body);
    const events = byTopic.get(topic) ?? [];
    order.push({ topic, index: events.length });
    events.push(event);
    byTopic.set(topic, events);
  }
  const landed = new Map<Topic, AppendedEvent[]>();
  await Promise.all(
    [...byTopic.entries()].map(async ([topic, events]) => {
      const positions = await log.append(
        topic,
        events.map((event) => {
          const record = { key: partitionKeyOf(event.key), value: encodeEvent(event), timestamp: event.time };
          const headers = headersOf?.(event);
          return headers ? { ...record, headers } : record;
        }),
      );
      landed.set(
        topic,
        events.map((event, i) => ({ event, topic, partition: positions[i]!.partition, offset: positions[i]!.offset })),
      );
    }),
  );
  return order.map(({ topic, index }) => landed.get(topic)![index]!);
};

/** Appends `bodies` and waits until `projection` has judged every desired/observed one. */
export const appendAndWait = async (
  log: EventLog,
  projection: Projection,
  bodies: readonly EventBody[],
  context: WriteContext,
  timeoutMs = 30_000,
): Promise<{ appended: AppendedEvent; record: EventRecord | undefined }[]> => {
  const appended = await appendBodies(log, bodies, context);
  return Promise.all(
    appended.map(async (a) => {
      if (a.topic === 'heartbeats') return { appended: a, record: undefined };
      const record = await projection.waitForEvent(a.topic, a.partition, a.offset, a.event.id, timeoutMs);
      return { appended: a, record };
    }),
  );
};
