/**
 * `logplane up` stopped with SIGINT in the middle of a rollout and started again on the
 * same data directory: the rollout completes, no pod is created twice, and the history
 * runs on without a seam (the log's offsets are contiguous across the restart, the
 * Deployment's history lists the versions before and after in order, and a replay of the
 * whole log gives the live state hash). Sim runtime, so that the pods of parallel test
 * files cannot collide on loopback addresses.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../cli/client.ts';
import type { AuditReply, HistoryReply, ReplayLine } from '../../cli/history/api.ts';
import type { Deployment, Pod, ReplicaSet } from '../../schemas/index.ts';
import {
  cleanup,
  clusterClient,
  echoManifest,
  freePort,
  isServing,
  kubectl,
  listPods,
  logplane,
  ok,
  okJson,
  startLogplane,
  tempDir,
  waitFor,
  type Daemon,
} from './process.ts';

type ReplayResult = Extract<ReplayLine, { type: 'result' }>;

const REPLICAS = 6;

const templateHash = (pod: Pod): string => pod.metadata.labels?.['pod-template-hash'] ?? '';

describe('logplane up stopped in the middle of a rollout and started again', { timeout: 180_000 }, () => {
  const dataDir = tempDir('logplane-restart-');
  const upArgs = (port: number) => ['up', '--data', dataDir, '--port', String(port), '--nodes', '3', '--runtime', 'sim', '--proxy', 'none'];
  let port: number;
  let up: Daemon;
  let kubeconfig: string;
  let client: Client;
  let oldHash: string;
  let stoppedAt: number;
  let restartedAt: number;

  const cli = (...args: string[]) => logplane(kubeconfig, args);
  const echoPods = (): Promise<Pod[]> => listPods(client, 'app=echo');

  const start = async (): Promise<void> => {
    up = startLogplane('logplane up', upArgs(port), { dataDir });
    const [, path] = await up.waitForOutput(/export KUBECONFIG=(\S+)/, 90_000);
    kubeconfig = path!;
    client = clusterClient(kubeconfig);
  };

  beforeAll(async () => {
    port = await freePort();
    await start();
    writeFileSync(join(dataDir, 'echo.yaml'), echoManifest({ replicas: REPLICAS }));
  });

  afterAll(async () => {
    if (up?.running()) await up.stop().catch(() => undefined);
    cleanup();
  });

  it(`rolls out ${REPLICAS} replicas`, async () => {
    ok(await cli('apply', '-f', join(dataDir, 'echo.yaml')));
    ok(await cli('rollout', 'status', 'deploy/echo', '--timeout', '90s'));
    const pods = await waitFor(`${REPLICAS} serving pods`, async () => {
      const all = await echoPods();
      return all.length === REPLICAS && all.every(isServing) && all;
    });
    oldHash = templateHash(pods[0]!);
    expect(new Set(pods.map(templateHash))).toEqual(new Set([oldHash]));
  });

  it('stops on SIGINT right after the first pod of a new version appears', async () => {
    let firstNew: Pod | undefined;
    const newPod = waitFor(
      'the first pod of the new version',
      async () => (firstNew = (await echoPods()).find((p) => templateHash(p) !== oldHash)),
      { intervalMs: 20, timeoutMs: 60_000 },
    );
    ok(await kubectl(kubeconfig, join(dataDir, 'kube-cache'), ['set', 'image', 'deploy/echo', 'echo=logplane/echo:2']));
    await newPod;
    const stopped = await up.stop({ signal: 'SIGINT', timeoutMs: 60_000 });
    stoppedAt = Date.now();
    expect(stopped.code).toBe(0);
    expect(firstNew?.spec.containers[0]?.image).toBe('logplane/echo:2');
  });

  it('starts again on the same data directory and completes the rollout', async () => {
    restartedAt = Date.now();
    await start();
    expect(kubeconfig).toBe(join(dataDir, 'kubeconfig'));
    // It was stopped mid-rollout: the log says so, as of the moment of the stop.
    const then = okJson<Deployment>(await cli('get', 'deploy', 'echo', '--at', String(stoppedAt), '-o', 'json'));
    expect(then.spec.template.spec.containers[0]?.image).toBe('logplane/echo:2');
    expect(then.status?.updatedReplicas ?? 0).toBeLessThan(REPLICAS);
    const podsThen = okJson<{ items: Pod[] }>(await cli('get', 'pods', '-l', 'app=echo', '--at', String(stoppedAt), '-o', 'json')).items;
    expect(podsThen.some((p) => templateHash(p) === oldHash), 'old pods at the stop').toBe(true);
    expect(podsThen.some((p) => templateHash(p) !== oldHash), 'new pods at the stop').toBe(true);

    expect(ok(await cli('rollout', 'status', 'deploy/echo', '--timeout', '120s'))).toContain('deployment "echo" successfully rolled out');
    const pods = await waitFor(`${REPLICAS} serving pods of the new version and no other`, async () => {
      const all = await echoPods();
      return all.length === REPLICAS && all.every((p) => isServing(p) && templateHash(p) !== oldHash) && all;
    });
    const listed = okJson<{ items: Pod[] }>(await cli('get', 'pods', '-l', 'app=echo', '-o', 'json')).items;
    expect(listed.map((p) => p.metadata.name).sort()).toEqual(pods.map((p) => p.metadata.name).sort());
    expect(new Set(listed.map((p) => p.metadata.name)).size).toBe(REPLICAS);
    const replicaSets = okJson<{ items: ReplicaSet[] }>(await cli('get', 'rs', '-o', 'json')).items;
    expect(replicaSets.map((rs) => [rs.metadata.labels?.['pod-template-hash'] === oldHash ? 'old' : 'new', rs.spec.replicas]).sort()).toEqual([
      ['new', REPLICAS],
      ['old', 0],
    ]);
  });

  it('created and bound every pod exactly once', async () => {
    const { events } = okJson<AuditReply>(await cli('audit', '--all', '--kind', 'pod', '--limit', '1000000', '-o', 'json'));
    const accepted = events.filter((e) => e.verdict.type === 'accepted');
    const creations = accepted.filter((e) => e.eventType === 'ObjectCreated').map((e) => e.key);
    const bindings = accepted.filter((e) => e.eventType === 'PodBound').map((e) => e.key);
    expect(new Set(creations).size, 'no pod name created twice').toBe(creations.length);
    expect(creations).toHaveLength(2 * REPLICAS);
    expect([...bindings].sort()).toEqual([...creations].sort());
  });

  it('keeps one continuous history across the restart', async () => {
    // Every event of the log, from both runs: the offsets of each topic run 0, 1, 2, … without a gap.
    const { events } = okJson<AuditReply>(await cli('audit', '--all', '--limit', '1000000', '-o', 'json'));
    for (const topic of ['desired', 'observed']) {
      const offsets = events.filter((e) => e.topic === topic).map((e) => e.offset!).sort((a, b) => a - b);
      expect(offsets, `offsets of ${topic}`).toEqual(offsets.map((_, i) => i));
      expect(events.some((e) => e.topic === topic && e.time < stoppedAt)).toBe(true);
      expect(events.some((e) => e.topic === topic && e.time > restartedAt)).toBe(true);
    }

    const { versions } = okJson<HistoryReply>(await cli('history', 'deploy/echo', '-o', 'json'));
    for (const topic of ['desired', 'observed']) {
      const offsets = versions.filter((v) => v.topic === topic).map((v) => v.offset);
      expect(offsets, `${topic} versions in position order`).toEqual([...offsets].sort((a, b) => a - b));
    }
    const byAdmin = versions.filter((v) => v.actor.type === 'user');
    expect(byAdmin.map((v) => [v.eventType, (v.object as Deployment).spec.template.spec.containers[0]?.image])).toEqual([
      ['ObjectCreated', 'logplane/echo:1'],
      ['ObjectUpdated', 'logplane/echo:2'],
    ]);
    expect(versions.some((v) => v.time < stoppedAt && v.actor.type === 'controller')).toBe(true);
    const last = versions.at(-1)!;
    expect(last.time).toBeGreaterThan(restartedAt);
    expect((last.object as Deployment).status).toMatchObject({ updatedReplicas: REPLICAS, readyReplicas: REPLICAS, availableReplicas: REPLICAS });

    const replay = okJson<ReplayResult>(await cli('replay', '-o', 'json'));
    expect(replay.stateHash).toBe(replay.liveStateHash);
    // The log grows while the cluster idles (the apiserver renews its Lease every 10 s), so
    // the replay, started after the audit, folds at least the events the audit listed.
    expect(replay.events).toBeGreaterThanOrEqual(events.length);
  });
});
