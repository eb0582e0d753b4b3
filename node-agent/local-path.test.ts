/**
 * The node agent's local-path part on a real embedded log and projection, with real
 * directories: a provisioned volume's directory is created on its node's agent only; on
 * deletion a Delete volume's directory goes before its finalizer, a Retain volume's data
 * stays, and a volume naming a path outside the node's local-path directory loses its
 * finalizer without anything on disk being removed.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../log/embedded/index.ts';
import type { EventLog } from '../log/port.ts';
import { appendAndWait, createProjection, type Projection } from '../projections/index.ts';
import { LOCAL_PATH_CLEANUP_FINALIZER } from '../projections/local-path.ts';
import type { EventBody, PersistentVolume } from '../schemas/index.ts';
import { localPathDir, startLocalPathVolumes, type LocalPathVolumes } from './local-path.ts';

const ADMIN = { actor: { type: 'user' as const, name: 'admin' } };

describe('the node agent\'s local-path volumes', () => {
  let dir: string;
  let log: EventLog;
  let projection: Projection;
  let agent: LocalPathVolumes;
  const dataDir = (): string => join(dir, 'nodes');
  const write = async (...bodies: EventBody[]): Promise<void> => {
    await appendAndWait(log, projection, bodies, ADMIN);
  };
  const volume = (name: string, node: string, policy: string, path = join(localPathDir(dataDir(), node), `${name}_default_data`)): PersistentVolume => ({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { 'pv.kubernetes.io/provisioned-by': 'rancher.io/local-path' }, finalizers: [LOCAL_PATH_CLEANUP_FINALIZER] },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: policy,
      hostPath: { path, type: 'DirectoryOrCreate' },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] }] } },
    },
  });
  const current = (name: string): PersistentVolume | undefined => projection.view().get(`PersistentVolume//${name}`) as PersistentVolume | undefined;
  const until = async (what: string, condition: () => boolean): Promise<void> => {
    for (let waited = 0; !condition(); waited += 10) {
      if (waited > 10_000) throw new Error(`timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const remove = (name: string): Promise<void> =>
    write({ type: 'ObjectDeleted', kind: 'PersistentVolume', namespace: null, name, expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'logplane-agent-local-path-'));
    log = await createEmbeddedLog({ dir: join(dir, 'log'), cluster: 'test', partitions: 1 });
    projection = createProjection({ dir: join(dir, 'projection'), log, logger: pino({ level: 'silent' }) });
    agent = startLocalPathVolumes({ log, projection, logger: pino({ level: 'silent' }), nodes: ['n1'], dataDir: dataDir() });
  });
  afterEach(async () => {
    await agent.close();
    await projection.close();
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the directory of a volume on its node only, and removes a Delete volume\'s directory before its finalizer', async () => {
    await write({ type: 'ObjectCreated', object: volume('pv-a', 'n1', 'Delete') }, { type: 'ObjectCreated', object: volume('pv-elsewhere', 'n2', 'Delete') });
    const path = volume('pv-a', 'n1', 'Delete').spec?.hostPath?.path ?? '';
    await until('pv-a has its directory', () => existsSync(path));
    expect(existsSync(volume('pv-elsewhere', 'n2', 'Delete').spec?.hostPath?.path ?? '')).toBe(false);
    writeFileSync(join(path, 'data.txt'), 'hello');
    await remove('pv-elsewhere');
    await remove('pv-a');
    await until('pv-a is gone', () => current('pv-a') === undefined);
    expect(existsSync(path)).toBe(false);
    // The other node's volume (deleted first) is not this agent's to release.
    expect(current('pv-elsewhere')?.metadata.finalizers).toEqual([LOCAL_PATH_CLEANUP_FINALIZER]);
  });

  it('keeps a Retain volume\'s data, and never removes a path outside the node\'s local-path directory', async () => {
    const outside = join(dir, 'precious');
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep.txt'), 'keep');
    await write({ type: 'ObjectCreated', object: volume('pv-keep', 'n1', 'Retain') }, { type: 'ObjectCreated', object: volume('pv-outside', 'n1', 'Delete', outside) });
    const kept = volume('pv-keep', 'n1', 'Retain').spec?.hostPath?.path ?? '';
    await until('pv-keep has its directory', () => existsSync(kept));
    await remove('pv-keep');
    await remove('pv-outside');
    await until('both volumes are gone', () => current('pv-keep') === undefined && current('pv-outside') === undefined);
    expect(existsSync(kept)).toBe(true);
    expect(existsSync(join(outside, 'keep.txt'))).toBe(true);
  });
});
