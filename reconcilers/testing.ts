/**
 * Test helpers for the reconcilers: object fixtures; a log-less cluster whose view is
 * built by folding events, and `settle`, which runs controllers on it to a fixed point
 * (for pure `decide` tests); `startTestNodes`, a stand-in for the scheduler and the node
 * agents (binds unscheduled pods round-robin, reports them Running and Ready, finishes
 * graceful deletions); and `startScenario`, the harness of the scenario suites that run on
 * both logs.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { filter, firstValueFrom, throwError, timeout, type Subscription } from 'rxjs';
import { createEmbeddedLog } from '../log/embedded/index.ts';
import { createKafkaLog } from '../log/kafka/index.ts';
import type { EventLog } from '../log/port.ts';
import {
  appendEnvelopes,
  createProjection,
  envelope,
  keyOfBody,
  topicOfBody,
  type EventRecord,
  type Projection,
  type View,
} from '../projections/index.ts';
import { makeEvent, toBatches } from '../projections/testing.ts';
import type {
  Actor,
  Deployment,
  DeploymentStrategy,
  EventBody,
  EventEnvelope,
  KubeObject,
  Namespace,
  Node,
  Pod,
  PodStatus,
  PodTemplateSpec,
  ReplicaSet,
} from '../schemas/index.ts';
import { kafkaBrokers } from '../test/kafka-env.ts';
import { deleteCommand, isoTime } from './replicaset/objects.ts';
import { startReconciler, type Controller, type ReconcilerRuntime } from './runtime.ts';

// ---------------------------------------------------------------------------------------
// Fixtures

/** A Namespace object. */
export const namespaceObject = (name = 'default'): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

/** A Node with the given allocatable resources (plenty by default). */
export const nodeObject = (name: string, allocatable: Record<string, string> = { cpu: '64', memory: '256Gi', pods: '500' }): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name } },
  status: {
    capacity: allocatable,
    allocatable,
    conditions: [{ type: 'Ready', status: 'True' }],
  },
});

/** A pod template running `image`, labelled `labels`. */
export const podTemplate = (image: string, labels: Record<string, string>): PodTemplateSpec => ({
  metadata: { labels },
  spec: { containers: [{ name: 'main', image, resources: { requests: { cpu: '10m', memory: '16Mi' } } }] },
});

export interface ReplicaSetFixture {
  readonly name: string;
  readonly replicas?: number;
  readonly image?: string;
  readonly labels?: Record<string, string>;
  readonly minReadySeconds?: number;
  readonly namespace?: string;
}

/** A ReplicaSet selecting (and templating) `labels` (default `app: <name>`). */
export const replicaSetObject = (fixture: ReplicaSetFixture): ReplicaSet => {
  const labels = fixture.labels ?? { app: fixture.name };
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: fixture.name, namespace: fixture.namespace ?? 'default', labels },
    spec: {
      replicas: fixture.replicas ?? 1,
      ...(fixture.minReadySeconds === undefined ? {} : { minReadySeconds: fixture.minReadySeconds }),
      selector: { matchLabels: labels },
      template: podTemplate(fixture.image ?? 'logplane/echo:1', labels),
    },
  };
};

export interface DeploymentFixture {
  readonly name: string;
  readonly replicas?: number;
  readonly image?: string;
  readonly labels?: Record<string, string>;
  readonly strategy?: DeploymentStrategy;
  readonly minReadySeconds?: number;
  readonly revisionHistoryLimit?: number;
  readonly namespace?: string;
}

/** A Deployment selecting (and templating) `labels` (default `app: <name>`). */
export const deploymentObject = (fixture: DeploymentFixture): Deployment => {
  const labels = fixture.labels ?? { app: fixture.name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: fixture.name, namespace: fixture.namespace ?? 'default', labels },
    spec: {
      replicas: fixture.replicas ?? 1,
      selector: { matchLabels: labels },
      template: podTemplate(fixture.image ?? 'logplane/echo:1', labels),
      ...(fixture.strategy ? { strategy: fixture.strategy } : {}),
      ...(fixture.minReadySeconds === undefined ? {} : { minReadySeconds: fixture.minReadySeconds }),
      ...(fixture.revisionHistoryLimit === undefined ? {} : { revisionHistoryLimit: fixture.revisionHistoryLimit }),
    },
  };
};

