/**
 * The real kubectl against a `logplane up` cluster (`startCluster`, served over TLS as
 * users meet it) on one log, for a `describe` block: {@link useKubectlCluster} starts the
 * cluster in `beforeAll`, stops it and removes its directory in `afterAll`, and gives the
 * block kubectl (each call with the cluster's kubeconfig and its own discovery cache),
 * files to pass with `-f`, and waits on the cluster's projection.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { startCluster, type RunningCluster, type UpOptions } from '../../cli/up.ts';
import type { View } from '../../projections/index.ts';
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
