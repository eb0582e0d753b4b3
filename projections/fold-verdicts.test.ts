/**
 * Every verdict the deterministic fold can give, in one table: each case writes the state
 * its event meets, writes the event, and says the verdict (type, reason, message) and what
 * the event left; a rejected event (and an accepted no-op) must leave the state exactly as
 * it was. The table runs on the fold alone (a state in memory), then on projections
 * following both real logs (embedded LMDB and Kafka) with 1 and 3 partitions, where a
 * replay from offset 0 must give the live projection's state hash. Then concurrent writers
 * race for one ClusterIP, NodePort, pod or node: exactly one wins, every projection agrees.
 *
 * The cases go through `foldEvent` over a `FoldState`, and through a log and the
 * projection's store, never through the fold's inner functions, so they stay valid
 * whatever the fold's inside becomes (a kind registry, say). One branch is out of reach
 * that way: `remove`'s "not a delete", which `foldEvent` never lets happen.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { partitionKeyOf, partitionOfKey } from '../log/partitioner.ts';
import type { EventLog } from '../log/port.ts';
import {
  encodeEvent,
  type Deployment,
  type EventBody,
  type EventEnvelope,
  type KubeObject,
  type Namespace,
  type Node,
  type Pod,
  type Service,
} from '../schemas/index.ts';
import { CONFIGURATION_ALLOCATION, foldEvent, LEGACY_FOLD_SETTINGS, type ChangeType, type DesiredRecord, type FoldSettings, type StatusRecord, type Verdict } from './fold.ts';
import type { FoldedTopic } from './positions.ts';
import { createProjection, type Projection } from './projection.ts';
import { replayLog } from './replay.ts';
import { topicNumber } from './store.ts';
import { LOG_ADAPTERS, makeEvent, memoryFoldState, openTestLog, projectionContents, type FoldContents, type LogAdapter } from './testing.ts';
import { keyOfBody } from './writer.ts';

/** What the fold said about one event, and the event. */
interface Judged {
  readonly verdict: Verdict;
  readonly change: ChangeType | null;
  readonly event: EventEnvelope;
}

/** Where a case runs: it writes events and reads the current state. */
interface Cluster {
  /** Appends `body` to `topic`, keyed `key` (default: the key the body is about), and returns the verdict. */
  write(topic: FoldedTopic, body: EventBody, key?: string): Promise<Judged>;
  desired(key: string): DesiredRecord | undefined;
  status(key: string): StatusRecord | undefined;
  contents(): FoldContents;
}

/** The fold alone, over a state in memory, with offsets counted per topic partition. */
const memoryCluster = (partitions = 1): Cluster => {
  const state = memoryFoldState(partitions);
  const next = new Map<string, number>();
  return {
    write: async (topic, body, key = keyOfBody(body)) => {
      const event = makeEvent(key, body);
      const stream = `${topic}/${partitionOfKey(key, partitions)}`;
      const offset = next.get(stream) ?? 0;
      next.set(stream, offset + 1);
      const outcome = foldEvent(state, event, topic, offset);
      return { verdict: outcome.verdict, change: outcome.change?.type ?? null, event };
    },
    desired: (key) => state.getDesired(key),
    status: (key) => state.getStatus(key),
    contents: () => state.contents(),
  };
};

/** Appends one event as the writers do (partition key from the object key) and returns where it landed. */
const appendEvent = async (log: EventLog, topic: FoldedTopic, event: EventEnvelope) => {
  const [position] = await log.append(topic, [{ key: partitionKeyOf(event.key), value: encodeEvent(event), timestamp: event.time }]);
  return position!;
};

/** The verdict and change `projection` recorded for `event`, appended at `position` of `topic`. */
const judgedBy = async (
  projection: Projection,
  topic: FoldedTopic,
  position: { partition: number; offset: number },
  event: EventEnvelope,
): Promise<Judged> => {
  const record = await projection.waitForEvent(topic, position.partition, position.offset, event.id);
  const entry = projection.store.entryAt(topicNumber(topic), position.partition, position.offset);
  return { verdict: record.verdict, change: entry?.change ?? null, event };
};

/** A projection following `log`: each write is appended to the log and judged when the projection folds it. */
const logCluster = (log: EventLog, projection: Projection): Cluster => ({
  write: async (topic, body, key = keyOfBody(body)) => {
    const event = makeEvent(key, body);
    return judgedBy(projection, topic, await appendEvent(log, topic, event), event);
  },
  desired: (key) => projection.store.desiredOf(key),
  status: (key) => projection.store.statusOf(key),
  contents: () => projectionContents(projection.store),
});

/**
 * Records `settings` in the cluster's log, as an apiserver does when a cluster starts: the
 * fold reads the service CIDR and NodePort range from the log, never from a flag.
 */
const configure = async (cluster: Cluster, settings: FoldSettings | undefined): Promise<void> => {
  if (!settings) return;
  const body: EventBody = { type: 'ClusterConfigured', serviceCIDR: settings.serviceCIDR, nodePortLow: settings.nodePortRange[0], nodePortHigh: settings.nodePortRange[1] };
  expect((await cluster.write('desired', body)).verdict).toEqual({ type: 'accepted' });
};

/**
 * The namespace of the cases: one whose events share a partition with every Pod, Node and
 * Service event for 1 and for 3 partitions, so the fold judges creates by it (it may judge
 * only by state in the event's own partition).
 */
const NS = ((): string => {
  for (let i = 0; ; i++) {
    const name = `team-${i}`;
    const shares = [1, 3].every((p) =>
      ['Pod', 'Service'].every((kind) => partitionOfKey(`Namespace//${name}`, p) === partitionOfKey(`${kind}/${name}/x`, p)),
    );
    if (shares) return name;
  }
})();

// Factories return a new object every call: the fold takes over the object of the event it folds.
const namespace = (name = NS): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const node = (name: string, allocatable: { cpu?: string; memory?: string; pods?: string } = {}): Node => {
  const resources = { cpu: '1', memory: '1Gi', pods: '110', ...allocatable };
  return { apiVersion: 'v1', kind: 'Node', metadata: { name }, status: { capacity: resources, allocatable: resources } };
};
const pod = (
  name: string,
  options: { cpu?: string; memory?: string; nodeName?: string; finalizers?: string[]; grace?: number } = {},
): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, ...(options.finalizers ? { finalizers: options.finalizers } : {}) },
  spec: {
    ...(options.nodeName ? { nodeName: options.nodeName } : {}),
    ...(options.grace === undefined ? {} : { terminationGracePeriodSeconds: options.grace }),
    containers: [{ name: 'main', image: 'logplane/echo', resources: { requests: { cpu: options.cpu ?? '500m', memory: options.memory ?? '64Mi' } } }],
  },
});
const service = (name: string, spec: Partial<Service['spec']> = {}, finalizers?: string[]): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: NS, ...(finalizers ? { finalizers } : {}) },
  spec: { ports: [{ port: 80, protocol: 'TCP' }], ...spec },
});
const deployment = (name: string, replicas: number): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: NS },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'logplane/echo' }] } },
  },
});

const podKey = (name: string): string => `Pod/${NS}/${name}`;
const serviceKey = (name: string): string => `Service/${NS}/${name}`;
/** How the fold names an object in messages, as kube does. */
const inNamespace = (kind: string, name: string): string => `${kind} "${name}" in namespace "${NS}"`;

const created = (object: KubeObject): EventBody => ({ type: 'ObjectCreated', object });
/** A create as the apiserver writes it from v6: a pod's node admits it (kubelet admission), not the create. */
const deferred = (object: KubeObject): EventBody => ({ type: 'ObjectCreated', object, nodeAdmission: 'Deferred' });
const updated = (
  object: KubeObject,
  expectedResourceVersion: string | null = null,
  subresource: 'status' | 'scale' | null = null,
): EventBody => ({ type: 'ObjectUpdated', object, expectedResourceVersion, subresource });
const deleted = (
  kind: 'Pod' | 'Service' | 'Namespace' | 'Deployment',
  name: string,
  extra: Partial<Extract<EventBody, { type: 'ObjectDeleted' }>> = {},
): EventBody => ({
  type: 'ObjectDeleted',
  kind,
  namespace: kind === 'Namespace' ? null : NS,
  name,
  expectedResourceVersion: null,
  uid: null,
  propagationPolicy: null,
  gracePeriodSeconds: null,
  ...extra,
});
const bound = (name: string, nodeName: string, expectedPodVersion: string | null = null): EventBody => ({
  type: 'PodBound',
  namespace: NS,
  name,
  node: nodeName,
  expectedPodVersion,
  rationale: { filtered: [], scores: [], feasibleNodes: 1, totalNodes: 1 },
});
const podStatus = (name: string, uid: string | null, phase = 'Running'): EventBody => ({
  type: 'PodStatusChanged',
  namespace: NS,
  name,
  uid,
  status: { phase },
});
const nodeStatus = (name: string): EventBody => ({
  type: 'NodeStatusChanged',
  name,
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
});
const heartbeat = (name: string): EventBody => ({ type: 'NodeHeartbeat', node: name, time: Date.UTC(2026, 0, 1) });