/** The status a node agent reports for a running pod: Ready (or not) since `since`. */
export const runningPodStatus = (ready: boolean, since: number): PodStatus => {
  const at = isoTime(since);
  const readiness = ready ? 'True' : 'False';
  return {
    phase: 'Running',
    conditions: [
      { type: 'PodScheduled', status: 'True', lastTransitionTime: at },
      { type: 'Initialized', status: 'True', lastTransitionTime: at },
      { type: 'ContainersReady', status: readiness, lastTransitionTime: at },
      { type: 'Ready', status: readiness, lastTransitionTime: at },
    ],
    startTime: at,
  };
};

/** The key of a pod in the default namespace. */
export const podKey = (name: string, namespace = 'default'): string => `Pod/${namespace}/${name}`;

// ---------------------------------------------------------------------------------------
// A cluster without a log: events folded straight into a projection

/** A projection in a temporary directory fed by hand; its view is what pure tests decide on. */
export interface TestCluster {
  readonly projection: Projection;
  /** Folds `bodies` (routed to desired/observed as the writer would) and returns each verdict. */
  apply(...bodies: readonly EventBody[]): EventRecord[];
  /** Creates `object` and returns it as stored (uid, creationTimestamp, resourceVersion set). */
  create<T extends KubeObject>(object: T): T;
  /** Reports `status` for pod `name` (default namespace). */
  podStatus(name: string, status: PodStatus, namespace?: string): void;
  view(): View;
  close(): Promise<void>;
}

