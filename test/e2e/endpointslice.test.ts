/**
 * The endpointslice controller end to end on both logs, with the real kubectl against
 * `startCluster` (sim runtime): a Service with a selector over a Deployment's pods gets an
 * EndpointSlice that `kubectl get endpointslices -l kubernetes.io/service-name=<svc>` lists with
 * the ready pods' addresses and the Service's ports; `kubectl scale` up and down changes its
 * endpoints; `kubectl delete service` removes the slice (owned by the Service, collected by
 * the garbage collector); a replay of the log from offset 0 gives the live state hash.
 */
import { describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import type { EndpointSlice, Pod } from '../../schemas/index.ts';
import { LOG_ADAPTERS, replayToLive } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

const MANIFESTS = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: logplane/echo
        ports:
        - name: http
          containerPort: 8080
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: http
`;

const MANAGED_BY = 'endpointslice-controller.k8s.io';

const slicesOf = (view: View): EndpointSlice[] =>
  (view.list('EndpointSlice', 'default') as EndpointSlice[]).filter(
    (s) => s.metadata.labels?.['kubernetes.io/service-name'] === 'web' && s.metadata.labels['endpointslice.kubernetes.io/managed-by'] === MANAGED_BY,
  );

/** The addresses of the ready endpoints of the Service's slices. */
const readyAddresses = (slices: readonly EndpointSlice[]): string[] =>
  slices.flatMap((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready === true).map((e) => e.addresses[0]!)).sort();

/** The pod IPs of the running web pods. */
const podIPs = (view: View): string[] =>
  (view.list('Pod', 'default') as Pod[])
    .filter((p) => p.metadata.labels?.['app'] === 'web' && p.metadata.deletionTimestamp == null && p.status?.phase === 'Running' && p.status.podIP)
    .map((p) => p.status!.podIP!)
    .sort();

describe.each(LOG_ADAPTERS)('the endpointslice controller with kubectl on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-slices');
  const { expectOk, file, waitUntil } = harness;

  const listed = async (): Promise<EndpointSlice[]> =>
    (JSON.parse(await expectOk('get', 'endpointslices', '-l', 'kubernetes.io/service-name=web', '-o', 'json')) as { items: EndpointSlice[] }).items;

  /** Waits until the slices hold exactly the running pods, `count` of them, as ready endpoints. */
  const settled = (count: number) => (view: View) => {
    const ips = podIPs(view);
    return ips.length === count && readyAddresses(slicesOf(view)).join() === ips.join();
  };

  it("lists a slice of the Service's ready pods with its ports", async () => {
    await expectOk('apply', '-f', file('web.yaml', MANIFESTS));
    await waitUntil('a slice with both pods', settled(2));
    const slices = await listed();
    expect(slices).toHaveLength(1);
    const [slice] = slices;
    expect(slice!.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
    expect(slice!.metadata.labels?.['endpointslice.kubernetes.io/managed-by']).toBe(MANAGED_BY);
    expect(slice!.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller])).toEqual([['Service', 'web', true]]);
    expect(slice!.addressType).toBe('IPv4');
    expect(slice!.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);
    expect(readyAddresses(slices)).toEqual(podIPs(harness.cluster.projection.view()));
    expect(slice!.endpoints?.every((e) => e.targetRef?.kind === 'Pod' && e.nodeName !== undefined)).toBe(true);
    const table = await expectOk('get', 'endpointslices', '-l', 'kubernetes.io/service-name=web');
    expect(table).toMatch(/IPv4\s+8080/);
  }, 120_000);

  it('follows kubectl scale up and down', async () => {
    await expectOk('scale', 'deployment', 'web', '--replicas=4');
    await waitUntil('a slice with four pods', settled(4));
    expect(readyAddresses(await listed())).toHaveLength(4);
    await expectOk('scale', 'deployment', 'web', '--replicas=1');
    await waitUntil('a slice with one pod', settled(1));
    expect(readyAddresses(await listed())).toEqual(podIPs(harness.cluster.projection.view()));
  }, 120_000);

  it('removes the slice with its Service', async () => {
    await expectOk('delete', 'service', 'web');
    await waitUntil('no slice of the deleted Service', (view) => slicesOf(view).length === 0);
    expect(await listed()).toEqual([]);
  }, 120_000);

  it('replays the log from offset 0 into the live state hash', async () => {
    const replay = await replayToLive(harness.cluster);
    expect(replay.liveHash).toBeDefined();
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 60_000);
});
