/**
 * Helpers of the reconciler acceptance suite (`reconcilers.test.ts`): a real cluster
 * (`startCluster`: log, projection, apiserver, every controller) whose nodes are real
 * node agents in `sim` runtime started per node group, so each group can have its own
 * labels, taints and capacity and be stopped on its own; an API client; waiting for a
 * condition on the projection with a deadline; and fixtures.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { filter, firstValueFrom, interval, merge, throwError, timeout } from 'rxjs';
import { createClient, type Client } from '../../cli/client.ts';
import { startCluster, type RunningCluster } from '../../cli/up.ts';
import { startNodeAgent, type NodeAgent, type NodeResources } from '../../node-agent/agent.ts';
import type { Projection, View } from '../../projections/index.ts';
import { isPodActive, isPodReady } from '../../reconcilers/replicaset/pods.ts';
import type { Deployment, Pod, PodSpec, Taint } from '../../schemas/index.ts';
import { kafkaBrokers } from '../kafka-env.ts';

/** The log a cluster of the suite runs on, and with how many partitions. */
export interface LogCase {
  readonly name: 'embedded' | 'kafka';
  readonly partitions: number;
}

/** A unique cluster name (Kafka topic prefix) for one test. */
export const uniqueClusterName = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

/** A node group's options: what its agent registers and how fast it runs pods. */
export interface NodeGroupOptions {
  readonly capacity?: NodeResources;
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly Taint[];
}

export interface E2EClusterOptions {
  readonly log: LogCase;
  /** Cluster (topic prefix) name; unique per test. */
  readonly cluster: string;
  readonly nodeGracePeriodMs?: number;
  readonly tolerationSeconds?: number;
  /** Heartbeat period of every node agent (default 300 ms). */
  readonly heartbeatMs?: number;
  /** Delay until a sim container runs (default 20 ms). */
  readonly simStartDelayMs?: number;
}

/** A running cluster without nodes; add them with `startNodes`. */
export interface E2ECluster {
  readonly running: RunningCluster;
  readonly projection: Projection;
  readonly api: Client;
  /** Starts one node agent (sim runtime) running `names`; resolves once they are registered. */
  startNodes(names: readonly string[], options?: NodeGroupOptions): Promise<NodeAgent>;
  /** Resolves once `condition` holds on the projection's view; fails after `timeoutMs` saying what it waited for. */
  waitUntil(what: string, condition: (view: View) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

let nextPodRange = 0;

/** Starts {@link startCluster} with no nodes of its own, on the embedded log or Kafka. */
export const startE2ECluster = async (options: E2EClusterOptions): Promise<E2ECluster> => {
  const dataDir = mkdtempSync(join(tmpdir(), 'logplane-e2e-reconcilers-'));
  const logger = pino({ level: 'warn' });
  const heartbeatMs = options.heartbeatMs ?? 300;
  const simStartDelayMs = options.simStartDelayMs ?? 20;
  const running = await startCluster({
    dataDir,
    nodes: 0,
    runtime: 'sim',
    port: 0,
    host: '127.0.0.1',
    proxy: 'none',
    logger,
    tls: false,
    heartbeatMs,
    simStartDelayMs,
    ...(options.log.name === 'kafka'
      ? { kafka: { type: 'kafka', brokers: kafkaBrokers(), cluster: options.cluster, partitions: options.log.partitions } as const }
      : {}),
    ...(options.nodeGracePeriodMs === undefined ? {} : { nodeGracePeriodMs: options.nodeGracePeriodMs }),
    ...(options.tolerationSeconds === undefined ? {} : { tolerationSeconds: options.tolerationSeconds }),
  });
  const agents = new Set<NodeAgent>();
  const projection = running.projection;
  return {
    running,
    projection,
    api: createClient({ server: running.url, token: running.token }),
    startNodes: async (names, group = {}) => {
      const first = nextPodRange;
      nextPodRange += names.length;
      const agent = await startNodeAgent({
        log: running.log,
        projection,
        logger: logger.child({ component: 'agent' }),
        nodes: names,
        runtime: 'sim',
        dataDir: join(dataDir, 'nodes'),
        heartbeatMs,
        simStartDelayMs,
        // Distinct pod CIDRs across the agents of this process.
        podCIDR: (index) => `127.${120 + Math.floor((first + index) / 256) % 100}.${(first + index) % 256}.0/24`,
        ...(group.capacity ? { capacity: group.capacity } : {}),
        ...(group.labels ? { labels: group.labels } : {}),
        ...(group.taints ? { taints: group.taints } : {}),
      });
      agents.add(agent);
      const close = agent.close.bind(agent);
      return {
        ...agent,
        close: async (opts) => {
          agents.delete(agent);
          await close(opts);
        },
      };
    },
    waitUntil: (what, condition, timeoutMs = 30_000) => waitUntil(projection, what, condition, timeoutMs),
    close: async () => {
      for (const agent of agents) await agent.close({ stopPods: true });
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
};

/** Resolves once `condition` holds on `projection`'s view (checked on every applied batch and every 100 ms). */
export const waitUntil = async (projection: Projection, what: string, condition: (view: View) => boolean, timeoutMs = 30_000): Promise<void> => {
  if (condition(projection.view())) return;
  await firstValueFrom(
    merge(projection.cursor$, interval(100)).pipe(
      filter(() => condition(projection.view())),
      timeout({ first: timeoutMs, with: () => throwError(() => new Error(`timed out after ${timeoutMs} ms waiting until ${what}`)) }),
    ),
  );
};

// ---------------------------------------------------------------------------------------
// Fixtures and view queries

/** What a fixture Deployment's pods ask for besides their image. */
export interface PodShape {
  /** cpu request (default 100m; memory is 64Mi). */
  readonly cpu?: string;
  readonly spec?: Omit<Partial<PodSpec>, 'containers'>;
  readonly strategy?: Deployment['spec']['strategy'];
}

/** A Deployment `name` (labels `app: name`) of `replicas` pods running `image`. */
export const deploymentManifest = (name: string, replicas: number, image: string, shape: PodShape = {}): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'default', labels: { app: name } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    ...(shape.strategy ? { strategy: shape.strategy } : {}),
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'main', image, resources: { requests: { cpu: shape.cpu ?? '100m', memory: '64Mi' } } }], ...shape.spec },
    },
  },
});

