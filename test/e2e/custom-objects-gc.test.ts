/**
 * Custom objects in the garbage collector and the namespace controller end to end on both
 * logs, with the real kubectl against `startCluster` (every controller): a CRD's objects
 * owning a custom and a built-in object are deleted with `--cascade=foreground` (the
 * dependents go first), `--cascade=orphan` (the dependent stays without its reference) and
 * by default (Background: a built-in owner's custom dependent goes); a namespace holding a
 * custom object with a finalizer reports kube's NamespaceContentRemaining and
 * NamespaceFinalizersRemaining conditions until the finalizer is removed, then goes; and a
 * replay of the log from offset 0 gives the live state hash.
 */
import { describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import type { Namespace } from '../../schemas/index.ts';
import { LOG_ADAPTERS, replayToLive } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    kind: CronTab
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`;

const cronTab = (name: string, namespace = 'default', metadata: Record<string, unknown> = {}): string =>
  JSON.stringify({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name, namespace, ...metadata }, spec: { schedule: '*/5 * * * *' } });

const configMap = (name: string, metadata: Record<string, unknown> = {}): string => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', ...metadata }, data: { a: '1' } });

const cronTabKey = (name: string, namespace = 'default'): string => `CronTab.stable.example.com/${namespace}/${name}`;

describe.each(LOG_ADAPTERS)('custom objects collected as owners and dependents, and in a terminating namespace, with kubectl on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-custom-gc', {}, { kubectlTimeoutMs: 120_000 });
  const { ok, file, waitUntil } = harness;

  const create = async (name: string, json: string): Promise<string> => {
    await ok('create', '-f', file(`${name}.json`, json));
    return harness.cluster.projection.view().get(name.startsWith('cm-') ? `ConfigMap/default/${name}` : cronTabKey(name))?.metadata.uid ?? '';
  };
  const ownedBy = (kind: string, name: string, uid: string) => ({ ownerReferences: [{ apiVersion: kind === 'CronTab' ? 'stable.example.com/v1' : 'v1', kind, name, uid, blockOwnerDeletion: true }] });

  it('applies the CRD, which becomes Established', async () => {
    expect(await ok('apply', '-f', file('crd.yaml', CRD))).toBe('customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created\n');
    expect(await ok('wait', '--for=condition=Established', 'crd/crontabs.stable.example.com', '--timeout=60s')).toContain('condition met');
  }, 120_000);

  it('--cascade=foreground deletes a custom owner after its custom and built-in dependents', async () => {
    const parent = await create('parent', cronTab('parent'));
    expect(parent).not.toBe('');
    await create('child', cronTab('child', 'default', ownedBy('CronTab', 'parent', parent)));
    await create('cm-settings', configMap('cm-settings', ownedBy('CronTab', 'parent', parent)));
    const deletedWhileOwnerPresent: string[] = [];
    const subscription = harness.cluster.projection.changes$.subscribe((change) => {
      if (change.type === 'DELETED' && harness.cluster.projection.view().get(cronTabKey('parent'))) deletedWhileOwnerPresent.push(change.key);
    });
    try {
      expect(await ok('delete', 'crontab', 'parent', '--cascade=foreground', '--timeout=60s')).toBe('crontab.stable.example.com "parent" deleted\n');
      await waitUntil('the parent is gone', (view) => view.get(cronTabKey('parent')) === undefined);
    } finally {
      subscription.unsubscribe();
    }
    expect(deletedWhileOwnerPresent.sort()).toEqual(['ConfigMap/default/cm-settings', cronTabKey('child')]);
  }, 120_000);

  it('--cascade=orphan keeps the custom dependent, without its reference', async () => {
    const parent = await create('lone-parent', cronTab('lone-parent'));
    await create('orphan', cronTab('orphan', 'default', ownedBy('CronTab', 'lone-parent', parent)));
    await ok('delete', 'crontab', 'lone-parent', '--cascade=orphan', '--timeout=60s');
    await waitUntil('the owner is gone and its dependent orphaned', (view: View) => view.get(cronTabKey('lone-parent')) === undefined && view.get(cronTabKey('orphan'))?.metadata.ownerReferences === undefined);
    expect(JSON.parse(await ok('get', 'crontab', 'orphan', '-o', 'json')).spec).toEqual({ schedule: '*/5 * * * *' });
  }, 120_000);

  it("deletes a built-in owner's custom dependent in the background", async () => {
    const holder = await create('cm-holder', configMap('cm-holder'));
    await create('dependent', cronTab('dependent', 'default', ownedBy('ConfigMap', 'cm-holder', holder)));
    expect(await ok('delete', 'configmap', 'cm-holder')).toBe('configmap "cm-holder" deleted\n');
    await waitUntil('the custom dependent is gone', (view) => view.get(cronTabKey('dependent')) === undefined);
  }, 120_000);

  it('a terminating namespace reports the custom object and the finalizer that hold it, and goes once the finalizer is removed', async () => {
    expect(await ok('create', 'namespace', 'scratch')).toBe('namespace/scratch created\n');
    await ok('create', '-f', file('held.json', cronTab('held', 'scratch', { finalizers: ['example.com/hold'] })));
    expect(await ok('delete', 'namespace', 'scratch', '--wait=false')).toBe('namespace "scratch" deleted\n');
    const conditionOf = (view: View, type: string) => (view.get('Namespace//scratch') as Namespace | undefined)?.status?.conditions?.find((c) => c.type === type);
    await waitUntil('the namespace reports what holds it', (view) => conditionOf(view, 'NamespaceFinalizersRemaining')?.status === 'True');
    const shown = await ok('get', 'namespace', 'scratch', '-o', 'jsonpath={range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\\n"}{end}');
    expect(shown.trim().split('\n')).toEqual([
      'NamespaceDeletionDiscoveryFailure=False ResourcesDiscovered: All resources successfully discovered',
      'NamespaceDeletionGroupVersionParsingFailure=False ParsedGroupVersions: All legacy kube types successfully parsed',
      'NamespaceDeletionContentFailure=False ContentDeleted: All content successfully deleted, may be waiting on finalization',
      'NamespaceContentRemaining=True SomeResourcesRemain: Some resources are remaining: crontabs.stable.example.com has 1 resource instances',
      'NamespaceFinalizersRemaining=True SomeFinalizersRemain: Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
    ]);
    await ok('patch', 'crontab', 'held', '-n', 'scratch', '--type=merge', '-p', '{"metadata":{"finalizers":null}}');
    await waitUntil('the namespace is gone', (view) => view.get('Namespace//scratch') === undefined);
  }, 120_000);

  it('replays the log from offset 0 into the live state hash', async () => {
    const replay = await replayToLive(harness.cluster);
    expect(replay.liveHash).toBeDefined();
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 60_000);
});
