/**
 * The nodes' Leases in `kube-node-lease` with the real kubectl, on both logs (`startCluster`,
 * two sim nodes renewing every 300 ms): `kubectl get leases` lists one Lease per node held
 * by it; `kubectl get -o json` shows `renewTime` advancing with the heartbeats while the
 * stored Lease (its resourceVersion, and a read of the past) stays as created, so renewals
 * do not grow the forever log; `kubectl describe` shows the Lease; deleting the Node deletes its Lease (owner
 * reference, garbage collector); and a replay from offset 0 gives the live state hash.
 */
import { describe, expect, it } from 'vitest';
import type { Lease } from '../../schemas/index.ts';
import { LOG_ADAPTERS, replayToLive } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

const RENEW_MS = 300;
const LEASE_KEY = (node: string): string => `Lease.coordination.k8s.io/kube-node-lease/${node}`;

describe.each(LOG_ADAPTERS)('node leases with kubectl on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-node-lease', { nodes: 2, heartbeatMs: RENEW_MS });
  const { expectOk, waitUntil } = harness;
  const leaseJson = async (node: string): Promise<Lease> => JSON.parse(await expectOk('get', 'lease', node, '-n', 'kube-node-lease', '-o', 'json')) as Lease;

  it('lists one Lease per node in kube-node-lease, held by the node', async () => {
    await waitUntil('both nodes hold a Lease', (view) => ['node-1', 'node-2'].every((node) => view.get(LEASE_KEY(node)) !== undefined));
    const table = await expectOk('get', 'leases', '-n', 'kube-node-lease');
    expect(table).toMatch(/^NAME\s+HOLDER\s+AGE\n/);
    expect(table).toMatch(/^node-1\s+node-1\s+\d+s$/m);
    expect(table).toMatch(/^node-2\s+node-2\s+\d+s$/m);
    expect(table.trim().split('\n')).toHaveLength(3);
  });

  it('serves renewTime from the heartbeats while the stored Lease stays as created', async () => {
    const first = await leaseJson('node-1');
    const node = JSON.parse(await expectOk('get', 'node', 'node-1', '-o', 'json')) as { metadata: { uid: string } };
    expect(first.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Node', name: 'node-1', uid: node.metadata.uid }]);
    expect(first.spec).toMatchObject({ holderIdentity: 'node-1', leaseDurationSeconds: 40 });
    let later = first;
    for (let tries = 0; tries < 50 && later.spec?.renewTime === first.spec?.renewTime; tries++) {
      await new Promise((resolve) => setTimeout(resolve, RENEW_MS));
      later = await leaseJson('node-1');
    }
    expect(Date.parse(later.spec!.renewTime!)).toBeGreaterThan(Date.parse(first.spec!.renewTime!));
    expect(later.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    // The renewal is recent: within a few periods of now.
    expect(Date.now() - Date.parse(later.spec!.renewTime!)).toBeLessThan(10_000);
    // A read of the past shows the Lease as the log holds it: renewed when its agent created it.
    const stored = harness.cluster.projection.view().get(LEASE_KEY('node-1')) as Lease;
    const path = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
    const { metadata } = JSON.parse(await expectOk('get', '--raw', path)) as { metadata: { resourceVersion: string } };
    const past = JSON.parse(await expectOk('get', '--raw', `${path}?resourceVersion=${metadata.resourceVersion}&resourceVersionMatch=Exact`)) as { items: Lease[] };
    expect(past.items.find((lease) => lease.metadata.name === 'node-1')?.spec?.renewTime).toBe(stored.spec?.renewTime);
    expect(Date.parse(stored.spec!.renewTime!)).toBeLessThan(Date.parse(later.spec!.renewTime!));
  });

  it('describes a node Lease', async () => {
    const text = await expectOk('describe', 'lease', 'node-2', '-n', 'kube-node-lease');
    expect(text).toMatch(/^Name:\s+node-2$/m);
    expect(text).toMatch(/^Namespace:\s+kube-node-lease$/m);
    expect(text).toMatch(/Holder Identity:\s+node-2/);
    expect(text).toMatch(/Lease Duration Seconds:\s+40/);
    expect(text).toMatch(/Renew Time:\s+\d{4}-\d\d-\d\dT/);
    expect(text).toMatch(/Kind:\s+Node/);
  });

  it('deletes a Lease with its Node', async () => {
    await expectOk('delete', 'node', 'node-2', '--wait=false');
    await waitUntil('node-2 and its Lease are gone', (view) => view.get('Node//node-2') === undefined && view.get(LEASE_KEY('node-2')) === undefined);
    expect(await expectOk('get', 'leases', '-n', 'kube-node-lease', '-o', 'name')).toBe('lease.coordination.k8s.io/node-1\n');
  });

  it('replays the log from offset 0 into the live state hash', async () => {
    const replay = await replayToLive(harness.cluster);
    expect(replay.liveHash).toBeDefined();
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 60_000);
});