/** Writes `writes` (an object stands for its create) to the desired topic in order; each must be accepted (the case's given state). */
const given = async (cluster: Cluster, ...writes: (EventBody | KubeObject)[]): Promise<Judged[]> => {
  const judged: Judged[] = [];
  for (const write of writes) {
    const body = 'metadata' in write ? created(write) : write;
    const result = await cluster.write('desired', body);
    expect(result.verdict, `given ${body.type} of ${result.event.key}`).toEqual({ type: 'accepted' });
    judged.push(result);
  }
  return judged;
};

/** A copy of the current object of `key`, to write back changed (stored records are frozen). */
const copyOf = <T extends KubeObject = KubeObject>(cluster: Cluster, key: string): T => {
  const record = cluster.desired(key);
  expect(record, `${key} exists`).toBeDefined();
  return structuredClone(record!.object) as T;
};
const versionOf = (cluster: Cluster, key: string): number => {
  const record = cluster.desired(key);
  expect(record, `${key} exists`).toBeDefined();
  return record!.version;
};
const uidOf = (cluster: Cluster, key: string): string => copyOf(cluster, key).metadata.uid!;

const isoTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const rejected = (reason: Extract<Verdict, { type: 'rejected' }>['reason'], message: string): Verdict => ({ type: 'rejected', reason, message });
const accepted: Verdict = { type: 'accepted' };

const staleMessage = (key: string, expected: string, current: number): string =>
  `Operation cannot be fulfilled on ${key}: the object has been modified; please apply your changes to the latest version and try again (expected resourceVersion ${expected}, current desired version ${current})`;

/** One verdict of the fold: the state it meets, the event, and what must come of it. */
interface VerdictCase {
  readonly name: string;
  readonly settings?: FoldSettings;
  /** Writes the state the judged event meets (every write accepted). */
  readonly given?: (cluster: Cluster) => Promise<unknown>;
  /** The judged event: topic, body, and the key when it is not the one the body is about. */
  readonly when: (cluster: Cluster) => [FoldedTopic, EventBody] | [FoldedTopic, EventBody, string];
  /** The verdict, computed from the state before the event. */
  readonly verdict: Verdict | ((cluster: Cluster) => Verdict);
  readonly change: ChangeType | null;
  /** For accepted events: what the event left. Rejected ones are checked to leave the state as it was. */
  readonly then?: (cluster: Cluster, judged: Judged, before: FoldContents) => void;
}

/** Runs `c` on `cluster`: checks the verdict, the change, and that a rejection (or a no-op) left the state alone. */
const runCase = async (c: VerdictCase, cluster: Cluster): Promise<Judged> => {
  await configure(cluster, c.settings);
  await c.given?.(cluster);
  const verdict = typeof c.verdict === 'function' ? c.verdict(cluster) : c.verdict;
  const [topic, body, key] = c.when(cluster);
  const before = cluster.contents();
  const judged = await cluster.write(topic, body, key);
  expect(judged.verdict).toEqual(verdict);
  expect(judged.change).toBe(c.change);
  if (judged.verdict.type === 'rejected' || c.change === null) {
    expect(cluster.contents()).toEqual(before);
  } else {
    expect(cluster.contents()).not.toEqual(before);
  }
  c.then?.(cluster, judged, before);
  return judged;
};

const nodePortService = (name: string, nodePorts: number[]): Service =>
  service(name, { type: 'NodePort', ports: nodePorts.map((nodePort, i) => ({ port: 80 + i, protocol: 'TCP', nodePort })) });