/** Opens a {@link TestCluster} with the `default` namespace. */
export const createTestCluster = (partitions = 1): TestCluster => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-reconcilers-'));
  const projection = createProjection({ dir, partitions });
  const apply = (...bodies: readonly EventBody[]): EventRecord[] =>
    bodies.map((body) => {
      const event = makeEvent(keyOfBody(body), body, { type: 'controller', name: 'test' });
      const topic = topicOfBody(body);
      if (topic === 'heartbeats') throw new TypeError('heartbeats are not folded');
      for (const batch of toBatches(topic, [event], partitions, [...projection.cursor()[topic]])) projection.applyBatch(batch);
      const record = projection.store.events.get(event.id);
      if (!record) throw new Error(`event ${event.id} was not applied`);
      return record;
    });
  const cluster: TestCluster = {
    projection,
    apply,
    create: <T extends KubeObject>(object: T): T => {
      const [record] = apply({ type: 'ObjectCreated', object });
      if (record?.verdict.type !== 'accepted') throw new Error(`create of ${record?.key} rejected: ${JSON.stringify(record?.verdict)}`);
      return projection.view().get(record.key) as T;
    },
    podStatus: (name, status, namespace = 'default') => {
      const pod = projection.view().get(podKey(name, namespace));
      apply({ type: 'PodStatusChanged', namespace, name, uid: pod?.metadata.uid ?? null, status });
    },
    view: () => projection.view(),
    close: async () => {
      await projection.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  cluster.create(namespaceObject());
  return cluster;
};

/** Options of {@link settle}. */
export interface SettleOptions {
  /** The decisions' clock. */
  readonly now: number;
  /** Node the simulated node agent binds pods to (it must exist); without one, pods stay unscheduled. */
  readonly node?: string;
  /** How many Running pods turn Ready per round (default: all), to interleave readiness with decisions. */
  readonly readyPerRound?: number;
  /** Called after every folded command, e.g. to check an invariant on the view. */
  readonly check?: (view: View) => void;
  /** Rounds before giving up (default 200). */
  readonly maxRounds?: number;
}

/**
 * Runs `controllers` (every key from `initialKeys`, each decision folded before the next)
 * and a simulated node agent in rounds until a round changes nothing; returns the number
 * of rounds. The node agent binds unscheduled pods to `node`, reports them Running (not
 * ready), then Ready (at most `readyPerRound` a round), and completes graceful deletions.
 */
export const settle = (cluster: TestCluster, controllers: readonly Controller[], options: SettleOptions): number => {
  const maxRounds = options.maxRounds ?? 200;
  const fold = (commands: readonly EventBody[]): boolean => {
    for (const command of commands) {
      cluster.apply(command);
      options.check?.(cluster.view());
    }
    return commands.length > 0;
  };
  for (let round = 1; round <= maxRounds; round++) {
    let changed = false;
    for (const controller of controllers) {
      for (const key of controller.initialKeys(cluster.view())) {
        changed = fold(controller.decide(key, cluster.view(), { now: options.now }).commands) || changed;
      }
    }
    if (options.node) changed = fold(nodeAgentStep(cluster.view(), options.node, options.now, options.readyPerRound)) || changed;
    if (!changed) return round;
  }
  throw new Error(`controllers did not settle within ${maxRounds} rounds`);
};

/** One pass of the simulated node agent of {@link settle}. */
const nodeAgentStep = (view: View, node: string, now: number, readyPerRound = Number.POSITIVE_INFINITY): EventBody[] => {
  const commands: EventBody[] = [];
  for (const pod of view.unscheduledPods()) {
    if (pod.metadata.deletionTimestamp) continue;
    commands.push({
      type: 'PodBound',
      namespace: pod.metadata.namespace ?? 'default',
      name: pod.metadata.name,
      node,
      expectedPodVersion: null,
      rationale: { filtered: [], scores: [], feasibleNodes: 1, totalNodes: 1 },
    });
  }
  let readied = 0;
  for (const pod of view.podsOnNode(node)) {
    const namespace = pod.metadata.namespace ?? 'default';
    const report = (ready: boolean): EventBody => ({
      type: 'PodStatusChanged',
      namespace,
      name: pod.metadata.name,
      uid: pod.metadata.uid ?? null,
      status: runningPodStatus(ready, now),
    });
    if (pod.metadata.deletionTimestamp) {
      commands.push({ ...deleteCommand(pod), gracePeriodSeconds: 0 });
    } else if ((pod.status?.phase ?? 'Pending') === 'Pending') {
      commands.push(report(false));
    } else if (pod.status?.phase === 'Running' && !pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && readied < readyPerRound) {
      readied++;
      commands.push(report(true));
    }
  }
  return commands;
};

// ---------------------------------------------------------------------------------------
// Writing through a real log

/** Appends `bodies` (each with its actor) and waits until `projection` applied them all. */
export const appendAndApply = async (
  log: EventLog,
  projection: Projection,
  writes: readonly { readonly body: EventBody; readonly actor: Actor }[],
): Promise<void> => {
  if (writes.length === 0) return;
  const envelopes: EventEnvelope[] = writes.map(({ body, actor }) => envelope(body, { actor }));
  const appended = await appendEnvelopes(log, envelopes);
  const cursor = projection.cursor();
  const target = { desired: [...cursor.desired], observed: [...cursor.observed] };
  for (const a of appended) {
    if (a.topic === 'heartbeats') continue;
    target[a.topic][a.partition] = Math.max(target[a.topic][a.partition] ?? 0, a.offset + 1);
  }
  await projection.waitFor(target);
};

/** The user actor of scenario tests. */
export const ADMIN: Actor = { type: 'user', name: 'admin' };

/** Creates the `default` namespace and the nodes `nodes` through the log. */
export const seedCluster = async (log: EventLog, projection: Projection, nodes: readonly string[]): Promise<void> => {
  await appendAndApply(log, projection, [
    { body: { type: 'ObjectCreated', object: namespaceObject() }, actor: ADMIN },
    ...nodes.map((node) => ({ body: { type: 'ObjectCreated', object: nodeObject(node) } as EventBody, actor: ADMIN })),
  ]);
};

export interface TestNodesOptions {
  readonly log: EventLog;
  readonly projection: Projection;
  /** Node names (they must exist); unscheduled pods are bound to them round-robin. */
  readonly nodes: readonly string[];
  /** A bound pod reports Running at once and Ready after this long (default 0: at once). */
  readonly readyDelayMs?: number;
  readonly logger?: Logger;
  readonly now?: () => number;
}

export interface TestNodes {
  /** Stops reacting to changes and waits for the pass in flight. */
  stop(): Promise<void>;
}

/**
 * Starts the stand-in for the scheduler and the node agents: on every pod change it binds
 * unscheduled pods round-robin (`PodBound`), reports bound pods Running (Ready after
 * `readyDelayMs`) with `PodStatusChanged`, and deletes terminating pods with grace period
 * 0, each pass waiting until the projection applied its writes before the next.
 */
export const startTestNodes = (options: TestNodesOptions): TestNodes => {
  const { log, projection, nodes } = options;
  const readyDelayMs = options.readyDelayMs ?? 0;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? pino({ level: 'warn' }).child({ component: 'test-nodes' });
  const binder: Actor = { type: 'controller', name: 'test-binder' };
  const timers = new Set<NodeJS.Timeout>();
  let next = 0;
  let dirty = false;
  let stopped = false;
  let pass: Promise<void> = Promise.resolve();

  const step = async (): Promise<void> => {
    const view = projection.view();
    const writes: { body: EventBody; actor: Actor }[] = [];
    for (const pod of view.unscheduledPods()) {
      if (pod.metadata.deletionTimestamp) continue;
      const node = nodes[next++ % nodes.length] ?? '';
      writes.push({
        body: {
          type: 'PodBound',
          namespace: pod.metadata.namespace ?? 'default',
          name: pod.metadata.name,
          node,
          expectedPodVersion: pod.metadata.resourceVersion ?? null,
          rationale: { filtered: [], scores: [], feasibleNodes: nodes.length, totalNodes: nodes.length },
        },
        actor: binder,
      });
    }
    for (const node of nodes) {
      const agent: Actor = { type: 'node', name: node };
      for (const pod of view.podsOnNode(node)) writes.push(...podWrites(pod).map((body) => ({ body, actor: agent })));
    }
    await appendAndApply(log, projection, writes);
  };

  /** When each pod (by uid) was reported Running, for the readiness delay. */
  const startedAt = new Map<string, number>();

  const podWrites = (pod: Pod): EventBody[] => {
    const namespace = pod.metadata.namespace ?? 'default';
    const uid = pod.metadata.uid ?? '';
    const report = (ready: boolean): EventBody => ({
      type: 'PodStatusChanged',
      namespace,
      name: pod.metadata.name,
      uid: pod.metadata.uid ?? null,
      status: runningPodStatus(ready, now()),
    });
    if (pod.metadata.deletionTimestamp) {
      startedAt.delete(uid);
      return [{ ...deleteCommand(pod), gracePeriodSeconds: 0 }];
    }
    const phase = pod.status?.phase ?? 'Pending';
    if (phase === 'Pending') {
      startedAt.set(uid, now());
      if (readyDelayMs > 0) wakeAfter(readyDelayMs);
      return [report(readyDelayMs === 0)];
    }
    const ready = pod.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    if (phase === 'Running' && !ready && now() - (startedAt.get(uid) ?? 0) >= readyDelayMs) return [report(true)];
    return [];
  };

  const wakeAfter = (ms: number): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      poke();
    }, ms + 5);
    timers.add(timer);
  };

  const poke = (): void => {
    if (stopped) return;
    if (dirty) return;
    dirty = true;
    pass = pass.then(async () => {
      dirty = false;
      if (stopped) return;
      try {
        await step();
      } catch (error) {
        logger.warn({ error: String(error) }, 'test nodes pass failed; retrying');
        wakeAfter(50);
      }
    });
  };

  const subscription: Subscription = projection.changes$.subscribe((change) => {
    if (change.object.kind === 'Pod') poke();
  });
  poke();
  return {
    stop: async () => {
      stopped = true;
      subscription.unsubscribe();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await pass;
    },
  };
};