/** The active (not terminating, not finished) pods labelled `app: app`. */
export const appPods = (view: View, app: string): Pod[] =>
  (view.list('Pod', 'default') as Pod[]).filter((pod) => pod.metadata.labels?.['app'] === app && isPodActive(pod));

/** Every pod labelled `app: app`, terminating ones too. */
export const allAppPods = (view: View, app: string): Pod[] =>
  (view.list('Pod', 'default') as Pod[]).filter((pod) => pod.metadata.labels?.['app'] === app);

/** Whether `pod` is bound, Running and Ready. */
export const isRunningReady = (pod: Pod): boolean => Boolean(pod.spec.nodeName) && pod.status?.phase === 'Running' && isPodReady(pod);

/** The image of a pod's first container. */
export const imageOf = (pod: Pod): string => pod.spec.containers[0]?.image ?? '';

/** The PodScheduled condition of `pod`. */
export const scheduledCondition = (pod: Pod | undefined) => pod?.status?.conditions?.find((c) => c.type === 'PodScheduled');

// ---------------------------------------------------------------------------------------
// Controllers in their own processes

/** A `logplane controllers` process, with the partitions its consumer-group members logged as assigned. */
export interface ControllerProcess {
  readonly label: string;
  readonly pid: number;
  /** The partitions last assigned to `controller` in this process (undefined before its first assignment). */
  assigned(controller: string): readonly number[] | undefined;
  /** Whether the process has exited. */
  exited(): boolean;
  /** The last lines it wrote to stderr (for failure messages). */
  tail(): string;
  /** Sends `signal` to this process. */
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM, and SIGKILL if it has not exited after `graceMs`; resolves once it exited. */
  stop(graceMs?: number): Promise<void>;
}

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** Starts `node bin/logplane.mjs --log-level info controllers --only ...` on Kafka with its own data directory. */
export const spawnControllers = (options: {
  readonly label: string;
  readonly only: readonly string[];
  readonly cluster: string;
  readonly partitions: number;
  readonly dataDir: string;
}): ControllerProcess => {
  const args = [
    join(REPO, 'bin/logplane.mjs'),
    '--log-level', 'info',
    'controllers',
    '--only', options.only.join(','),
    '--kafka', kafkaBrokers().join(','),
    '--cluster', options.cluster,
    '--partitions', String(options.partitions),
    '--data', options.dataDir,
  ];
  const child = spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] });
  const assignments = new Map<string, number[]>();
  const lines: string[] = [];
  let partial = '';
  let exitCode: number | null | undefined;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', (code) => {
      exitCode = code;
      resolve();
    });
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      if (lines.length > 40) lines.shift();
      if (!line.startsWith('{')) continue;
      try {
        const entry = JSON.parse(line) as { msg?: string; controller?: string; partitions?: number[] };
        if (entry.msg === 'partitions assigned' && entry.controller && entry.partitions) assignments.set(entry.controller, entry.partitions);
      } catch {
        // Not a log record (a stack trace line): kept in the tail only.
      }
    }
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${options.label}`);
  return {
    label: options.label,
    pid,
    assigned: (controller) => assignments.get(controller),
    exited: () => exitCode !== undefined,
    tail: () => lines.join('\n'),
    signal: (signal) => {
      if (exitCode === undefined) process.kill(pid, signal);
    },
    stop: async (graceMs = 10_000) => {
      if (exitCode !== undefined) return;
      process.kill(pid, 'SIGTERM');
      const timer = setTimeout(() => {
        if (exitCode === undefined) process.kill(pid, 'SIGKILL');
      }, graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
};

/** Resolves once `condition()` holds, checking every 100 ms; fails after `timeoutMs` with `what` and `detail()`. */
export const pollUntil = async (what: string, condition: () => boolean, timeoutMs: number, detail: () => string = () => ''): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}\n${detail()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};