/** Every rejection the fold can give. */
const REJECTIONS: readonly VerdictCase[] = [
  // Events on the wrong topic.
  ...(['PodStatusChanged', 'NodeStatusChanged', 'NodeHeartbeat'] as const).map(
    (type): VerdictCase => ({
      name: `${type} on the desired topic`,
      given: (c) => given(c, namespace(), node('n1'), pod('a')),
      when: (c) => [
        'desired',
        type === 'PodStatusChanged' ? podStatus('a', uidOf(c, podKey('a'))) : type === 'NodeStatusChanged' ? nodeStatus('n1') : heartbeat('n1'),
      ],
      verdict: rejected('Invalid', `${type} belongs on the observed or heartbeats topic, not desired`),
      change: null,
    }),
  ),
  ...([null, 'scale'] as const).map(
    (subresource): VerdictCase => ({
      name: `a ${subresource ?? 'spec'} update on the observed topic`,
      given: (c) => given(c, namespace(), deployment('web', 1)),
      when: (c) => ['observed', updated({ ...copyOf<Deployment>(c, `Deployment/${NS}/web`), spec: { ...deployment('web', 3).spec } }, null, subresource)],
      verdict: rejected('Invalid', 'only status updates belong on the observed topic'),
      change: null,
    }),
  ),
  ...(['ObjectCreated', 'ObjectDeleted', 'PodBound', 'NodeHeartbeat'] as const).map(
    (type): VerdictCase => ({
      name: `${type} on the observed topic`,
      given: (c) => given(c, namespace(), node('n1'), pod('a')),
      when: () => [
        'observed',
        type === 'ObjectCreated' ? created(pod('b')) : type === 'ObjectDeleted' ? deleted('Pod', 'a') : type === 'PodBound' ? bound('a', 'n1') : heartbeat('n1'),
      ],
      verdict: rejected('Invalid', `${type} belongs on the desired topic, not observed`),
      change: null,
    }),
  ),
  {
    name: 'a status update on the desired topic',
    given: (c) => given(c, namespace(), pod('a')),
    when: (c) => ['desired', updated({ ...copyOf<Pod>(c, podKey('a')), status: { phase: 'Running' } }, null, 'status')],
    verdict: rejected('Invalid', 'status updates belong on the observed topic'),
    change: null,
  },
  // Status updates.
  {
    name: 'a status update at a stale status version',
    given: async (c) => {
      await given(c, namespace(), pod('a'));
      for (const phase of ['Pending', 'Running']) {
        expect((await c.write('observed', updated({ ...copyOf<Pod>(c, podKey('a')), status: { phase } }, null, 'status'))).verdict).toEqual(accepted);
      }
    },
    when: (c) => ['observed', updated({ ...copyOf<Pod>(c, podKey('a')), status: { phase: 'Failed' } }, `${versionOf(c, podKey('a'))}.1`, 'status')],
    verdict: (c) =>
      rejected(
        'Conflict',
        `the object has been modified; please apply your changes to the latest version and try again (expected resourceVersion ${versionOf(c, podKey('a'))}.1, current status version 2)`,
      ),
    change: null,
  },
  {
    name: 'a status update at the status version of an earlier pod of the same name',
    given: async (c) => {
      await given(c, namespace(), pod('a'));
      expect((await c.write('observed', podStatus('a', uidOf(c, podKey('a'))))).verdict).toEqual(accepted);
      await given(c, deleted('Pod', 'a'), created(pod('a')));
    },
    when: (c) => ['observed', updated({ ...copyOf<Pod>(c, podKey('a')), status: { phase: 'Running' } }, `${versionOf(c, podKey('a'))}.1`, 'status')],
    verdict: (c) =>
      rejected(
        'Conflict',
        `the object has been modified; please apply your changes to the latest version and try again (expected resourceVersion ${versionOf(c, podKey('a'))}.1, current status version 0)`,
      ),
    change: null,
  },
  // Creates.
  {
    name: 'a create of a name that exists (namespaced)',
    given: (c) => given(c, namespace(), pod('a')),
    when: () => ['desired', created(pod('a'))],
    verdict: rejected('AlreadyExists', `${inNamespace('Pod', 'a')} already exists`),
    change: null,
  },
  {
    name: 'a create of a name that exists (cluster-scoped)',
    given: (c) => given(c, namespace()),
    when: () => ['desired', created(namespace())],
    verdict: rejected('AlreadyExists', `Namespace "${NS}" already exists`),
    change: null,
  },
  {
    name: 'a create in a namespace that does not exist',
    when: () => ['desired', created(pod('a'))],
    verdict: rejected('NotFound', `namespace "${NS}" not found`),
    change: null,
  },
  {
    name: 'a create in a namespace being terminated',
    given: (c) => given(c, namespace(), deleted('Namespace', NS)),
    when: () => ['desired', created(service('web'))],
    verdict: rejected('Forbidden', `unable to create new content in namespace ${NS} because it is being terminated`),
    change: null,
  },
  {
    name: 'a Service asking for a ClusterIP already taken',
    given: (c) => given(c, namespace(), created(service('web', { clusterIP: '127.96.0.7' }))),
    when: () => ['desired', created(service('other', { clusterIP: '127.96.0.7' }))],
    verdict: rejected('Invalid', 'spec.clusterIP: Invalid value: "127.96.0.7": provided IP is already allocated'),
    change: null,
  },
  ...(
    [
      ['outside the service CIDR', '10.1.2.3'],
      ['the network address of the service CIDR', '127.96.0.0'],
      ['the broadcast address of the service CIDR', '127.96.255.255'],
    ] as const
  ).map(
    ([what, ip]): VerdictCase => ({
      name: `a Service asking for a ClusterIP ${what}`,
      given: (c) => given(c, namespace()),
      when: () => ['desired', created(service('web', { clusterIP: ip }))],
      verdict: rejected(
        'Invalid',
        `spec.clusterIP: Invalid value: "${ip}": the provided IP (${ip}) is not in the valid range. The range of valid IPs is 127.96.0.0/16`,
      ),
      change: null,
    }),
  ),
  {
    name: 'a Service when no ClusterIP is left in the service CIDR',
    settings: { ...LEGACY_FOLD_SETTINGS, serviceCIDR: '10.0.0.0/30' },
    given: (c) => given(c, namespace(), created(service('one')), created(service('two'))),
    when: () => ['desired', created(service('three'))],
    verdict: rejected('Invalid', 'spec.clusterIP: no free address left in 10.0.0.0/30'),
    change: null,
  },
  {
    name: 'a Service asking for a NodePort another Service holds',
    given: (c) => given(c, namespace(), created(nodePortService('web', [30007]))),
    when: () => ['desired', created(nodePortService('other', [30007]))],
    verdict: rejected('Invalid', 'spec.ports[0].nodePort: Invalid value: 30007: provided port is already allocated'),
    change: null,
  },
  {
    name: 'a Service asking for one NodePort twice',
    given: (c) => given(c, namespace()),
    when: () => ['desired', created(nodePortService('web', [30007, 30007]))],
    verdict: rejected('Invalid', 'spec.ports[1].nodePort: Invalid value: 30007: provided port is already allocated'),
    change: null,
  },
  {
    name: 'a NodePort Service when no NodePort is left',
    settings: { ...LEGACY_FOLD_SETTINGS, nodePortRange: [30000, 30001] },
    given: (c) => given(c, namespace(), created(service('web', { type: 'NodePort', ports: [{ port: 80, protocol: 'TCP' }, { port: 81, protocol: 'TCP' }] }))),
    when: () => ['desired', created(service('other', { type: 'LoadBalancer' }))],
    verdict: rejected('Invalid', 'spec.ports.nodePort: no free node port left'),
    change: null,
  },
  {
    name: 'a pod created on a node that does not exist',
    given: (c) => given(c, namespace()),
    when: () => ['desired', created(pod('a', { nodeName: 'n9' }))],
    verdict: rejected('NotFound', 'node "n9" not found'),
    change: null,
  },
  {
    name: 'a pod created on a node without room for it',
    given: (c) => given(c, namespace(), created(node('n1'))),
    when: () => ['desired', created(pod('a', { cpu: '1500m', nodeName: 'n1' }))],
    verdict: rejected('Unschedulable', 'node "n1" cannot admit pod a: Insufficient cpu'),
    change: null,
  },
  // Updates.
  {
    name: 'an update of an object that does not exist',
    given: (c) => given(c, namespace()),
    when: () => ['desired', updated(pod('a'))],
    verdict: rejected('NotFound', `${inNamespace('Pod', 'a')} not found`),
    change: null,
  },
  {
    name: 'an update naming another uid (the object was deleted and recreated)',
    given: (c) => given(c, namespace(), pod('a')),
    when: (c) => {
      const current = copyOf<Pod>(c, podKey('a'));
      return ['desired', updated({ ...current, metadata: { ...current.metadata, uid: 'uid-of-an-earlier-pod', labels: { v: '2' } } })];
    },
    verdict: rejected('Conflict', `${inNamespace('Pod', 'a')}: uid precondition failed (object was deleted and recreated)`),
    change: null,
  },
  {
    name: 'an update at a stale resourceVersion',
    given: async (c) => {
      await given(c, namespace(), pod('a'));
      const current = copyOf<Pod>(c, podKey('a'));
      await given(c, updated({ ...current, metadata: { ...current.metadata, labels: { v: '2' } } }));
    },
    when: (c) => ['desired', updated({ ...copyOf(c, podKey('a')), metadata: { name: 'a', namespace: NS, labels: { v: '3' } } }, `${versionOf(c, podKey('a')) - 1}.0`)],
    verdict: (c) => rejected('Conflict', staleMessage(inNamespace('Pod', 'a'), `${versionOf(c, podKey('a')) - 1}.0`, versionOf(c, podKey('a')))),
    change: null,
  },
  {
    name: 'a Service update claiming a NodePort another Service holds',
    given: (c) => given(c, namespace(), created(nodePortService('web', [30007])), created(service('other'))),
    when: (c) => {
      const current = copyOf<Service>(c, serviceKey('other'));
      return ['desired', updated({ ...current, spec: { ...current.spec, type: 'NodePort', ports: [{ port: 80, protocol: 'TCP', nodePort: 30007 }] } })];
    },
    verdict: rejected('Invalid', 'spec.ports[0].nodePort: Invalid value: 30007: provided port is already allocated'),
    change: null,
  },
  {
    name: 'a Service update to NodePort when no NodePort is left',
    settings: { ...LEGACY_FOLD_SETTINGS, nodePortRange: [30000, 30000] },
    given: (c) => given(c, namespace(), created(service('web', { type: 'NodePort' })), created(service('other'))),
    when: (c) => {
      const current = copyOf<Service>(c, serviceKey('other'));
      return ['desired', updated({ ...current, spec: { ...current.spec, type: 'NodePort' } })];
    },
    verdict: rejected('Invalid', 'spec.ports.nodePort: no free node port left'),
    change: null,
  },
  // Deletes.
  {
    name: 'a delete of an object that does not exist',
    given: (c) => given(c, namespace()),
    when: () => ['desired', deleted('Pod', 'a')],
    verdict: rejected('NotFound', `${inNamespace('Pod', 'a')} not found`),
    change: null,
  },
  {
    name: 'a delete naming another uid (the object was deleted and recreated)',
    given: (c) => given(c, namespace(), pod('a')),
    when: () => ['desired', deleted('Pod', 'a', { uid: 'uid-of-an-earlier-pod' })],
    verdict: rejected('Conflict', `${inNamespace('Pod', 'a')}: uid precondition failed (object was deleted and recreated)`),
    change: null,
  },
  {
    name: 'a delete at a stale resourceVersion',
    given: async (c) => {
      await given(c, namespace(), pod('a'));
      const current = copyOf<Pod>(c, podKey('a'));
      await given(c, updated({ ...current, metadata: { ...current.metadata, labels: { v: '2' } } }));
    },
    when: (c) => ['desired', deleted('Pod', 'a', { expectedResourceVersion: `${versionOf(c, podKey('a')) - 1}.0` })],
    verdict: (c) => rejected('Conflict', staleMessage(inNamespace('Pod', 'a'), `${versionOf(c, podKey('a')) - 1}.0`, versionOf(c, podKey('a')))),
    change: null,
  },
  // Bindings.
  {
    name: 'a bind of a pod that does not exist',
    given: (c) => given(c, namespace(), created(node('n1'))),
    when: () => ['desired', bound('a', 'n1')],
    verdict: rejected('NotFound', `${inNamespace('Pod', 'a')} not found`),
    change: null,
  },
  {
    name: 'a bind keyed at an object that is not a pod',
    given: (c) => given(c, namespace(), created(node('n1')), created(service('web'))),
    when: () => ['desired', bound('web', 'n1'), serviceKey('web')],
    verdict: rejected('NotFound', `${inNamespace('Service', 'web')} not found`),
    change: null,
  },
  {
    name: 'a bind of a pod already bound',
    given: (c) => given(c, namespace(), created(node('n1')), created(node('n2')), pod('a'), bound('a', 'n1')),
    when: () => ['desired', bound('a', 'n2')],
    verdict: rejected('Conflict', 'pod a is already assigned to node "n1"'),
    change: null,
  },
  {
    name: 'a bind of a pod being deleted',
    given: (c) => given(c, namespace(), created(node('n1')), created(pod('a', { finalizers: ['example.com/hold'] })), deleted('Pod', 'a')),
    when: () => ['desired', bound('a', 'n1')],
    verdict: rejected('Conflict', 'pod a is being deleted'),
    change: null,
  },
  {
    name: 'a bind at a stale pod version',
    given: async (c) => {
      await given(c, namespace(), created(node('n1')), pod('a'));
      const current = copyOf<Pod>(c, podKey('a'));
      await given(c, updated({ ...current, metadata: { ...current.metadata, labels: { v: '2' } } }));
    },
    when: (c) => ['desired', bound('a', 'n1', `${versionOf(c, podKey('a')) - 1}.0`)],
    verdict: (c) => rejected('Conflict', staleMessage(inNamespace('Pod', 'a'), `${versionOf(c, podKey('a')) - 1}.0`, versionOf(c, podKey('a')))),
    change: null,
  },
  {
    name: 'a bind to a node that does not exist',
    given: (c) => given(c, namespace(), created(node('n1')), pod('a')),
    when: () => ['desired', bound('a', 'n9')],
    verdict: rejected('NotFound', 'node "n9" not found'),
    change: null,
  },
  ...(
    [
      ['cpu', { cpu: '1' }, { cpu: '600m' }, 'Insufficient cpu'],
      ['memory', { memory: '1Gi' }, { memory: '600Mi' }, 'Insufficient memory'],
      ['pods', { pods: '1' }, {}, 'Too many pods'],
    ] as const
  ).map(
    ([resource, allocatable, request, reason]): VerdictCase => ({
      name: `a bind to a node out of ${resource}`,
      given: (c) => given(c, namespace(), created(node('n1', allocatable)), created(pod('a', request)), created(pod('b', request)), bound('a', 'n1')),
      when: () => ['desired', bound('b', 'n1')],
      verdict: rejected('Unschedulable', `node "n1" cannot admit pod b: ${reason}`),
      change: null,
    }),
  ),
];

