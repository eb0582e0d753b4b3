/**
 * A long cluster history for the replay, time-travel and dashboard scenarios, built fast:
 * one namespace (or `namespaces`, the pods dealt round-robin among them), `nodes` Nodes, and `pods` Pods, each of which lives through `rounds` events
 * (created, bound, then status reports on `observed` with a spec update every tenth
 * round), interleaved round by round so every object's history spans the whole log.
 *
 * Each round's event is Avro-encoded once as a template with fixed-width placeholders
 * (pod name, namespace, pod uid, node name, event id); every pod's event is a copy of the template
 * with the placeholders overwritten in place (same length, so the encoding stays valid).
 * Appended in batches of 10,000.
 */
import { partitionKeyOf } from '../log/partitioner.ts';
import type { EventLog, NewRecord, Topic } from '../log/port.ts';
import type { PositionVector } from '../projections/index.ts';
import { appendEnvelopes } from '../projections/writer.ts';
import { encodeEvent, newEventId, type EventBody, type EventEnvelope, type Node, type Pod, type PodStatus } from '../schemas/index.ts';

export interface HistoryOptions {
  readonly pods: number;
  /** Events per pod (≥ 2: created and bound, then status reports and updates). */
  readonly rounds: number;
  readonly nodes: number;
  /** Namespaces the pods are dealt among (default 1: the namespace "history"); at most 10,000. */
  readonly namespaces?: number;
  readonly progress?: (line: string) => void;
}

export interface BuiltHistory {
  readonly events: number;
  readonly seconds: number;
  /** The position at the end of each round (index r: after every pod's event of round r). */
  readonly roundEnds: readonly PositionVector[];
  readonly podKeys: readonly string[];
  /** The namespaces the pods are in. */
  readonly namespaces: readonly string[];
}

const NAMESPACE = 'history';
/** Stands for the namespace in the templates: as long as every namespace name (`history`, `ns-0042`). */
const NAMESPACE_PLACEHOLDER = 'nszzzzz';
const namespaceNames = (count: number): string[] =>
  count === 1 ? [NAMESPACE] : Array.from({ length: count }, (_, i) => `ns-${String(i).padStart(4, '0')}`);
const BASE_TIME = Date.UTC(2026, 0, 5, 10, 0, 0);
const NAME_PLACEHOLDER = 'pod-zzzzzzz';
const UID_PLACEHOLDER = 'a0000000-0000-4000-8000-fffffffffffa';
const ID_PLACEHOLDER = 'e0000000-0000-4000-8000-fffffffffffe';
const NODE_PLACEHOLDER = 'node-zzzz';

const podName = (i: number): string => `pod-${String(i).padStart(7, '0')}`;
const podUid = (i: number): string => `a0000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const nodeName = (i: number): string => `node-${String(i).padStart(4, '0')}`;
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const podObject = (round: number): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: NAME_PLACEHOLDER,
    namespace: NAMESPACE_PLACEHOLDER,
    uid: UID_PLACEHOLDER,
    labels: { app: 'history', tier: 'web' },
    annotations: { 'bench.logplane.io/round': String(round) },
  },
  spec: {
    containers: [{ name: 'main', image: 'logplane/sleeper:1', resources: { requests: { cpu: '10m', memory: '16Mi' } } }],
    terminationGracePeriodSeconds: 1,
  },
});

const podStatus = (round: number, time: number): PodStatus => ({
  phase: 'Running',
  hostIP: '127.0.0.1',
  podIP: '127.110.0.1',
  startTime: iso(BASE_TIME),
  conditions: [
    { type: 'PodScheduled', status: 'True', lastTransitionTime: iso(BASE_TIME) },
    { type: 'Ready', status: round % 2 === 0 ? 'True' : 'False', lastTransitionTime: iso(time) },
  ],
  containerStatuses: [
    {
      name: 'main',
      image: 'logplane/sleeper:1',
      ready: round % 2 === 0,
      started: true,
      restartCount: round,
      state: { running: { startedAt: iso(time) } },
      containerID: `sim://${UID_PLACEHOLDER}/main/${round}`,
    },
  ],
});

/** The body of a pod's event in `round`, and its topic. */
const bodyOfRound = (round: number, time: number): { body: EventBody; topic: Topic } => {
  if (round === 0) return { body: { type: 'ObjectCreated', object: podObject(0) }, topic: 'desired' };
  if (round === 1) {
    return {
      body: {
        type: 'PodBound',
        namespace: NAMESPACE_PLACEHOLDER,
        name: NAME_PLACEHOLDER,
        node: NODE_PLACEHOLDER,
        expectedPodVersion: null,
        rationale: { filtered: [], scores: [{ node: NODE_PLACEHOLDER, score: 100, plugins: [] }], feasibleNodes: 1, totalNodes: 1 },
      },
      topic: 'desired',
    };
  }
  if (round % 10 === 0) {
    return { body: { type: 'ObjectUpdated', object: podObject(round), expectedResourceVersion: null, subresource: null }, topic: 'desired' };
  }
  return {
    body: { type: 'PodStatusChanged', namespace: NAMESPACE_PLACEHOLDER, name: NAME_PLACEHOLDER, uid: UID_PLACEHOLDER, status: podStatus(round, time) },
    topic: 'observed',
  };
};

