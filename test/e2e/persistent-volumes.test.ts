/**
 * PersistentVolumes with the real kubectl against `logplane up`'s cluster, on both logs (every
 * controller, the scheduler, three process-runtime nodes, the bundled default `local-path`
 * StorageClass): a StatefulSet of 3 with a volumeClaimTemplate gets web-0..2 in order, each
 * Running on the node its claim's volume was provisioned on, the claims Bound and the
 * volumes' directories on disk under `DATA/nodes/<node>/local-path`; once web-2 is gone,
 * deleting its claim removes the Delete-policy volume and its directory; a replay of the
 * log from offset 0 gives the live state hash.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Subscription } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { PersistentVolume, PersistentVolumeClaim, Pod } from '../../schemas/index.ts';
import { LOG_ADAPTERS, replayToLive } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';
import { STATEFUL } from './manifests.ts';

const nodeOf = (volume: PersistentVolume): string | undefined => volume.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values?.[0];

describe.each(LOG_ADAPTERS)('local-path PersistentVolumes with kubectl on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-pv', { nodes: 3, runtime: 'process' }, { kubectlTimeoutMs: 120_000 });
  const { ok, file, waitUntil } = harness;

  it('gives a StatefulSet of 3 bound local-path claims with directories on disk, in order, and removes a Delete volume with its claim', async () => {
    expect(await ok('get', 'storageclass')).toMatch(/^local-path \(default\)\s+rancher\.io\/local-path\s+Delete\s+WaitForFirstConsumer\s+false\s+\d+s$/m);
    const order: string[] = [];
    const subscription: Subscription = harness.cluster.projection.changes$.subscribe((change) => {
      const { object } = change;
      if (object.kind === 'Pod' && /^web-\d$/.test(object.metadata.name) && object.status?.phase === 'Running' && !order.includes(object.metadata.name)) order.push(object.metadata.name);
    });
    try {
      expect(await ok('apply', '-f', file('web.yaml', STATEFUL))).toBe('service/nginx created\nstatefulset.apps/web created\n');
      expect(await ok('rollout', 'status', 'statefulset/web', '--timeout=100s')).toContain('partitioned roll out complete: 3 new pods have been updated');
    } finally {
      subscription.unsubscribe();
    }
    expect(order).toEqual(['web-0', 'web-1', 'web-2']);

    const claims = (JSON.parse(await ok('get', 'pvc', '-o', 'json')) as { items: PersistentVolumeClaim[] }).items;
    expect(claims.map((c) => [c.metadata.name, c.status?.phase, c.spec?.storageClassName, c.status?.capacity?.['storage']])).toEqual([
      ['www-web-0', 'Bound', 'local-path', '1Gi'],
      ['www-web-1', 'Bound', 'local-path', '1Gi'],
      ['www-web-2', 'Bound', 'local-path', '1Gi'],
    ]);
    expect(await ok('get', 'pvc', 'www-web-0')).toMatch(/^www-web-0\s+Bound\s+pvc-[0-9a-f-]+\s+1Gi\s+RWO\s+local-path\s+<unset>\s+\d+s$/m);
    const volumes = (JSON.parse(await ok('get', 'pv', '-o', 'json')) as { items: PersistentVolume[] }).items;
    const pods = (JSON.parse(await ok('get', 'pods', '-l', 'app=web', '-o', 'json')) as { items: Pod[] }).items;
    expect(volumes).toHaveLength(3);
    for (const claim of claims) {
      const volume = volumes.find((v) => v.metadata.name === claim.spec?.volumeName) as PersistentVolume;
      const pod = pods.find((p) => `www-${p.metadata.name}` === claim.metadata.name) as Pod;
      expect(volume.status?.phase).toBe('Bound');
      expect(volume.spec?.claimRef).toMatchObject({ name: claim.metadata.name, uid: claim.metadata.uid });
      expect(volume.metadata.annotations?.['pv.kubernetes.io/provisioned-by']).toBe('rancher.io/local-path');
      expect(claim.metadata.annotations?.['volume.kubernetes.io/selected-node']).toBe(pod.spec.nodeName);
      // The scheduler chose the node; the volume is there, and the pod runs there.
      expect(nodeOf(volume)).toBe(pod.spec.nodeName);
      const path = join(harness.dir, 'nodes', pod.spec.nodeName ?? '', 'local-path', `${volume.metadata.name}_default_${claim.metadata.name}`);
      expect(volume.spec?.hostPath).toEqual({ path, type: 'DirectoryOrCreate' });
      expect(existsSync(path)).toBe(true);
      expect(pod.status?.phase).toBe('Running');
    }

    // The Delete policy: once web-2 is gone its claim may go, and the volume and its directory with it.
    const doomed = volumes.find((v) => v.spec?.claimRef?.name === 'www-web-2') as PersistentVolume;
    const doomedPath = doomed.spec?.hostPath?.path ?? '';
    expect(await ok('scale', 'statefulset', 'web', '--replicas=2')).toBe('statefulset.apps/web scaled\n');
    await waitUntil('web-2 is gone', (view) => view.get('Pod/default/web-2') === undefined);
    expect(await ok('delete', 'pvc', 'www-web-2', '--wait=true')).toBe('persistentvolumeclaim "www-web-2" deleted\n');
    await waitUntil('the volume of www-web-2 is gone', (view) => view.get(`PersistentVolume//${doomed.metadata.name}`) === undefined);
    expect(existsSync(doomedPath)).toBe(false);
    const left = await ok('get', 'pv', '-o', 'jsonpath={range .items[*]}{.spec.claimRef.name}={.status.phase}{"\\n"}{end}');
    expect(left.trim().split('\n').sort()).toEqual(['www-web-0=Bound', 'www-web-1=Bound']);

    const replay = await replayToLive(harness.cluster);
    expect(replay.liveHash).toBeDefined();
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 300_000);
});