const statusUpdate = (cluster: Cluster, key: string, phase: string, expected: string | null = null): EventBody =>
  updated({ ...copyOf<Pod>(cluster, key), status: { phase } }, expected, 'status');
const relabel = <T extends KubeObject>(object: T, labels: Record<string, string>): T => ({ ...object, metadata: { ...object.metadata, labels } });
const objectOf = <T extends KubeObject = KubeObject>(cluster: Cluster, key: string): T | undefined => cluster.desired(key)?.object as T | undefined;
const podUsage500m = { cpuMilli: 500, memoryBytes: 64 * 2 ** 20, pods: 1 };

/** Every accepted branch that changes state (and the accepted no-ops, which must not). */
const ACCEPTANCES: readonly VerdictCase[] = [
  // Observed.
  {
    name: 'a pod status from its node',
    given: (c) => given(c, namespace(), pod('a')),
    when: (c) => ['observed', podStatus('a', uidOf(c, podKey('a')))],
    verdict: accepted,
    change: 'MODIFIED',
    then: (c) => expect(c.status(podKey('a'))).toEqual({ uid: uidOf(c, podKey('a')), status: { phase: 'Running' }, version: 1 }),
  },
  {
    name: 'a node status',
    given: (c) => given(c, node('n1')),
    when: () => ['observed', nodeStatus('n1')],
    verdict: accepted,
    change: 'MODIFIED',
    then: (c) => expect(c.status('Node//n1')).toEqual({ uid: null, status: { conditions: [{ type: 'Ready', status: 'True' }] }, version: 1 }),
  },
  {
    name: 'a status update at the current status version',
    given: async (c) => {
      await given(c, namespace(), pod('a'));
      expect((await c.write('observed', statusUpdate(c, podKey('a'), 'Pending'))).verdict).toEqual(accepted);
    },
    when: (c) => ['observed', statusUpdate(c, podKey('a'), 'Succeeded', `${versionOf(c, podKey('a'))}.1`)],
    verdict: accepted,
    change: 'MODIFIED',
    then: (c) => expect(c.status(podKey('a'))).toEqual({ uid: uidOf(c, podKey('a')), status: { phase: 'Succeeded' }, version: 2 }),
  },
  {
    name: 'a status update of a recreated pod at status version 0 (the earlier pod’s status does not count)',
    given: async (c) => {
      await given(c, namespace(), pod('a'));
      expect((await c.write('observed', podStatus('a', uidOf(c, podKey('a'))))).verdict).toEqual(accepted);
      await given(c, deleted('Pod', 'a'), pod('a'));
    },
    when: (c) => ['observed', statusUpdate(c, podKey('a'), 'Running', `${versionOf(c, podKey('a'))}.0`)],
    verdict: accepted,
    change: 'MODIFIED',
    then: (c) => expect(c.status(podKey('a'))).toEqual({ uid: uidOf(c, podKey('a')), status: { phase: 'Running' }, version: 2 }),
  },
  // Creates.
  {
    name: 'a create: the fold sets uid, creationTimestamp and generation, and drops what only it may set',
    given: (c) => given(c, namespace()),
    when: () => {
      const object = pod('a');
      object.metadata = { ...object.metadata, resourceVersion: '99.0', generation: 7, deletionTimestamp: '2020-01-01T00:00:00Z' };
      return ['desired', created(object)];
    },
    verdict: accepted,
    change: 'ADDED',
    then: (c, { event }) => {
      const record = c.desired(podKey('a'));
      expect(record?.version).toBe(2);
      expect(record?.object.metadata).toEqual({ name: 'a', namespace: NS, uid: event.id, creationTimestamp: isoTime(event.time), generation: 1 });
    },
  },
  {
    name: 'a create that brings its own uid keeps it',
    given: (c) => given(c, namespace()),
    when: () => ['desired', created({ ...pod('a'), metadata: { name: 'a', namespace: NS, uid: 'uid-from-the-writer' } })],
    verdict: accepted,
    change: 'ADDED',
    then: (c) => expect(uidOf(c, podKey('a'))).toBe('uid-from-the-writer'),
  },
  {
    name: 'a Service gets the first free ClusterIP',
    given: (c) => given(c, namespace(), service('web', { clusterIP: '127.96.0.1' })),
    when: () => ['desired', created(service('other'))],
    verdict: accepted,
    change: 'ADDED',
    then: (c, _, before) => {
      expect(objectOf<Service>(c, serviceKey('other'))?.spec).toMatchObject({ clusterIP: '127.96.0.2', clusterIPs: ['127.96.0.2'] });
      expect(c.contents().allocations).toEqual({ ...before.allocations, 'ip/127.96.0.2': serviceKey('other') });
    },
  },
  {
    name: 'a Service gets the free ClusterIP it asks for',
    given: (c) => given(c, namespace()),
    when: () => ['desired', created(service('web', { clusterIP: '127.96.0.42' }))],
    verdict: accepted,
    change: 'ADDED',
    then: (c) => {
      expect(objectOf<Service>(c, serviceKey('web'))?.spec.clusterIPs).toEqual(['127.96.0.42']);
      expect(c.contents().allocations).toEqual({ 'ip/127.96.0.42': serviceKey('web') });
    },
  },
  {
    name: 'a Service gets the last address of the service CIDR when it asks for it',
    settings: { ...LEGACY_FOLD_SETTINGS, serviceCIDR: '10.0.0.0/30' },
    given: (c) => given(c, namespace()),
    when: () => ['desired', created(service('web', { clusterIP: '10.0.0.2' }))],
    verdict: accepted,
    change: 'ADDED',
    then: (c) => expect(c.contents().allocations).toEqual({ [CONFIGURATION_ALLOCATION]: expect.any(String), 'ip/10.0.0.2': serviceKey('web') }),
  },
  {
    name: 'a headless Service gets no ClusterIP',
    given: (c) => given(c, namespace()),
    when: () => ['desired', created(service('web', { clusterIP: 'None' }))],
    verdict: accepted,
    change: 'ADDED',
    then: (c) => {
      expect(objectOf<Service>(c, serviceKey('web'))?.spec.clusterIP).toBe('None');
      expect(c.contents().allocations).toEqual({});
    },
  },
  {
    name: 'a NodePort Service gets the lowest free NodePort for each port',
    given: (c) => given(c, namespace(), nodePortService('web', [30000])),
    when: () => ['desired', created(service('other', { type: 'NodePort', ports: [{ port: 80, protocol: 'TCP' }, { port: 81, protocol: 'TCP' }] }))],
    verdict: accepted,
    change: 'ADDED',
    then: (c) => {
      const key = serviceKey('other');
      expect(objectOf<Service>(c, key)?.spec.ports?.map((p) => p.nodePort)).toEqual([30001, 30002]);
      expect(c.contents().allocations).toMatchObject({ 'nodeport/30000': serviceKey('web'), 'nodeport/30001': key, 'nodeport/30002': key });
    },
  },
  {
    name: 'a LoadBalancer Service gets a NodePort too',
    given: (c) => given(c, namespace()),
    when: () => ['desired', created(service('lb', { type: 'LoadBalancer' }))],
    verdict: accepted,
    change: 'ADDED',
    then: (c) => expect(c.contents().allocations).toEqual({ 'ip/127.96.0.1': serviceKey('lb'), 'nodeport/30000': serviceKey('lb') }),
  },
  {
    name: 'a pod created on a node is charged to it',
    given: (c) => given(c, namespace(), node('n1')),
    when: () => ['desired', created(pod('a', { nodeName: 'n1' }))],
    verdict: accepted,
    change: 'ADDED',
    then: (c) => expect(c.contents().usage).toEqual({ n1: podUsage500m }),
  },
  // Kubelet admission of v6 creates (node-admission.ts): the node admits, never the create.
  {
    name: 'a deferred pod naming a node that does not exist is accepted and waits for it, uncharged',
    given: (c) => given(c, namespace()),
    when: () => ['desired', deferred(pod('a', { nodeName: 'n9' }))],
    verdict: accepted,
    change: 'ADDED',
    then: (c) => {
      expect(objectOf<Pod>(c, podKey('a'))?.spec?.nodeName).toBe('n9');
      expect(c.contents().usage).toEqual({});
      expect(c.contents().allocations).toEqual({ [`admission/${podKey('a')}`]: JSON.stringify({ state: 'waiting', node: 'n9' }), 'waiting/n9': JSON.stringify([podKey('a')]) });
    },
  },
  {
    name: 'a node registering admits the pods waiting for it in log order, each that still fits',
    given: (c) =>
      given(c, namespace(), deferred(pod('a', { cpu: '1500m', nodeName: 'n1' })), deferred(pod('b', { cpu: '1', nodeName: 'n1' })), deferred(pod('c', { cpu: '400m', nodeName: 'n1' }))),
    when: () => ['desired', created(node('n1', { cpu: '2' }))],
    verdict: accepted,
    change: 'ADDED',
    then: (c) => {
      expect(c.contents().usage).toEqual({ n1: { cpuMilli: 1900, memoryBytes: 2 * 64 * 2 ** 20, pods: 2 } });
      expect(c.contents().allocations).toEqual({
        [`admission/${podKey('b')}`]: JSON.stringify({
          state: 'rejected',
          node: 'n1',
          reason: 'OutOfcpu',
          message: "Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000",
        }),
      });
    },
  },
  {
    name: 'a deferred pod naming a node without room is accepted, rejected by the node and charged nothing',
    given: (c) => given(c, namespace(), node('n1', { pods: '1' }), created(pod('b', { nodeName: 'n1' }))),
    when: () => ['desired', deferred(pod('a', { nodeName: 'n1' }))],
    verdict: accepted,
    change: 'ADDED',
    then: (c) => {
      expect(c.contents().usage).toEqual({ n1: podUsage500m });
      expect(JSON.parse(c.contents().allocations[`admission/${podKey('a')}`] ?? 'null')).toMatchObject({ state: 'rejected', reason: 'OutOfpods' });
    },
  },
  {
    name: 'a deferred pod naming a node with room is charged to it at once',
    given: (c) => given(c, namespace(), node('n1')),
    when: () => ['desired', deferred(pod('a', { nodeName: 'n1' }))],
    verdict: accepted,
    change: 'ADDED',
    then: (c) => {
      expect(c.contents().usage).toEqual({ n1: podUsage500m });
      expect(c.contents().allocations).toEqual({});
    },
  },
  {
    name: 'a pod waiting for its node is deleted at once (no node runs it) and leaves no admission behind',
    given: (c) => given(c, namespace(), deferred(pod('a', { nodeName: 'n9' })), deferred(pod('b', { nodeName: 'n9' }))),
    when: () => ['desired', deleted('Pod', 'a')],
    verdict: accepted,
    change: 'DELETED',
    then: (c) => {
      expect(c.desired(podKey('a'))).toBeUndefined();
      expect(c.contents().allocations).toEqual({ [`admission/${podKey('b')}`]: JSON.stringify({ state: 'waiting', node: 'n9' }), 'waiting/n9': JSON.stringify([podKey('b')]) });
    },
  },
  {
    name: 'a pod its node rejected is deleted at once and takes nothing from the node’s usage',
    given: (c) => given(c, namespace(), node('n1'), created(pod('b', { nodeName: 'n1' })), deferred(pod('a', { cpu: '1500m', nodeName: 'n1' }))),
    when: () => ['desired', deleted('Pod', 'a')],
    verdict: accepted,
    change: 'DELETED',
    then: (c) => {
      expect(c.contents().usage).toEqual({ n1: podUsage500m });
      expect(c.contents().allocations).toEqual({});
    },
  },
  // Updates.
  {
    name: 'an update of the spec at the current resourceVersion: the generation goes up, identity stays the fold’s',
    given: (c) => given(c, namespace(), deployment('web', 1)),
    when: (c) => {
      const next = deployment('web', 2);
      next.metadata = { ...next.metadata, uid: uidOf(c, `Deployment/${NS}/web`), creationTimestamp: '2020-01-01T00:00:00Z', generation: 9, labels: { v: '2' } };
      return ['desired', updated(next, `${versionOf(c, `Deployment/${NS}/web`)}.0`)];
    },
    verdict: accepted,
    change: 'MODIFIED',
    then: (c, _, before) => {
      const key = `Deployment/${NS}/web`;
      const earlier = before.desired[key]!.object;
      expect(c.desired(key)?.object).toMatchObject({ spec: { replicas: 2 }, metadata: { ...earlier.metadata, generation: 2, labels: { v: '2' } } });
    },
  },
  {
    name: 'an update of metadata only keeps the generation',
    given: (c) => given(c, namespace(), deployment('web', 1)),
    when: (c) => ['desired', updated(relabel(copyOf(c, `Deployment/${NS}/web`), { v: '2' }))],
    verdict: accepted,
    change: 'MODIFIED',
    then: (c) => expect(c.desired(`Deployment/${NS}/web`)?.object.metadata).toMatchObject({ generation: 1, labels: { v: '2' } }),
  },
  {
    name: 'an update cannot bind a pod',
    given: (c) => given(c, namespace(), node('n1'), pod('a')),
    when: (c) => {
      const current = copyOf<Pod>(c, podKey('a'));
      return ['desired', updated(relabel({ ...current, spec: { ...current.spec, nodeName: 'n1' } }, { v: '2' }))];
    },
    verdict: accepted,
    change: 'MODIFIED',
    then: (c) => {
      expect(objectOf<Pod>(c, podKey('a'))?.spec?.nodeName).toBeUndefined();
      expect(c.contents().usage).toEqual({});
    },
  },
  {
    name: 'an update cannot move a bound pod',
    given: (c) => given(c, namespace(), node('n1'), node('n2'), pod('a'), bound('a', 'n1')),
    when: (c) => {
      const current = copyOf<Pod>(c, podKey('a'));
      return ['desired', updated(relabel({ ...current, spec: { ...current.spec, nodeName: 'n2' } }, { v: '2' }))];
    },
    verdict: accepted,
    change: 'MODIFIED',
    then: (c) => {
      expect(objectOf<Pod>(c, podKey('a'))?.spec?.nodeName).toBe('n1');
      expect(c.contents().usage).toEqual({ n1: podUsage500m });
    },
  },
  {
    name: 'a Service update keeps its ClusterIP',
    given: (c) => given(c, namespace(), service('web')),
    when: (c) => {
      const current = copyOf<Service>(c, serviceKey('web'));
      return ['desired', updated(relabel({ ...current, spec: { ...current.spec, clusterIP: '127.96.0.99', clusterIPs: ['127.96.0.99'] } }, { v: '2' }))];
    },
    verdict: accepted,
    change: 'MODIFIED',
    then: (c) => {
      expect(objectOf<Service>(c, serviceKey('web'))?.spec).toMatchObject({ clusterIP: '127.96.0.1', clusterIPs: ['127.96.0.1'] });
      expect(c.contents().allocations).toEqual({ 'ip/127.96.0.1': serviceKey('web') });
    },
  },
  {
    name: 'a Service update to type ClusterIP releases its NodePort',
    given: (c) => given(c, namespace(), nodePortService('web', [30007])),
    when: (c) => {
      const current = copyOf<Service>(c, serviceKey('web'));
      return ['desired', updated({ ...current, spec: { ...current.spec, type: 'ClusterIP', ports: [{ port: 80, protocol: 'TCP' }] } })];
    },
    verdict: accepted,
    change: 'MODIFIED',
    then: (c) => expect(c.contents().allocations).toEqual({ 'ip/127.96.0.1': serviceKey('web') }),
  },
  {
    name: 'a scale update sets the replicas and nothing else',
    given: (c) => given(c, namespace(), deployment('web', 1)),
    when: () => ['desired', updated(relabel(deployment('web', 5), { ignored: 'yes' }), null, 'scale')],
    verdict: accepted,
    change: 'MODIFIED',
    then: (c, _, before) => {
      const key = `Deployment/${NS}/web`;
      const earlier = before.desired[key]!.object as Deployment;
      expect(c.desired(key)?.object).toEqual({ ...earlier, metadata: { ...earlier.metadata, generation: 2 }, spec: { ...earlier.spec, replicas: 5 } });
    },
  },
  {
    name: 'removing the last finalizer of a Service being deleted deletes it and frees its addresses',
    given: (c) => given(c, namespace(), service('web', { type: 'NodePort' }, ['example.com/hold']), deleted('Service', 'web')),
    when: (c) => {
      const current = copyOf<Service>(c, serviceKey('web'));
      return ['desired', updated({ ...current, metadata: { ...current.metadata, finalizers: [] } })];
    },
    verdict: accepted,
    change: 'DELETED',
    then: (c) => {
      expect(c.desired(serviceKey('web'))).toBeUndefined();
      expect(c.contents().allocations).toEqual({});
    },
  },
  // Deletes.
  {
    name: 'a delete without finalizers deletes at once and frees the Service’s addresses',
    given: (c) => given(c, namespace(), nodePortService('web', [30007])),
    when: () => ['desired', deleted('Service', 'web')],
    verdict: accepted,
    change: 'DELETED',
    then: (c) => {
      expect(c.desired(serviceKey('web'))).toBeUndefined();
      expect(c.contents().allocations).toEqual({});
    },
  },
  {
    name: 'a delete at the current resourceVersion and uid',
    given: (c) => given(c, namespace(), pod('a')),
    when: (c) => ['desired', deleted('Pod', 'a', { uid: uidOf(c, podKey('a')), expectedResourceVersion: `${versionOf(c, podKey('a'))}.0` })],
    verdict: accepted,
    change: 'DELETED',
    then: (c) => expect(c.desired(podKey('a'))).toBeUndefined(),
  },
  {
    name: 'a delete of an object with finalizers marks it deleted and keeps it',
    given: (c) => given(c, namespace(), service('web', {}, ['example.com/hold'])),
    when: () => ['desired', deleted('Service', 'web')],
    verdict: accepted,
    change: 'MODIFIED',
    then: (c, { event }) => {
      expect(objectOf(c, serviceKey('web'))?.metadata).toMatchObject({
        finalizers: ['example.com/hold'],
        deletionTimestamp: isoTime(event.time),
        deletionGracePeriodSeconds: 0,
      });
      expect(c.contents().allocations).toEqual({ 'ip/127.96.0.1': serviceKey('web') });
    },
  },
  {
    name: 'a delete of a namespace makes it Terminating, held by the namespace finalizer',
    given: (c) => given(c, namespace()),
    when: () => ['desired', deleted('Namespace', NS)],
    verdict: accepted,
    change: 'MODIFIED',
    then: (c, { event }) =>
      expect(objectOf(c, `Namespace//${NS}`)).toMatchObject({
        metadata: { finalizers: ['kubernetes'], deletionTimestamp: isoTime(event.time) },
        status: { phase: 'Terminating' },
      }),
  },
  ...(
    [
      ['Foreground', 'foregroundDeletion'],
      ['Orphan', 'orphan'],
    ] as const
  ).map(
    ([policy, finalizer]): VerdictCase => ({
      name: `a ${policy} delete adds the ${finalizer} finalizer`,
      given: (c) => given(c, namespace(), deployment('web', 1)),
      when: () => ['desired', deleted('Deployment', 'web', { propagationPolicy: policy })],
      verdict: accepted,
      change: 'MODIFIED',
      then: (c) => expect(objectOf(c, `Deployment/${NS}/web`)?.metadata.finalizers).toEqual([finalizer]),
    }),
  ),
  ...(
    [
      ['its terminationGracePeriodSeconds', 10, null, 10],
      ['30 s by default', undefined, null, 30],
      ['the grace period the delete asks for', 10, 3, 3],
    ] as const
  ).map(
    ([what, podGrace, requested, expected]): VerdictCase => ({
      name: `a delete of a bound pod waits ${what} for its node`,
      given: (c) => given(c, namespace(), node('n1'), pod('a', podGrace === undefined ? {} : { grace: podGrace }), bound('a', 'n1')),
      when: () => ['desired', deleted('Pod', 'a', { gracePeriodSeconds: requested })],
      verdict: accepted,
      change: 'MODIFIED',
      then: (c, { event }) => {
        expect(objectOf(c, podKey('a'))?.metadata).toMatchObject({
          deletionGracePeriodSeconds: expected,
          deletionTimestamp: isoTime(event.time + expected * 1000),
        });
        expect(c.contents().usage).toEqual({ n1: podUsage500m });
      },
    }),
  ),
  {
    name: 'the node’s grace-0 delete of a terminating pod deletes it and frees the node',
    given: (c) => given(c, namespace(), node('n1'), pod('a'), bound('a', 'n1'), deleted('Pod', 'a')),
    when: (c) => ['desired', deleted('Pod', 'a', { uid: uidOf(c, podKey('a')), gracePeriodSeconds: 0 })],
    verdict: accepted,
    change: 'DELETED',
    then: (c) => {
      expect(c.desired(podKey('a'))).toBeUndefined();
      expect(c.contents().usage).toEqual({ n1: { cpuMilli: 0, memoryBytes: 0, pods: 0 } });
    },
  },
  {
    name: 'a delete of a terminating pod with a shorter grace period shortens it',
    given: (c) => given(c, namespace(), node('n1'), pod('a'), bound('a', 'n1'), deleted('Pod', 'a')),
    when: () => ['desired', deleted('Pod', 'a', { gracePeriodSeconds: 5 })],
    verdict: accepted,
    change: 'MODIFIED',
    then: (c, { event }) =>
      expect(objectOf(c, podKey('a'))?.metadata).toMatchObject({ deletionGracePeriodSeconds: 5, deletionTimestamp: isoTime(event.time + 5_000) }),
  },
  {
    name: 'a delete of a terminating pod with a longer grace period changes nothing',
    given: (c) => given(c, namespace(), node('n1'), pod('a', { grace: 10 }), bound('a', 'n1'), deleted('Pod', 'a')),
    when: () => ['desired', deleted('Pod', 'a', { gracePeriodSeconds: 60 })],
    verdict: accepted,
    change: null,
  },
  {
    name: 'a second delete of an object being deleted changes nothing',
    given: (c) => given(c, namespace(), service('web', {}, ['example.com/hold']), deleted('Service', 'web')),
    when: () => ['desired', deleted('Service', 'web', { gracePeriodSeconds: 0 })],
    verdict: accepted,
    change: null,
  },
  // Bindings.
  {
    name: 'a bind at the current pod version charges the node',
    given: (c) => given(c, namespace(), node('n1'), pod('a')),
    when: (c) => ['desired', bound('a', 'n1', `${versionOf(c, podKey('a'))}.0`)],
    verdict: accepted,
    change: 'MODIFIED',
    then: (c) => {
      expect(objectOf<Pod>(c, podKey('a'))?.spec?.nodeName).toBe('n1');
      expect(c.contents().usage).toEqual({ n1: podUsage500m });
    },
  },
];

