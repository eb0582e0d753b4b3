import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { filter, firstValueFrom, timeout } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { createProjection } from '../projections/index.ts';
import type { Pod } from '../schemas/index.ts';
import { ADMIN, appendAndApply, LOG_ADAPTERS, seedCluster } from './testing.ts';
import { createRuntimeMetrics, startReconciler, type Controller } from './runtime.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'main', image: 'logplane/echo:1' }] },
});

/**
 * A seeded cluster on the embedded log where pod x exists already, and a controller `name`
 * that creates pods x and y: x's create is rejected (AlreadyExists) every time, y's accepted.
 */
const rejectingFixture = async (name: string) => {
  const embedded = LOG_ADAPTERS.find((adapter) => adapter.name === 'embedded');
  if (!embedded) throw new Error('no embedded log adapter');
  const { log, close } = await embedded.open(1);
  cleanups.push(close);
  const dir = mkdtempSync(join(tmpdir(), 'logplane-runtime-'));
  const logger = pino({ level: 'silent' });
  const projection = createProjection({ dir, log, logger });
  cleanups.push(async () => {
    await projection.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await seedCluster(log, projection, []);
  await appendAndApply(log, projection, [{ body: { type: 'ObjectCreated', object: pod('x') }, actor: ADMIN }]);
  const decided = new Map<string, number>();
  const controller: Controller = {
    name,
    keysFor: () => [],
    initialKeys: () => ['Pod/default/x', 'Pod/default/y'],
    decide: (key) => {
      decided.set(key, (decided.get(key) ?? 0) + 1);
      return { commands: [{ type: 'ObjectCreated', object: pod(key.split('/')[2] as string) }] };
    },
  };
  return { log, projection, logger, decided, controller };
};

describe('the reconciler runtime', () => {
  it('retries with backoff exactly the keys whose commands the fold rejected', async () => {
    const { log, projection, logger, decided, controller } = await rejectingFixture('runtime-test');
    const runtime = await startReconciler({ controller, log, projection, logger, backoff: { baseMs: 5, maxMs: 20 } });
    cleanups.push(() => runtime.stop());
    await firstValueFrom(
      runtime.rounds$.pipe(
        filter(() => (decided.get('Pod/default/x') ?? 0) >= 4),
        timeout(10_000),
      ),
    );
    expect(decided.get('Pod/default/y')).toBe(1);
    expect(projection.view().get('Pod/default/y')).toBeDefined();
  });

  it('counts kube\'s workqueue metrics under the controller\'s kube name, and its consumer-group membership', async () => {
    // Named as logplane's replicationcontroller, whose kube workqueue is `replicationmanager`.
    const { log, projection, logger, decided, controller } = await rejectingFixture('replicationcontroller');
    const registry = new Registry();
    const runtime = await startReconciler({ controller, log, projection, logger, metrics: createRuntimeMetrics(registry), backoff: { baseMs: 5, maxMs: 20 }, maxRejectedRetries: 3 });
    const stopped = { done: false };
    cleanups.push(async () => {
      if (!stopped.done) await runtime.stop();
    });
    // 1 first try + 3 retries, then x is dropped as failed for good.
    await firstValueFrom(runtime.failures$.pipe(filter((failure) => failure.retryInMs === undefined), timeout(10_000)));
    const value = async (name: string, labels: Record<string, string>): Promise<number | undefined> =>
      (await registry.getSingleMetric(name)?.get())?.values.find((v) => Object.entries(labels).every(([key, label]) => v.labels[key] === label))?.value;
    const queue = { name: 'replicationmanager' };
    // x and y added once each, x re-added by each of its 3 retries.
    expect(await value('workqueue_adds_total', queue)).toBe(5);
    expect(await value('workqueue_retries_total', queue)).toBe(3);
    expect(await value('workqueue_queue_duration_seconds', { ...queue, le: '+Inf' })).toBe(5);
    expect(await value('workqueue_work_duration_seconds', { ...queue, le: '+Inf' })).toBe(5);
    expect(await value('workqueue_depth', queue)).toBe(0);
    expect(await value('workqueue_longest_running_processor_seconds', queue)).toBe(0);
    const group = { group: `${log.layout.cluster}.replicationcontroller` };
    expect(await value('logplane_consumer_group_assigned_partitions', { ...group, topic: 'desired' })).toBe(1);
    expect(await value('logplane_consumer_group_member', group)).toBe(1);
    expect(await value('logplane_consumer_group_rebalances_total', group)).toBe(1);
    expect(decided.get('Pod/default/x')).toBe(4);
    await runtime.stop();
    stopped.done = true;
    // A member that left is no longer counted.
    expect(await value('logplane_consumer_group_member', group)).toBeUndefined();
  });
});
