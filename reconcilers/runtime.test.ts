import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { filter, firstValueFrom, timeout } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { createProjection } from '../projections/index.ts';
import type { Pod } from '../schemas/index.ts';
import { ADMIN, appendAndApply, LOG_ADAPTERS, seedCluster } from './testing.ts';
import { startReconciler, type Controller } from './runtime.ts';

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

describe('the reconciler runtime', () => {
  it('retries with backoff exactly the keys whose commands the fold rejected', async () => {
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
    // x exists already, so creating it again is rejected (AlreadyExists); y's create is accepted.
    await appendAndApply(log, projection, [{ body: { type: 'ObjectCreated', object: pod('x') }, actor: ADMIN }]);
    const decided = new Map<string, number>();
    const controller: Controller = {
      name: 'runtime-test',
      keysFor: () => [],
      initialKeys: () => ['Pod/default/x', 'Pod/default/y'],
      decide: (key) => {
        decided.set(key, (decided.get(key) ?? 0) + 1);
        return { commands: [{ type: 'ObjectCreated', object: pod(key.split('/')[2] as string) }] };
      },
    };
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
});