const VERDICTS: readonly VerdictCase[] = [...REJECTIONS, ...ACCEPTANCES];

/** Directories, logs and projections a test opened: closed (projections first) and removed after it. */
const opened: { close: () => Promise<void> }[] = [];
const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-verdicts-'));
  dirs.push(dir);
  return dir;
};
afterEach(async () => {
  for (const resource of opened.splice(0).reverse()) await resource.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const endOf = async (log: EventLog) => ({ desired: await log.endOffsets('desired'), observed: await log.endOffsets('observed') });

describe('the fold alone', () => {
  it('names every case once (test titles are how a failing verdict is found)', () => {
    const names = VERDICTS.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it.each(VERDICTS)('$name', async (c) => {
    await runCase(c, memoryCluster());
  });

  it('a Service create rejected for its NodePort leaves its ClusterIP to the next create', async () => {
    const c = memoryCluster();
    await given(c, namespace(), nodePortService('web', [30007]));
    expect((await c.write('desired', created(nodePortService('clash', [30007])))).verdict.type).toBe('rejected');
    await given(c, service('next'));
    expect(objectOf<Service>(c, serviceKey('next'))?.spec.clusterIP).toBe('127.96.0.2');
  });

  it('a Service create rejected when no NodePort is left leaves the ClusterIP it asked for to the next create', async () => {
    const c = memoryCluster();
    await configure(c, { ...LEGACY_FOLD_SETTINGS, nodePortRange: [30000, 30000] });
    await given(c, namespace(), service('web', { type: 'NodePort' }));
    expect((await c.write('desired', created(service('clash', { type: 'NodePort', clusterIP: '127.96.0.9' })))).verdict.type).toBe('rejected');
    await given(c, service('next', { clusterIP: '127.96.0.9' }));
    expect(c.contents().allocations['ip/127.96.0.9']).toBe(serviceKey('next'));
  });

  it('a Service create rejected for its ClusterIP leaves the NodePort it asked for to the next create', async () => {
    const c = memoryCluster();
    await given(c, namespace(), service('web', { clusterIP: '127.96.0.7' }));
    expect((await c.write('desired', created(service('clash', { type: 'NodePort', clusterIP: '127.96.0.7', ports: [{ port: 80, nodePort: 30009 }] })))).verdict.type).toBe('rejected');
    await given(c, nodePortService('next', [30009]));
    expect(c.contents().allocations['nodeport/30009']).toBe(serviceKey('next'));
  });

  it('with 3 partitions, a create is not judged by a namespace in another partition (it may judge only by its own)', async () => {
    const c = memoryCluster(3);
    const elsewhere = ['default', 'other', 'more'].find((name) => partitionOfKey(`Namespace//${name}`, 3) !== partitionOfKey(`Pod/${name}/a`, 3));
    if (elsewhere === undefined) throw new Error('every candidate namespace shares the pods’ partition');
    const judged = await c.write('desired', created({ ...pod('a'), metadata: { name: 'a', namespace: elsewhere } }));
    expect(judged.verdict).toEqual(accepted);
    await expect(memoryCluster(1).write('desired', created({ ...pod('a'), metadata: { name: 'a', namespace: elsewhere } }))).resolves.toMatchObject({
      verdict: rejected('NotFound', `namespace "${elsewhere}" not found`),
    });
  });

  it('a pod rejected by its node charges nothing: a pod that fills the node exactly still fits', async () => {
    const c = memoryCluster();
    await given(c, namespace(), node('n1'), pod('b', { cpu: '1', memory: '1Gi' }));
    expect((await c.write('desired', created(pod('a', { cpu: '1500m', nodeName: 'n1' })))).verdict.type).toBe('rejected');
    expect((await c.write('desired', bound('b', 'n1'))).verdict).toEqual(accepted);
  });
});

/** A log of `adapter` and a projection following it, for one test. */
const openCluster = async (adapter: LogAdapter, partitions: number) => {
  const log = await openTestLog(adapter, { dir: tempDir(), partitions });
  opened.push(log);
  const projection = createProjection({ dir: tempDir(), log });
  opened.push(projection);
  return { log, projection, cluster: logCluster(log, projection) };
};

/**
 * Waits until a projection on a fresh Kafka log has folded one event. On a broker that just
 * started, the first consumer group waits for the group coordinator (which first creates
 * the offsets topic), longer than one case's wait allows on a loaded machine; this pays
 * that once, before the cases, so each case's timeouts measure the case only.
 */
const kafkaReady = async (): Promise<void> => {
  const log = await openTestLog('kafka', { dir: tempDir(), partitions: 1 });
  const projection = createProjection({ dir: tempDir(), log });
  try {
    const event = makeEvent(`Namespace//${NS}`, created(namespace()));
    const position = await appendEvent(log, 'desired', event);
    await projection.waitForEvent('desired', position.partition, position.offset, event.id, 290_000);
  } finally {
    await projection.close();
    await log.close();
  }
};

describe.each(LOG_ADAPTERS.flatMap((adapter) => [1, 3].map((partitions) => [adapter, partitions] as const)))(
  'a projection on the %s log with %i partition(s)',
  (adapter, partitions) => {
    if (adapter === 'kafka') beforeAll(kafkaReady, 300_000);
    it.each(VERDICTS)('$name; a replay from offset 0 gives the live state hash', async (c) => {
      const { log, projection, cluster } = await openCluster(adapter, partitions);
      await runCase(c, cluster);
      const end = await endOf(log);
      await projection.waitFor(end);
      const replayed = await replayLog({ log, dir: tempDir() });
      expect(replayed.position).toEqual(end);
      expect(replayed.stateHash).toBe(projection.stateHash());
    });
  },
);

/** Concurrent writers racing for one thing; exactly one contender of each round may win. */
interface Race {
  readonly name: string;
  readonly settings?: FoldSettings;
  readonly rounds: number;
  /** The state the round meets (written by the first writer). */
  readonly given: (cluster: Cluster, round: number) => Promise<unknown>;
  /** The round's contenders; contender i is appended by writer i % 2, all at once. */
  readonly contenders: (cluster: Cluster, round: number) => EventBody[];
  /** A loser's verdict, knowing the winner. */
  readonly lost: (loser: Judged, winner: Judged, cluster: Cluster) => Verdict;
  /** What the winner left, and that the losers left nothing. */
  readonly won: (cluster: Cluster, winner: Judged, round: number) => void;
}

const bodyOf = <T extends EventBody['type']>(judged: Judged, type: T): Extract<EventBody, { type: T }> => {
  expect(judged.event.body.type).toBe(type);
  return judged.event.body as Extract<EventBody, { type: T }>;
};
const createdKey = (judged: Judged): string => judged.event.key;

const RACES: readonly Race[] = [
  {
    name: 'Services asking for one ClusterIP',
    rounds: 3,
    given: (c, round) => (round === 0 ? given(c, namespace()) : Promise.resolve()),
    contenders: (_, round) => ['a', 'b'].map((w) => created(service(`ip-${round}-${w}`, { clusterIP: `127.96.1.${round + 1}` }))),
    lost: (loser) => {
      const ip = (bodyOf(loser, 'ObjectCreated').object as Service).spec.clusterIP;
      return rejected('Invalid', `spec.clusterIP: Invalid value: "${ip}": provided IP is already allocated`);
    },
    won: (c, winner, round) => {
      expect(c.contents().allocations[`ip/127.96.1.${round + 1}`]).toBe(createdKey(winner));
      expect(Object.keys(c.contents().desired).filter((key) => key.startsWith(serviceKey(`ip-${round}-`)))).toEqual([createdKey(winner)]);
    },
  },
  {
    name: 'Services for the last ClusterIP of the service CIDR',
    settings: { ...LEGACY_FOLD_SETTINGS, serviceCIDR: '10.0.0.0/30' },
    rounds: 1,
    given: (c) => given(c, namespace(), service('first')),
    contenders: () => ['a', 'b', 'c'].map((w) => created(service(`last-${w}`))),
    lost: () => rejected('Invalid', 'spec.clusterIP: no free address left in 10.0.0.0/30'),
    won: (c, winner) => {
      expect(objectOf<Service>(c, createdKey(winner))?.spec.clusterIP).toBe('10.0.0.2');
      const addresses = Object.entries(c.contents().allocations).filter(([resource]) => resource.startsWith('ip/'));
      expect(addresses.map(([, owner]) => owner).sort()).toEqual([serviceKey('first'), createdKey(winner)].sort());
    },
  },
  {
    name: 'Services asking for one NodePort',
    rounds: 3,
    given: (c, round) => (round === 0 ? given(c, namespace()) : Promise.resolve()),
    contenders: (_, round) => ['a', 'b'].map((w) => created(nodePortService(`np-${round}-${w}`, [30100 + round]))),
    lost: (_, winner) => {
      const nodePort = (bodyOf(winner, 'ObjectCreated').object as Service).spec.ports?.[0]?.nodePort;
      return rejected('Invalid', `spec.ports[0].nodePort: Invalid value: ${nodePort}: provided port is already allocated`);
    },
    won: (c, winner, round) => {
      const allocations = c.contents().allocations;
      expect(allocations[`nodeport/${30100 + round}`]).toBe(createdKey(winner));
      // The loser's ClusterIP was never claimed: one address per accepted Service.
      expect(Object.keys(allocations).filter((resource) => resource.startsWith('ip/'))).toHaveLength(round + 1);
    },
  },
  {
    name: 'schedulers binding one pod to different nodes',
    rounds: 3,
    given: (c, round) => given(c, ...(round === 0 ? [namespace(), node('n1', { cpu: '8' }), node('n2', { cpu: '8' })] : []), pod(`p-${round}`)),
    contenders: (_, round) => ['n1', 'n2'].map((nodeName) => bound(`p-${round}`, nodeName)),
    lost: (loser, winner) =>
      rejected('Conflict', `pod ${bodyOf(loser, 'PodBound').name} is already assigned to node "${bodyOf(winner, 'PodBound').node}"`),
    won: (c, winner, round) => {
      expect(objectOf<Pod>(c, podKey(`p-${round}`))?.spec?.nodeName).toBe(bodyOf(winner, 'PodBound').node);
      const usage = c.contents().usage;
      expect((usage['n1']?.pods ?? 0) + (usage['n2']?.pods ?? 0)).toBe(round + 1);
    },
  },
  {
    name: 'pods binding to the last room on a node',
    rounds: 3,
    given: (c, round) =>
      given(c, ...(round === 0 ? [namespace()] : []), node(`cap-${round}`), pod(`q-${round}-a`, { cpu: '600m' }), pod(`q-${round}-b`, { cpu: '600m' })),
    contenders: (_, round) => ['a', 'b'].map((w) => bound(`q-${round}-${w}`, `cap-${round}`)),
    lost: (loser) => rejected('Unschedulable', `node "${bodyOf(loser, 'PodBound').node}" cannot admit pod ${bodyOf(loser, 'PodBound').name}: Insufficient cpu`),
    won: (c, winner, round) => {
      expect(c.contents().usage[`cap-${round}`]).toEqual({ cpuMilli: 600, memoryBytes: 64 * 2 ** 20, pods: 1 });
      const bound = ['a', 'b'].filter((w) => objectOf<Pod>(c, podKey(`q-${round}-${w}`))?.spec?.nodeName);
      expect(bound.map((w) => `q-${round}-${w}`)).toEqual([bodyOf(winner, 'PodBound').name]);
    },
  },
  {
    name: 'updates from one resourceVersion',
    rounds: 3,
    given: (c, round) => (round === 0 ? given(c, namespace(), pod('u')) : Promise.resolve()),
    contenders: (c) => {
      const expected = `${versionOf(c, podKey('u'))}.0`;
      return ['a', 'b'].map((w) => updated(relabel(copyOf(c, podKey('u')), { writer: w }), expected));
    },
    lost: (loser, _, c) =>
      rejected('Conflict', staleMessage(inNamespace('Pod', 'u'), bodyOf(loser, 'ObjectUpdated').expectedResourceVersion!, versionOf(c, podKey('u')))),
    won: (c, winner) => expect(objectOf(c, podKey('u'))?.metadata.labels).toEqual(bodyOf(winner, 'ObjectUpdated').object.metadata.labels),
  },
];

/**
 * Two writers, each with its own projection (two apiservers, two schedulers): on Kafka each
 * has its own client of the cluster's topics; an embedded log has one owner process, in
 * which both write at once.
 */
const openWriters = async (adapter: LogAdapter, partitions: number) => {
  const first = await openTestLog(adapter, { dir: tempDir(), partitions });
  opened.push(first);
  const second = adapter === 'kafka' ? await openTestLog(adapter, { dir: tempDir(), partitions, cluster: first.layout.cluster }) : first;
  if (second !== first) opened.push(second);
  return [first, second].map((log) => {
    const projection = createProjection({ dir: tempDir(), log });
    opened.push(projection);
    return { log, projection, cluster: logCluster(log, projection) };
  });
};

describe.each(LOG_ADAPTERS.flatMap((adapter) => [1, 3].map((partitions) => [adapter, partitions] as const)))(
  'concurrent writers on the %s log with %i partition(s)',
  (adapter, partitions) => {
    if (adapter === 'kafka') beforeAll(kafkaReady, 300_000);
    it.each(RACES)('$name: the first in log order wins, every projection agrees, a replay gives the same hash', async (race) => {
      const writers = await openWriters(adapter, partitions);
      const [first] = writers;
      await configure(first!.cluster, race.settings);
      const caughtUp = async () => {
        const end = await endOf(first!.log);
        await Promise.all(writers.map((w) => w.projection.waitFor(end)));
      };
      for (let round = 0; round < race.rounds; round++) {
        await race.given(first!.cluster, round);
        await caughtUp();
        const events = race.contenders(first!.cluster, round).map((body) => makeEvent(keyOfBody(body), body));
        const positions = await Promise.all(events.map((event, i) => appendEvent(writers[i % writers.length]!.log, 'desired', event)));
        const verdicts = await Promise.all(
          writers.map((w) => Promise.all(events.map((event, i) => judgedBy(w.projection, 'desired', positions[i]!, event)))),
        );
        for (const seen of verdicts.slice(1)) expect(seen.map((j) => j.verdict)).toEqual(verdicts[0]!.map((j) => j.verdict));
        const judged = verdicts[0]!;
        const winners = judged.filter((j) => j.verdict.type === 'accepted');
        expect(winners, JSON.stringify(judged.map((j) => j.verdict))).toHaveLength(1);
        const winner = winners[0]!;
        // All contenders lie in one partition; the fold judges them in its order.
        expect(new Set(positions.map((p) => p.partition)).size).toBe(1);
        expect(positions[judged.indexOf(winner)]!.offset).toBe(Math.min(...positions.map((p) => p.offset)));
        for (const loser of judged) if (loser !== winner) expect(loser.verdict).toEqual(race.lost(loser, winner, first!.cluster));
        for (const w of writers) race.won(w.cluster, winner, round);
      }
      await caughtUp();
      const hashes = writers.map((w) => w.projection.stateHash());
      expect(new Set(hashes).size).toBe(1);
      const replayed = await replayLog({ log: first!.log, dir: tempDir() });
      expect(replayed.stateHash).toBe(hashes[0]);
    });
  },
);