/** Byte offsets of every occurrence of `needle` in `buffer`. */
const occurrences = (buffer: Buffer, needle: string): number[] => {
  const found: number[] = [];
  for (let at = buffer.indexOf(needle); at >= 0; at = buffer.indexOf(needle, at + 1)) found.push(at);
  return found;
};

/** The bootstrap events: the namespace and the nodes (large enough for every pod). */
const bootstrapBodies = (nodes: number, pods: number, namespaces: readonly string[]): EventBody[] => {
  const perNode = String(Math.ceil(pods / nodes) + 10);
  const capacity = { cpu: '64', memory: '256Gi', pods: perNode };
  return [
    ...namespaces.map((name): EventBody => ({ type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, spec: {}, status: { phase: 'Active' } } })),
    ...Array.from({ length: nodes }, (_, i): EventBody => {
      const node: Node = {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: nodeName(i), labels: { 'kubernetes.io/hostname': nodeName(i) } },
        spec: {},
        status: { capacity, allocatable: capacity, conditions: [{ type: 'Ready', status: 'True' }] },
      };
      return { type: 'ObjectCreated', object: node };
    }),
  ];
};

/** Appends the history to `log` (which must be empty) and reports where each round ended. */
export const buildHistory = async (log: EventLog, options: HistoryOptions): Promise<BuiltHistory> => {
  const started = performance.now();
  const actor = { type: 'user' as const, name: 'bench' };
  const namespaces = namespaceNames(options.namespaces ?? 1);
  if (namespaces.length < 1 || namespaces.length > 10_000) throw new RangeError(`namespaces must be from 1 to 10,000, got ${namespaces.length}`);
  const bootstrap = bootstrapBodies(options.nodes, options.pods, namespaces).map((body): EventEnvelope => {
    // Event ids as logplane's writers make them: UUIDv7 carrying the event's time.
    const id = newEventId(BASE_TIME);
    return {
      id,
      time: BASE_TIME,
      actor,
      causationId: null,
      correlationId: id,
      key: body.type === 'ObjectCreated' ? `${body.object.kind}/${body.object.metadata.namespace ?? ''}/${body.object.metadata.name}` : '',
      body,
    };
  });
  await appendEnvelopes(log, bootstrap);
  let eventNumber = bootstrap.length;
  const counts = { desired: bootstrap.length, observed: 0 };
  const roundEnds: PositionVector[] = [];
  const partitionKey = partitionKeyOf(`Pod/${NAMESPACE}/${podName(0)}`);
  const batchSize = 10_000;

  for (let round = 0; round < options.rounds; round++) {
    const time = BASE_TIME + (round + 1) * 1_000;
    const { body, topic } = bodyOfRound(round, time);
    const template = encodeEvent({
      id: ID_PLACEHOLDER,
      time,
      actor: round === 0 || round % 10 === 0 ? actor : { type: round === 1 ? 'controller' : 'node', name: round === 1 ? 'scheduler' : 'node-agent' },
      causationId: null,
      correlationId: ID_PLACEHOLDER,
      key: `Pod/${NAMESPACE_PLACEHOLDER}/${NAME_PLACEHOLDER}`,
      body,
    });
    const namespaceAt = occurrences(template, NAMESPACE_PLACEHOLDER);
    const names = occurrences(template, NAME_PLACEHOLDER);
    const uids = occurrences(template, UID_PLACEHOLDER);
    const ids = occurrences(template, ID_PLACEHOLDER);
    const nodes = occurrences(template, NODE_PLACEHOLDER);
    for (let from = 0; from < options.pods; from += batchSize) {
      const records: NewRecord[] = [];
      for (let pod = from; pod < Math.min(options.pods, from + batchSize); pod++) {
        const value = Buffer.from(template);
        const name = podName(pod);
        const uid = podUid(pod);
        const id = newEventId(time);
        eventNumber++;
        const node = nodeName(pod % options.nodes);
        for (const at of names) value.write(name, at, 'latin1');
        for (const at of namespaceAt) value.write(namespaces[pod % namespaces.length]!, at, 'latin1');
        for (const at of uids) value.write(uid, at, 'latin1');
        for (const at of ids) value.write(id, at, 'latin1');
        for (const at of nodes) value.write(node, at, 'latin1');
        records.push({ key: partitionKey, value, timestamp: time });
      }
      await log.append(topic, records);
      counts[topic === 'observed' ? 'observed' : 'desired'] += records.length;
    }
    roundEnds.push({ desired: [counts.desired], observed: [counts.observed] });
    if ((round + 1) % 10 === 0) options.progress?.(`history: round ${round + 1}/${options.rounds} appended (${eventNumber} events)`);
  }
  return {
    events: eventNumber,
    seconds: (performance.now() - started) / 1000,
    roundEnds,
    podKeys: Array.from({ length: options.pods }, (_, i) => `Pod/${namespaces[i % namespaces.length]}/${podName(i)}`),
    namespaces,
  };
};
