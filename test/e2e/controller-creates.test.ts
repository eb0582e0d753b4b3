/**
 * Objects a controller creates go through the apiserver's create path, as in kube (where a
 * controller's create is a POST): a Deployment whose pod template asks for anti-affinity with
 * `matchLabelKeys: [pod-template-hash]` gets pods whose term selects their own ReplicaSet's
 * hash (kube's Pod PrepareForCreate), while the template itself keeps the keys unmerged;
 * `debug reconcile` of the ReplicaSet at that decision gives the very pods recorded; a replay
 * from offset 0 gives the live hash. On both logs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectHistory } from '../../projections/index.ts';
import type { Deployment, Pod } from '../../schemas/index.ts';
import { LOG_ADAPTERS, replayToLive, startTestCluster, waitForView, type TestCluster } from './helpers.ts';

const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'spread' },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'spread' } },
    template: {
      metadata: { labels: { app: 'spread' } },
      spec: {
        containers: [{ name: 'main', image: 'logplane/sleeper', resources: { requests: { cpu: '10m', memory: '16Mi' } } }],
        affinity: {
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 100,
                podAffinityTerm: { labelSelector: { matchLabels: { app: 'spread' } }, topologyKey: 'kubernetes.io/hostname', matchLabelKeys: ['pod-template-hash'] },
              },
            ],
          },
        },
      },
    },
  },
};

const selectorOf = (pod: Pod) => pod.spec.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.podAffinityTerm?.labelSelector;

describe.each(LOG_ADAPTERS)('objects a controller creates, on the %s log', (adapter) => {
  let test: TestCluster;
  let pods: Pod[] = [];

  beforeAll(async () => {
    test = await startTestCluster(adapter, 'e2e-controller-creates', { nodes: 2, runtime: 'sim', proxy: 'none' });
  }, 60_000);

  afterAll(async () => {
    await test?.stop();
  });

  it("pass through the apiserver's create path: the ReplicaSet's pods get their template hash merged into the affinity term", async () => {
    await test.api.create(DEPLOYMENTS, deployment);
    pods = await waitForView(test.cluster.projection, 'two pods of the Deployment', (view) => {
      const found = (view.list('Pod', 'default') as Pod[]).filter((pod) => pod.metadata.labels?.['app'] === 'spread');
      return found.length === 2 ? found : undefined;
    });
    for (const pod of pods) {
      const hash = pod.metadata.labels?.['pod-template-hash'];
      expect(hash).toMatch(/^[a-z0-9]+$/);
      expect(selectorOf(pod)).toEqual({ matchLabels: { app: 'spread' }, matchExpressions: [{ key: 'pod-template-hash', operator: 'In', values: [hash] }] });
    }
    // The template is not a Pod: its term keeps the keys, unmerged.
    const stored = test.cluster.projection.view().get('Deployment/default/spread') as Deployment;
    const term = stored.spec?.template.spec?.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.podAffinityTerm;
    expect(term?.labelSelector).toEqual({ matchLabels: { app: 'spread' } });
    expect(term?.matchLabelKeys).toEqual(['pod-template-hash']);
  });

  it('debug reconcile of the ReplicaSet at its decision gives the pods it recorded', async () => {
    const pod = pods[0] as Pod;
    const owner = pod.metadata.ownerReferences?.[0];
    expect(owner?.kind).toBe('ReplicaSet');
    const { store, partitions } = test.cluster.projection;
    const [created] = objectHistory(store, partitions, `Pod/default/${pod.metadata.name}`);
    const decidedAt = created ? store.events.get(created.eventId)?.decidedAt : undefined;
    expect(decidedAt).toBeTruthy();
    const query = new URLSearchParams({ controller: 'replicaset', key: `ReplicaSet/default/${owner?.name}`, at: decidedAt as string });
    const answer = await test.api.request('GET', `/logplane/v1/debug/reconcile?${query}`);
    expect(answer.status).toBe(200);
    const result = answer.body as { identical: boolean; commands: { type: string; object?: Pod }[] };
    const createdPods = result.commands.filter((command) => command.type === 'ObjectCreated' && command.object?.kind === 'Pod');
    expect(createdPods.length).toBeGreaterThan(0);
    for (const command of createdPods) expect(selectorOf(command.object as Pod)?.matchExpressions?.[0]?.key).toBe('pod-template-hash');
    expect(result.identical).toBe(true);
  });

  it('replays from offset 0 into the live state hash', async () => {
    const { replayHash, liveHash } = await replayToLive(test.cluster);
    expect(replayHash).toBe(liveHash);
  });
});
