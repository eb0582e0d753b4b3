/**
 * The real kubectl against logplane, for a `describe` block, served over TLS as users meet it
 * (kubectl sends bearer tokens only over https). {@link useKubectlCluster}: a `logplane up`
 * cluster (`startCluster`) on one log, with waits on its projection.
 * {@link useKubectlApiServer}: an apiserver alone on a test log, by default with the namespace
 * controller.
 * Each starts in `beforeAll` and stops and removes its directory in `afterAll`, and gives the
 * block kubectl (each call with the kubeconfig and its own discovery cache) and files to pass
 * with `-f`. {@link asServed} is what kube gives back for a manifest as applied.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, expect } from 'vitest';
import { generateSelfSignedCertificate, writeKubeconfig } from '../../apiserver/index.ts';
import { ADMIN_TOKEN, openTestLog, startTestApiServer, tempDir, type TestApiServer } from '../../apiserver/testing.ts';
import { startCluster, type RunningCluster, type UpOptions } from '../../cli/up.ts';
import type { EventLog } from '../../log/port.ts';
import type { View } from '../../projections/index.ts';
import { startControllers, type ControllerName, type RunningControllers } from '../../reconcilers/controllers.ts';
import { kafkaBrokers } from '../kafka-env.ts';
import { waitForView, type LogAdapter } from './helpers.ts';

/** What one kubectl run printed and its exit code. */
export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The options of `startCluster` a test may set (the harness owns the directory, address, log and logger). */
export type KubectlClusterOptions = Partial<Omit<UpOptions, 'dataDir' | 'kafka' | 'logger' | 'port' | 'host'>>;

/** kubectl bound to one kubeconfig and a working directory (its discovery cache and the files it is given). */
export interface Kubectl {
  /** Runs kubectl; never rejects (a failure is a non-zero `code`). */
  kubectl(...args: string[]): Promise<KubectlResult>;
  /** Runs kubectl and returns its stdout; rejects with its stderr when it exits non-zero. */
  ok(...args: string[]): Promise<string>;
  /**
   * Runs kubectl and returns its stdout, asserting with `expect` (each assertion labelled with
   * the arguments) that it printed nothing on stderr and exited 0.
   */
  expectOk(...args: string[]): Promise<string>;
  /** Writes `text` to `name` in the working directory and returns the path. */
  file(name: string, text: string): string;
}

/**
 * kubectl with `kubeconfig()` and `--cache-dir <dir()>/kube-cache`, each run at most
 * `timeoutMs`; both are read at each call, so they may name what a `beforeAll` creates.
 */
