/**
 * Test helpers for the pod runtime: pod builders and wait-for-condition on `statuses$`.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { filter, firstValueFrom, timeout } from 'rxjs';
import { afterAll } from 'vitest';
import type { PodStatusUpdate } from './pod-driver.ts';
import type { Container, ContainerStatus, Pod, PodSpec } from '../../schemas/index.ts';
import type { PodRuntime } from './runtime.ts';

/** A quiet logger (set LOGPLANE_TEST_LOG=debug to see the runtime's lines). */
export const testLogger = pino({ level: process.env.LOGPLANE_TEST_LOG ?? 'silent' });

/** Directories made by `tempDir` in this test file, removed once its tests are done. */
const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});

/** A fresh temporary directory, removed after the test file's last test. */
export function tempDir(prefix = 'logplane-kubelet-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/**
 * A fresh temporary directory that pods may write to and read from (mode 0777): pods run as
 * another user than a root agent (`nobody`), and `tempDir`'s directories are the agent's alone.
 */
export function sharedDir(prefix = 'logplane-shared-'): string {
  const dir = tempDir(prefix);
  chmodSync(dir, 0o777);
  return dir;
}

/** A pod in `default` with a fresh uid, bound to `node`. */
export function makePod(name: string, containers: readonly Container[], spec: Partial<PodSpec> = {}, node = 'node-a'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: randomUUID() },
    spec: { nodeName: node, ...spec, containers: [...containers] },
  };
}

/** Resolves with the first status update of `pod` that satisfies `predicate`; rejects after `ms`. */
export function waitForStatus(runtime: PodRuntime, pod: Pod, predicate: (update: PodStatusUpdate) => boolean, ms = 15_000): Promise<PodStatusUpdate> {
  return firstValueFrom(
    runtime.statuses$.pipe(
      filter((update) => update.uid === pod.metadata.uid && predicate(update)),
      timeout({ first: ms, with: () => Promise.reject(new Error(`timed out after ${ms} ms waiting for a status of pod ${pod.metadata.name}`)) }),
    ),
  );
}

/** The status of the pod's container (first one by default). */
export function containerStatus(update: PodStatusUpdate, name?: string): ContainerStatus {
  const statuses = update.status.containerStatuses ?? [];
  const found = name === undefined ? statuses[0] : statuses.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no container status ${name ?? ''} in ${JSON.stringify(update.status)}`);
  return found;
}

/** The pid of a process-runtime container from its containerID (`process://<pid>`). */
export function pidOf(status: ContainerStatus): number {
  const match = /^process:\/\/(\d+)$/.exec(status.containerID ?? '');
  if (match === null) throw new Error(`containerID ${status.containerID} is not a process id`);
  return Number(match[1]);
}

/** The condition `type` of a pod status. */
export function condition(update: PodStatusUpdate, type: string): string | undefined {
  return update.status.conditions?.find((c) => c.type === type)?.status ?? undefined;
}

/** Retries `fn` until it resolves, up to `ms` (for readers of things outside statuses$, like HTTP). */
export async function eventually<T>(fn: () => Promise<T>, ms = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  }
}
