/**
 * The endpointslice-mirroring controller end to end on both logs, with the real kubectl
 * against `startCluster`: a Service without a selector and a hand-written Endpoints applied
 * with `kubectl apply` are mirrored into an EndpointSlice that `kubectl get endpointslices -l
 * kubernetes.io/service-name=<svc>` lists with the addresses and ports; a change of the
 * Endpoints updates it; the skip-mirror label removes it, removing the label brings it back,
 * and deleting the Endpoints removes it; a replay of the log from offset 0 gives the live state hash.
 */
import { describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import { decideMirroredSlices } from '../../reconcilers/endpointslice-mirroring/index.ts';
import type { EndpointSlice } from '../../schemas/index.ts';
import { LOG_ADAPTERS, replayToLive } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: legacy-db
spec:
  ports:
  - name: pg
    port: 5432
`;

const endpointsManifest = (ips: readonly string[], port: number, labels = ''): string => `apiVersion: v1
kind: Endpoints
metadata:
  name: legacy-db
  labels:
    team: data
${labels}subsets:
- addresses:
${ips.map((ip) => `  - ip: ${ip}`).join('\n')}
  ports:
  - name: pg
    port: ${port}
    protocol: TCP
`;

const mirrored = (view: View): EndpointSlice[] =>
  (view.list('EndpointSlice', 'default') as EndpointSlice[]).filter(
    (s) => s.metadata.labels?.['kubernetes.io/service-name'] === 'legacy-db' && s.metadata.labels['endpointslice.kubernetes.io/managed-by'] === 'endpointslicemirroring-controller.k8s.io',
  );

const addressesIn = (view: View): string[] => mirrored(view).flatMap((s) => (s.endpoints ?? []).map((e) => e.addresses[0]!)).sort();

describe.each(LOG_ADAPTERS)('endpointslice mirroring with kubectl on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-mirror');
  const { expectOk, file, waitUntil } = harness;

  /** The mirrored slices as `kubectl get endpointslices -l` lists them. */
  const listed = async (): Promise<EndpointSlice[]> =>
    (JSON.parse(await expectOk('get', 'endpointslices', '-l', 'kubernetes.io/service-name=legacy-db', '-o', 'json')) as { items: EndpointSlice[] }).items;

  it('mirrors a hand-written Endpoints of a selectorless Service into an EndpointSlice', async () => {
    await expectOk('apply', '-f', file('svc.yaml', SERVICE));
    await expectOk('apply', '-f', file('eps.yaml', endpointsManifest(['10.1.0.1', '10.1.0.2'], 5432)));
    await waitUntil('the mirrored slice', (view) => addressesIn(view).join() === '10.1.0.1,10.1.0.2');
    const [slice, ...rest] = await listed();
    expect(rest).toEqual([]);
    expect(slice!.metadata.name).toMatch(/^legacy-db-[a-z0-9]{5}$/);
    expect(slice!.metadata.labels).toEqual({ team: 'data', 'kubernetes.io/service-name': 'legacy-db', 'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io' });
    expect(slice!.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller])).toEqual([['Endpoints', 'legacy-db', true]]);
    expect(slice!.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration']).toBeUndefined();
    expect(slice!.addressType).toBe('IPv4');
    expect(slice!.ports).toEqual([{ name: 'pg', port: 5432, protocol: 'TCP' }]);
    expect(slice!.endpoints?.map((e) => [e.addresses, e.conditions?.ready])).toEqual([[['10.1.0.1'], true], [['10.1.0.2'], true]]);
    // What the apiserver stored is what the controller wants: it has nothing more to do.
    expect(decideMirroredSlices('Endpoints/default/legacy-db', harness.cluster.projection.view()).commands).toEqual([]);
    // Nothing else is mirrored (the `kubernetes` Service's Endpoints carry skip-mirror).
    const all = await expectOk('get', 'endpointslices', '-A', '-l', 'endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io', '-o', 'name');
    expect(all.trim().split('\n')).toEqual([`endpointslice.discovery.k8s.io/${slice!.metadata.name}`]);
    const table = await expectOk('get', 'endpointslices', '-l', 'kubernetes.io/service-name=legacy-db');
    expect(table).toContain('5432');
    expect(table).toContain('10.1.0.1,10.1.0.2');
  }, 120_000);

  it('updates the slice when the Endpoints change', async () => {
    await expectOk('apply', '-f', file('eps.yaml', endpointsManifest(['10.1.0.3'], 6543)));
    await waitUntil('the updated slice', (view) => addressesIn(view).join() === '10.1.0.3' && mirrored(view)[0]?.ports?.[0]?.port === 6543);
    const slices = await listed();
    expect(slices.map((s) => [s.ports?.[0]?.port, (s.endpoints ?? []).map((e) => e.addresses[0])])).toEqual([[6543, ['10.1.0.3']]]);
    expect(decideMirroredSlices('Endpoints/default/legacy-db', harness.cluster.projection.view()).commands).toEqual([]);
  }, 120_000);

  it('removes the slice for the skip-mirror label and for a deleted Endpoints', async () => {
    await expectOk('label', 'endpoints', 'legacy-db', 'endpointslice.kubernetes.io/skip-mirror=true');
    await waitUntil('no mirrored slice (skip-mirror)', (view) => mirrored(view).length === 0);
    expect(await listed()).toEqual([]);
    await expectOk('label', 'endpoints', 'legacy-db', 'endpointslice.kubernetes.io/skip-mirror-');
    await waitUntil('the slice mirrored again', (view) => addressesIn(view).join() === '10.1.0.3');
    expect(await listed()).toHaveLength(1);
    await expectOk('delete', 'endpoints', 'legacy-db');
    await waitUntil('no mirrored slice (Endpoints deleted)', (view) => mirrored(view).length === 0);
    expect(await listed()).toEqual([]);
  }, 120_000);

  it('replays the log from offset 0 into the live state hash', async () => {
    const replay = await replayToLive(harness.cluster);
    expect(replay.liveHash).toBeDefined();
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 60_000);
});