export const createKubectl = (target: { kubeconfig: () => string; dir: () => string }, timeoutMs = 60_000): Kubectl => {
  const kubectl = (...args: string[]): Promise<KubectlResult> =>
    new Promise((resolve) => {
      execFile(
        'kubectl',
        ['--kubeconfig', target.kubeconfig(), '--cache-dir', join(target.dir(), 'kube-cache'), '--request-timeout', '30s', ...args],
        { timeout: timeoutMs },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  return {
    kubectl,
    ok: async (...args) => {
      const result = await kubectl(...args);
      if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
      return result.stdout;
    },
    expectOk: async (...args) => {
      const result = await kubectl(...args);
      expect(result.stderr, args.join(' ')).toBe('');
      expect(result.code, args.join(' ')).toBe(0);
      return result.stdout;
    },
    file: (name, text) => {
      const path = join(target.dir(), name);
      writeFileSync(path, text);
      return path;
    },
  };
};

/** A cluster and kubectl for one `describe` block; `cluster` and `dir` exist once its `beforeAll` ran. */
export interface KubectlCluster extends Kubectl {
  readonly cluster: RunningCluster;
  readonly dir: string;
  /** Resolves once `condition` holds on the projection's view (checked at every position it reaches). */
  waitUntil(what: string, condition: (view: View) => boolean, timeoutMs?: number): Promise<void>;
}

/**
 * Registers `beforeAll`/`afterAll` that start and stop a cluster on `adapter` (on Kafka: the
 * suite's broker, topics named `<prefix>-<random>`, one partition). Defaults: one sim node,
 * no service proxy, TLS; `options` override them. Each kubectl run may take `kubectlTimeoutMs`.
 */
export const useKubectlCluster = (
  adapter: LogAdapter,
  prefix: string,
  options: KubectlClusterOptions = {},
  { kubectlTimeoutMs = 60_000, startTimeoutMs = 120_000 }: { kubectlTimeoutMs?: number; startTimeoutMs?: number } = {},
): KubectlCluster => {
  let cluster: RunningCluster | undefined;
  let dir: string | undefined;
  const started = (): { cluster: RunningCluster; dir: string } => {
    if (!cluster || !dir) throw new Error(`the ${prefix} cluster is not started: use it inside tests or hooks of its describe block`);
    return { cluster, dir };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
    cluster = await startCluster({
      dataDir: dir,
      nodes: 1,
      runtime: 'sim',
      proxy: 'none',
      ...options,
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' }),
      ...(adapter === 'kafka' ? { kafka: { type: 'kafka', brokers: kafkaBrokers(), cluster: `${prefix}-${randomUUID().slice(0, 8)}`, partitions: 1 } } : {}),
    });
  }, startTimeoutMs);

  afterAll(async () => {
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  return {
    ...createKubectl({ kubeconfig: () => started().cluster.kubeconfig, dir: () => started().dir }, kubectlTimeoutMs),
    get cluster() {
      return started().cluster;
    },
    get dir() {
      return started().dir;
    },
    waitUntil: async (what, condition, timeoutMs = 60_000) => {
      await waitForView(started().cluster.projection, what, (view) => condition(view), { timeoutMs });
    },
  };
};

/** An apiserver and kubectl for one `describe` block; `log`, `api` and `ca` exist once its `beforeAll` ran. */
export interface KubectlApiServer extends Kubectl {
  /** The block's temporary directory: the log, the projection, the kubeconfig, kubectl's cache and files. */
  readonly dir: string;
  /** The path of the kubeconfig: the server's address, the admin token, the server's certificate as its CA. */
  readonly kubeconfig: string;
  readonly log: EventLog;
  readonly api: TestApiServer;
  /** The PEM certificate the server serves over TLS, self-signed. */
  readonly ca: string;
}

/**
 * Registers `beforeAll`/`afterAll` that open a log on `adapter` in a temporary directory named
 * `<prefix>-…`, start an apiserver on it serving TLS with a self-signed certificate, write a
 * kubeconfig with the admin token trusting that certificate, and, unless `namespaceController`
 * is false, run the namespace controller (`kubectl delete namespace` waits until it has emptied
 * and released the namespace) and the storage-protection ones (a claim's or volume's deletion
 * waits for its finalizer); `afterAll` stops them all and removes the directory. Each
 * kubectl run may take `kubectlTimeoutMs`.
 */
export const useKubectlApiServer = (
  adapter: LogAdapter,
  prefix: string,
  {
    namespaceController = true,
    kubectlTimeoutMs = 60_000,
    controllers: extraControllers = [],
  }: { namespaceController?: boolean; kubectlTimeoutMs?: number; controllers?: readonly ControllerName[] } = {},
): KubectlApiServer => {
  const temp = tempDir(`${prefix}-`);
  const kubeconfig = join(temp.dir, 'kubeconfig');
  let log: EventLog | undefined;
  let api: TestApiServer | undefined;
  let ca: string | undefined;
  let controllers: RunningControllers | undefined;
  const started = (): { log: EventLog; api: TestApiServer; ca: string } => {
    if (!log || !api || !ca) throw new Error(`the ${prefix} apiserver is not started: use it inside tests or hooks of its describe block`);
    return { log, api, ca };
  };

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    const tls = generateSelfSignedCertificate();
    api = await startTestApiServer(log, temp.dir, { tls });
    ca = tls.cert;
    writeKubeconfig(kubeconfig, { server: api.server.url, token: ADMIN_TOKEN, certificateAuthority: tls.cert });
    const only: ControllerName[] = [...(namespaceController ? (['namespace', 'pvc-protection', 'pv-protection'] as const) : []), ...extraControllers];
    if (only.length > 0) controllers = await startControllers({ log, projection: api.projection, logger: pino({ level: 'silent' }), only });
  });

  afterAll(async () => {
    await controllers?.stop();
    await api?.close();
    await log?.close();
    temp.remove();
  });

  return {
    ...createKubectl({ kubeconfig: () => kubeconfig, dir: () => temp.dir }, kubectlTimeoutMs),
    dir: temp.dir,
    kubeconfig,
    get log() {
      return started().log;
    },
    get api() {
      return started().api;
    },
    get ca() {
      return started().ca;
    },
  };
};

/** A manifest's object as parsed from YAML. */
export type KubeObject = { kind: string; metadata: { name: string } } & Record<string, unknown>;

/** Maps whose values are quantities, and fields that hold one: kube gives them back as canonical strings. */
const QUANTITY_MAPS = new Set(['requests', 'limits', 'default', 'defaultRequest', 'max', 'min', 'maxLimitRequestRatio', 'podFixed', 'hard', 'capacity']);
const QUANTITY_FIELDS = new Set(['divisor', 'sizeLimit']);
const canonicalQuantity = (value: unknown): unknown =>
  typeof value !== 'number' ? value : Number.isInteger(value) ? String(value) : `${Math.round(value * 1000)}m`;

type Selector = { matchExpressions?: { key: string; operator: string; values: string[] }[] };
type AffinityTerm = { labelSelector?: Selector; matchLabelKeys?: string[]; mismatchLabelKeys?: string[] };
type PodAffinity = { requiredDuringSchedulingIgnoredDuringExecution?: AffinityTerm[]; preferredDuringSchedulingIgnoredDuringExecution?: { podAffinityTerm: AffinityTerm }[] };

/**
 * kube 1.32's pod strategy on create (MatchLabelKeysInPodAffinity, beta and on since 1.31): the
 * pod's own value of each `matchLabelKeys` key is merged into the term's labelSelector as `key In
 * (value)`, of each `mismatchLabelKeys` key as `key NotIn (value)` (a term without a labelSelector
 * is left alone).
 */
const mergeMatchLabelKeys = (pod: KubeObject): void => {
  const labels = (pod.metadata as { labels?: Record<string, string> }).labels ?? {};
  const affinity = (pod['spec'] as { affinity?: { podAffinity?: PodAffinity; podAntiAffinity?: PodAffinity } }).affinity;
  const terms = [affinity?.podAffinity, affinity?.podAntiAffinity].flatMap((rules) => [
    ...(rules?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
    ...(rules?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((weighted) => weighted.podAffinityTerm),
  ]);
  for (const term of terms) {
    const selector = term.labelSelector;
    if (!selector) continue;
    const merged = [
      ...(term.matchLabelKeys ?? []).map((key) => ({ key, operator: 'In' })),
      ...(term.mismatchLabelKeys ?? []).map((key) => ({ key, operator: 'NotIn' })),
    ].flatMap(({ key, operator }) => (labels[key] === undefined ? [] : [{ key, operator, values: [labels[key]] }]));
    if (merged.length > 0) selector.matchExpressions = [...(selector.matchExpressions ?? []), ...merged];
  }
};

/**
 * What kube gives back for `doc` as applied (a copy; `doc` is left as it is): canonical
 * quantities, Secret stringData folded into base64 data, a Pod's matchLabelKeys and
 * mismatchLabelKeys merged into its affinity terms' selectors.
 */
export const asServed = <T extends KubeObject>(doc: T): T => {
  const walk = (value: unknown, key: string): unknown => {
    if (Array.isArray(value)) return value.map((item) => walk(item, ''));
    if (value === null || typeof value !== 'object') return QUANTITY_FIELDS.has(key) ? canonicalQuantity(value) : value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, QUANTITY_MAPS.has(key) ? canonicalQuantity(v) : walk(v, k)]));
  };
  const out = walk(doc, '') as T;
  if (out.kind === 'Secret' && out['stringData']) {
    const folded = Object.entries(out['stringData'] as Record<string, string>).map(([k, v]) => [k, Buffer.from(v).toString('base64')]);
    (out as KubeObject)['data'] = { ...(out['data'] as Record<string, string> | undefined), ...Object.fromEntries(folded) };
    delete out['stringData'];
  }
  if (out.kind === 'Pod') mergeMatchLabelKeys(out);
  return out;
};

/** A running `kubectl … -w`: its output so far, a wait for a line matching a pattern, and a stop. */
export interface KubectlWatch {
  output(): string;
  /** Resolves once the output matches `pattern`; rejects if kubectl exits first. */
  seen(pattern: RegExp): Promise<void>;
  stop(): void;
}

/** Starts `kubectl --kubeconfig <kubeconfig> --cache-dir <cacheDir> <args>` (a watch) in the background. */
export const watchKubectl = (kubeconfig: string, cacheDir: string, args: readonly string[]): KubectlWatch => {
  const child = spawn('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args]);
  let output = '';
  const listeners = new Set<() => void>();
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  });
  return {
    output: () => output,
    seen: (pattern) =>
      new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (!pattern.test(output)) return;
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
        child.once('exit', () => reject(new Error(`kubectl ${args.join(' ')} exited; output: ${output}`)));
        check();
      }),
    stop: () => child.kill(),
  };
};