// ---------------------------------------------------------------------------------------
// Scenarios on a real log

/** A log adapter the scenario suites run on. */
export interface LogAdapter {
  readonly name: 'embedded' | 'kafka';
  /** Opens a log for a fresh cluster; `close` closes it and removes what it stored locally. */
  open(partitions: number): Promise<{ readonly log: EventLog; close(): Promise<void> }>;
}

/** Both logs: the embedded LMDB log in a temporary directory, and Kafka (the broker vitest's global setup provides). */
export const LOG_ADAPTERS: readonly LogAdapter[] = [
  {
    name: 'embedded',
    open: async (partitions) => {
      const dir = mkdtempSync(join(tmpdir(), 'logplane-log-'));
      const log = await createEmbeddedLog({ dir, cluster: 'scenario', partitions });
      return {
        log,
        close: async () => {
          await log.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'kafka',
    open: async (partitions) => {
      const log = await createKafkaLog({ brokers: kafkaBrokers(), cluster: `scenario-${randomUUID().slice(0, 8)}`, partitions, logLevel: 'error' });
      return { log, close: () => log.close() };
    },
  },
];

export interface ScenarioOptions {
  readonly adapter: LogAdapter;
  readonly partitions?: number;
  /** Node names (default n1..n3). */
  readonly nodes?: readonly string[];
  /** Passed to {@link startTestNodes}. */
  readonly readyDelayMs?: number;
  /** The controllers to run. */
  readonly controllers: readonly Controller[];
}

/** A running scenario: a log, a projection following it, controllers and test nodes. */
export interface Scenario {
  readonly log: EventLog;
  readonly projection: Projection;
  /** Appends `bodies` as the admin user and waits until the projection applied them. */
  apply(...bodies: readonly EventBody[]): Promise<void>;
  /** Resolves once `condition` holds on the projection's view; fails after `timeoutMs` (default 30 s) saying what it waited for. */
  waitUntil(what: string, condition: (view: View) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts a {@link Scenario}: seeds the namespace and nodes, starts the controllers and the test nodes. */
export const startScenario = async (options: ScenarioOptions): Promise<Scenario> => {
  const { log, close: closeLog } = await options.adapter.open(options.partitions ?? 1);
  const dir = mkdtempSync(join(tmpdir(), 'logplane-scenario-'));
  const logger = pino({ level: 'warn' });
  const projection = createProjection({ dir, log, logger });
  const nodes = options.nodes ?? ['n1', 'n2', 'n3'];
  await seedCluster(log, projection, nodes);
  const runtimes: ReconcilerRuntime[] = [];
  for (const controller of options.controllers) runtimes.push(await startReconciler({ controller, log, projection, logger }));
  const testNodes = startTestNodes({ log, projection, nodes, logger, ...(options.readyDelayMs === undefined ? {} : { readyDelayMs: options.readyDelayMs }) });
  return {
    log,
    projection,
    apply: (...bodies) => appendAndApply(log, projection, bodies.map((body) => ({ body, actor: ADMIN }))),
    waitUntil: async (what, condition, timeoutMs = 30_000) => {
      await firstValueFrom(
        projection.cursor$.pipe(
          filter(() => condition(projection.view())),
          timeout({
            first: timeoutMs,
            with: () => throwError(() => new Error(`timed out after ${timeoutMs} ms waiting until ${what}`)),
          }),
        ),
      );
    },
    close: async () => {
      await testNodes.stop();
      for (const runtime of runtimes) await runtime.stop();
      await projection.close();
      await closeLog();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

/** A small deterministic PRNG (mulberry32) in [0, 1), so a randomized test's failure replays from its seed. */
export const seededRandom = (seed: number): (() => number) => {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};
