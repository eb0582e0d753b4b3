/**
 * The nodes' Leases on a real embedded log and projection: each Lease is created once on the
 * desired topic (when `kube-node-lease` exists), shaped as kubelet's, and renewed only by
 * heartbeats on their own topic, so the forever log does not grow with renewals; a deleted
 * Lease is recreated.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../log/embedded/index.ts';
import type { EventLog } from '../log/port.ts';
import { appendAndWait, createProjection, type Projection } from '../projections/index.ts';
import { decodeEvent, type EventBody, type Lease, type Node } from '../schemas/index.ts';
import { missingLeases, NODE_LEASE_NAMESPACE, nodeLeaseKey, startNodeLeases, type NodeLeases } from './node-lease.ts';

const ADMIN = { actor: { type: 'user' as const, name: 'admin' } };
const NODES = ['n1', 'n2'];

describe('the node agent\'s node leases', () => {
  let dir: string;
  let log: EventLog;
  let projection: Projection;
  let leases: NodeLeases | undefined;
  const write = async (...bodies: EventBody[]): Promise<void> => {
    await appendAndWait(log, projection, bodies, ADMIN);
  };
  const until = async (what: string, condition: () => boolean | Promise<boolean>): Promise<void> => {
    for (let waited = 0; !(await condition()); waited += 10) {
      if (waited > 10_000) throw new Error(`timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const namespace = (name: string): EventBody => ({ type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  const leaseOf = (node: string): Lease | undefined => projection.view().get(nodeLeaseKey(node)) as Lease | undefined;
  const heartbeats = async (): Promise<number> => (await log.endOffsets('heartbeats'))[0]!;
  /** The desired topic's Lease creations, in log order. */
  const leaseCreations = async (): Promise<string[]> =>
    (await log.read('desired', 0, 0))
      .map((record) => decodeEvent(record.value))
      .flatMap((event) => (event.body.type === 'ObjectCreated' && event.body.object.kind === 'Lease' ? [event.key] : []));

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'logplane-agent-node-lease-'));
    log = await createEmbeddedLog({ dir: join(dir, 'log'), cluster: 'test', partitions: 1 });
    projection = createProjection({ dir: join(dir, 'projection'), log, logger: pino({ level: 'silent' }) });
    await write(...NODES.map((name): EventBody => ({ type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Node', metadata: { name } } })));
  });
  afterEach(async () => {
    leases?.close();
    leases = undefined;
    await projection.close();
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('renews by heartbeats from the start, and creates each Lease once kube-node-lease exists, as kubelet shapes it', async () => {
    leases = startNodeLeases({ log, projection, logger: pino({ level: 'silent' }), nodes: NODES, renewIntervalMs: 20 });
    await until('three renewals', async () => (await heartbeats()) >= 3 * NODES.length);
    expect(await leaseCreations()).toEqual([]);

    const before = Date.now();
    await write(namespace(NODE_LEASE_NAMESPACE));
    await until('both Leases exist', () => NODES.every((node) => leaseOf(node) !== undefined));
    const node = projection.view().get('Node//n1') as Node;
    const lease = leaseOf('n1')!;
    expect(lease.metadata).toMatchObject({
      name: 'n1',
      namespace: NODE_LEASE_NAMESPACE,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: node.metadata.uid }],
    });
    expect(lease.spec).toMatchObject({ holderIdentity: 'n1', leaseDurationSeconds: 40 });
    expect(lease.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(Date.parse(lease.spec!.renewTime!)).toBeGreaterThanOrEqual(before);

    // Many renewals later, the desired topic still holds one creation per node: renewals are heartbeats.
    const beats = await heartbeats();
    await until('ten more renewals', async () => (await heartbeats()) >= beats + 10 * NODES.length);
    expect((await leaseCreations()).sort()).toEqual(NODES.map(nodeLeaseKey));
  });

  it('recreates a deleted Lease', async () => {
    await write(namespace(NODE_LEASE_NAMESPACE));
    leases = startNodeLeases({ log, projection, logger: pino({ level: 'silent' }), nodes: ['n1'], renewIntervalMs: 60_000 });
    await until('the Lease exists', () => leaseOf('n1') !== undefined);
    const first = leaseOf('n1')!.metadata.uid;
    await write({ type: 'ObjectDeleted', kind: 'Lease', namespace: NODE_LEASE_NAMESPACE, name: 'n1', expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null });
    // The renewal period is a minute: the deletion itself brings the Lease back.
    await until('the Lease is back', () => leaseOf('n1') !== undefined && leaseOf('n1')!.metadata.uid !== first);
  });

  it('creates no Lease in a terminating kube-node-lease, and none a node already holds', async () => {
    await write(namespace(NODE_LEASE_NAMESPACE));
    expect(missingLeases(projection.view(), ['n1', 'unregistered'], Date.now()).map((body) => body.type === 'ObjectCreated' && body.object.metadata.name)).toEqual(['n1']);
    const terminating = projection.view().get(`Namespace//${NODE_LEASE_NAMESPACE}`)!;
    await write({ type: 'ObjectUpdated', object: { ...terminating, metadata: { ...terminating.metadata, finalizers: ['test/hold'] } }, expectedResourceVersion: null, subresource: null });
    await write({ type: 'ObjectDeleted', kind: 'Namespace', namespace: null, name: NODE_LEASE_NAMESPACE, expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null });
    expect(projection.view().get(`Namespace//${NODE_LEASE_NAMESPACE}`)?.metadata.deletionTimestamp).toBeDefined();
    expect(missingLeases(projection.view(), ['n1'], Date.now())).toEqual([]);
  });
});
