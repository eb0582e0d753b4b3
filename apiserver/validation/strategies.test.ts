import { describe, expect, it } from 'vitest';
import { resourceOfKind } from '../resources.ts';
import { admitCreate, admitStatus, admitUpdate } from './admit.ts';

const create = (kind: Parameters<typeof resourceOfKind>[0], body: unknown) =>
  admitCreate({ resource: resourceOfKind(kind), body, fieldValidation: 'Strict', namespace: 'default' }).object as unknown as Record<string, any>;

const pod = (resources: Record<string, unknown>[], initResources: Record<string, unknown>[] = []) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p' },
  spec: {
    containers: resources.map((r, i) => ({ name: `c${i}`, image: 'nginx:1.27', resources: r })),
    ...(initResources.length > 0 ? { initContainers: initResources.map((r, i) => ({ name: `i${i}`, image: 'busybox:1.36', resources: r })) } : {}),
  },
});

describe('Pod create: status.qosClass (kube podStrategy.PrepareForCreate)', () => {
  it.each<[string, Record<string, unknown>[], Record<string, unknown>[], string]>([
    ['no resources', [{}], [], 'BestEffort'],
    ['limits only: requests default to them (SetDefaults_Pod), so Guaranteed', [{ limits: { cpu: '1', memory: '1Gi' } }], [], 'Guaranteed'],
    ['requests below limits', [{ requests: { cpu: '100m' }, limits: { cpu: '1', memory: '1Gi' } }], [], 'Burstable'],
    ['a Guaranteed container beside an init container without resources', [{ limits: { cpu: '1', memory: '1Gi' } }], [{}], 'Burstable'],
    ['an init container with requests only', [{}], [{ requests: { memory: '64Mi' } }], 'Burstable'],
  ])('%s', (_case, resources, initResources, qosClass) => {
    expect(create('Pod', pod(resources, initResources))['status']).toEqual({ phase: 'Pending', qosClass });
  });

  it('replaces whatever status the client sent, and copies a limit into a missing request', () => {
    const object = create('Pod', { ...pod([{ requests: { cpu: '250m' }, limits: { cpu: '1', memory: '1Gi' } }]), status: { phase: 'Running', qosClass: 'Guaranteed' } });
    expect(object['status']).toEqual({ phase: 'Pending', qosClass: 'Burstable' });
    expect(object['spec'].containers[0].resources).toEqual({ requests: { cpu: '250m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } });
  });

  it('leaves a template\'s containers as they are (requests from limits is a Pod default only)', () => {
    const deployment = create('Deployment', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27', resources: { limits: { cpu: '1' } } }] } } },
    });
    expect(deployment['spec'].template.spec.containers[0].resources).toEqual({ limits: { cpu: '1' } });
  });

  it('an update does not recompute the class (the status is the current one)', () => {
    const current = create('Pod', pod([{ limits: { cpu: '1', memory: '1Gi' } }]));
    current['metadata'] = { ...current['metadata'], uid: 'u', resourceVersion: '3.0' };
    const updated = admitUpdate({ resource: resourceOfKind('Pod'), body: { ...current, status: undefined }, fieldValidation: 'Strict', namespace: 'default', name: 'p', current: current as never });
    expect((updated.object as unknown as Record<string, any>)['status']).toEqual({ phase: 'Pending', qosClass: 'Guaranteed' });
  });
});

describe('Pod status writes keep the QoS class (kube podStatusStrategy.PrepareForUpdate)', () => {
  const current = { ...create('Pod', pod([{ limits: { cpu: '1', memory: '1Gi' } }])), metadata: { name: 'p', namespace: 'default', uid: 'u', resourceVersion: '3.0' } };
  const write = (status: Record<string, unknown>) =>
    (admitStatus({ resource: resourceOfKind('Pod'), body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, status }, fieldValidation: 'Strict', namespace: 'default', name: 'p', current: current as never }).object as unknown as Record<string, any>)['status'];
  it('a status without qosClass keeps the current one', () => {
    expect(write({ phase: 'Running' })).toEqual({ phase: 'Running', qosClass: 'Guaranteed' });
  });
  it('a status that names one is taken as written', () => {
    expect(write({ phase: 'Running', qosClass: 'Burstable' })).toEqual({ phase: 'Running', qosClass: 'Burstable' });
  });
});

const claim = (spec: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'c' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});

describe('PersistentVolumeClaim create: data sources (kube EnforceDataSourceBackwardsCompatibility, NormalizeDataSources)', () => {
  const snapshot = { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' };
  const populator = { apiGroup: 'populators.example.com', kind: 'Hello', name: 'h' };
  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['dataSource is mirrored into dataSourceRef', { dataSource: snapshot }, { dataSource: snapshot, dataSourceRef: snapshot }],
    ['a PVC dataSource is mirrored without an apiGroup', { dataSource: { kind: 'PersistentVolumeClaim', name: 'src' } }, { dataSource: { kind: 'PersistentVolumeClaim', name: 'src' }, dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'src' } }],
    ['dataSourceRef is mirrored into dataSource', { dataSourceRef: populator }, { dataSource: populator, dataSourceRef: populator }],
    ['a dataSource of another kind, without dataSourceRef, is dropped', { dataSource: populator }, {}],
    ['dataSourceRef.namespace is dropped (CrossNamespaceVolumeDataSource is off), then mirrored', { dataSourceRef: { ...snapshot, namespace: 'other' } }, { dataSource: snapshot, dataSourceRef: snapshot }],
  ])('%s', (_case, given, expected) => {
    const spec = create('PersistentVolumeClaim', claim(given))['spec'];
    expect({ dataSource: spec.dataSource, dataSourceRef: spec.dataSourceRef }).toEqual({ dataSource: undefined, dataSourceRef: undefined, ...expected });
  });
});
