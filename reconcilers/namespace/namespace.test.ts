/**
 * The namespace controller's decisions on a real projection: a deleted namespace goes
 * Terminating and refuses new content; its content is deleted; kube's five deletion
 * conditions are reported once everything is being deleted (False with kube's "ok" reasons,
 * or NamespaceContentRemaining / NamespaceFinalizersRemaining True counting what remains
 * per resource and per finalizer, their transition times moving only with their status);
 * and the namespace is released once it is empty and its conditions say so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EventBody, KubeObject, Namespace, NamespaceCondition } from '../../schemas/index.ts';
import { deleteCommand, updateCommand } from '../replicaset/objects.ts';
import { createTestCluster, nodeObject, type TestCluster } from '../testing.ts';
import { decideNamespace } from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const NOW = Date.UTC(2030, 0, 1);
const KEY = 'Namespace//team';

const ALL_WELL = (at: string): NamespaceCondition[] => [
  { type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered', lastTransitionTime: at },
  { type: 'NamespaceDeletionGroupVersionParsingFailure', status: 'False', reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed', lastTransitionTime: at },
  { type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization', lastTransitionTime: at },
  { type: 'NamespaceContentRemaining', status: 'False', reason: 'ContentRemoved', message: 'All content successfully removed', lastTransitionTime: at },
  { type: 'NamespaceFinalizersRemaining', status: 'False', reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished', lastTransitionTime: at },
];

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A cluster with namespace `team` holding `content`, then deleted. */
const terminating = (...content: KubeObject[]): TestCluster => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  cluster.create(nodeObject('n1'));
  cluster.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } } as Namespace);
  for (const object of content) cluster.create(object);
  const [deleted] = cluster.apply(deleteCommand(cluster.view().get(KEY) as KubeObject));
  expect(deleted?.verdict).toEqual({ type: 'accepted' });
  return cluster;
};

/** Decides the namespace at `now` and folds the commands; returns their types (status writes as `status`). */
const step = (cluster: TestCluster, now = NOW): string[] => {
  const { commands } = decideNamespace(KEY, cluster.view(), now);
  cluster.apply(...commands);
  return commands.map((command: EventBody) => (command.type === 'ObjectUpdated' && command.subresource === 'status' ? 'status' : command.type));
};

const conditionsOf = (cluster: TestCluster): NamespaceCondition[] | undefined => (cluster.view().get(KEY) as Namespace | undefined)?.status?.conditions;

describe('namespace deletion', () => {
  it('goes Terminating, refuses new content, deletes what is in it, reports all is well, then disappears', () => {
    const service: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'team' }, spec: { ports: [{ port: 80 }] } };
    const cluster = terminating(service);
    const namespace = cluster.view().get(KEY) as Namespace;
    expect(namespace.metadata.finalizers).toEqual(['kubernetes']);
    expect(namespace.status?.phase).toBe('Terminating');
    const [late] = cluster.apply({ type: 'ObjectCreated', object: { ...service, metadata: { name: 'late', namespace: 'team' } } });
    expect(late?.verdict).toMatchObject({ type: 'rejected', reason: 'Forbidden' });

    expect(step(cluster)).toEqual(['ObjectDeleted']);
    expect(cluster.view().get('Service/team/web')).toBeUndefined();
    expect(step(cluster)).toEqual(['status']);
    expect(conditionsOf(cluster)).toEqual(ALL_WELL(iso(NOW)));
    expect((cluster.view().get(KEY) as Namespace).status?.phase).toBe('Terminating');
    expect(step(cluster)).toEqual(['ObjectUpdated']);
    expect(cluster.view().get(KEY)).toBeUndefined();
    expect(decideNamespace(KEY, cluster.view(), NOW).commands).toEqual([]);
  });

  it('reports the content and finalizers that remain, then all is well once they are gone (transition times move with the status)', () => {
    const held: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: 'team', finalizers: ['example.com/hold', 'example.com/audit'] }, data: {} };
    const alsoHeld: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'app', namespace: 'team', finalizers: ['example.com/hold'] }, spec: { selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'a', image: 'a' }] } } } };
    const running: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'running', namespace: 'team' }, spec: { nodeName: 'n1', containers: [{ name: 'a', image: 'a' }] } };
    const cluster = terminating(held, alsoHeld, running);

    expect(step(cluster)).toEqual(['ObjectDeleted', 'ObjectDeleted', 'ObjectDeleted']);
    // Everything is being deleted: the held objects and the pod (stopping gracefully on its node) remain.
    expect(step(cluster)).toEqual(['status']);
    const at = iso(NOW);
    const remaining = ALL_WELL(at).map((condition) => {
      if (condition.type === 'NamespaceContentRemaining') {
        return { ...condition, status: 'True', reason: 'SomeResourcesRemain', message: 'Some resources are remaining: configmaps. has 1 resource instances, deployments.apps has 1 resource instances, pods. has 1 resource instances' };
      }
      if (condition.type === 'NamespaceFinalizersRemaining') {
        return { ...condition, status: 'True', reason: 'SomeFinalizersRemain', message: 'Some content in the namespace has finalizers remaining: example.com/audit in 1 resource instances, example.com/hold in 2 resource instances' };
      }
      return condition;
    });
    expect(conditionsOf(cluster)).toEqual(remaining);
    expect(step(cluster, NOW + 1_000)).toEqual([]);

    // The pod stops and the config map's finalizers are removed: only the deployment remains, held.
    const pod = cluster.view().get('Pod/team/running') as KubeObject;
    const map = cluster.view().get('ConfigMap/team/held') as KubeObject;
    cluster.apply({ ...deleteCommand(pod), gracePeriodSeconds: 0 }, updateCommand(map, { ...map, metadata: { ...map.metadata, finalizers: [] } }));
    expect(cluster.view().get('ConfigMap/team/held')).toBeUndefined();
    expect(step(cluster, NOW + 2_000)).toEqual(['status']);
    expect(conditionsOf(cluster)?.slice(3)).toEqual([
      { ...remaining[3], message: 'Some resources are remaining: deployments.apps has 1 resource instances' },
      { ...remaining[4], message: 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances' },
    ]);

    const deployment = cluster.view().get('Deployment/team/app') as KubeObject;
    cluster.apply(updateCommand(deployment, { ...deployment, metadata: { ...deployment.metadata, finalizers: [] } }));
    expect(step(cluster, NOW + 3_000)).toEqual(['status']);
    const later = iso(NOW + 3_000);
    expect(conditionsOf(cluster)).toEqual(ALL_WELL(at).map((condition, index) => (index >= 3 ? { ...condition, lastTransitionTime: later } : condition)));
    expect(step(cluster, NOW + 4_000)).toEqual(['ObjectUpdated']);
    expect(cluster.view().get(KEY)).toBeUndefined();
  });
});
