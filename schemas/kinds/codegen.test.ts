import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATED_KINDS, generateKinds, loadApiDocument } from './codegen.ts';
import type { KindDescriptor } from './descriptor.ts';
import { KIND_DESCRIPTORS } from './generated.ts';

function descriptor(group: string, kind: string): KindDescriptor {
  const found = KIND_DESCRIPTORS.find((entry) => entry.group === group && entry.kind === kind);
  if (found === undefined) {
    throw new Error(`no descriptor for ${group}/${kind}`);
  }
  return found;
}

describe('kind descriptors', () => {
  it('match the API document and the overlay (run `npm run kinds:gen` if not)', () => {
    expect(readFileSync(GENERATED_KINDS, 'utf8')).toBe(generateKinds(loadApiDocument()));
  });

  it('cover the 45 kinds of issue 15 and CustomResourceDefinition (issue 16), each once', () => {
    const keys = KIND_DESCRIPTORS.map((entry) => `${entry.group}/${entry.kind}`);
    expect(new Set(keys).size).toBe(46);
    expect(keys).toHaveLength(46);
    for (const excluded of ['FlowSchema', 'PriorityLevelConfiguration', 'CSIStorageCapacity', 'ComponentStatus', 'APIService']) {
      expect(KIND_DESCRIPTORS.some((entry) => entry.kind === excluded)).toBe(false);
    }
  });

  it('list core first, then the groups in /apis order, each group by plural', () => {
    const groups = [...new Set(KIND_DESCRIPTORS.map((entry) => entry.group))];
    expect(groups).toEqual([
      '',
      'apps',
      'events.k8s.io',
      'autoscaling',
      'batch',
      'certificates.k8s.io',
      'networking.k8s.io',
      'policy',
      'rbac.authorization.k8s.io',
      'storage.k8s.io',
      'admissionregistration.k8s.io',
      'apiextensions.k8s.io',
      'scheduling.k8s.io',
      'coordination.k8s.io',
      'node.k8s.io',
      'discovery.k8s.io',
    ]);
    const core = KIND_DESCRIPTORS.filter((entry) => entry.group === '').map((entry) => entry.plural);
    expect(core).toEqual([...core].sort());
  });

  it('serve pods as kube does', () => {
    const pod = descriptor('', 'Pod');
    expect(pod).toMatchObject({
      plural: 'pods',
      singular: 'pod',
      shortNames: ['po'],
      categories: ['all'],
      scope: 'Namespaced',
      nameFormat: 'subdomain',
      versions: ['v1'],
      definition: 'io.k8s.api.core.v1.Pod',
    });
    expect(pod.subresources.map((subresource) => subresource.name)).toEqual([
      'attach',
      'binding',
      'ephemeralcontainers',
      'eviction',
      'exec',
      'log',
      'portforward',
      'proxy',
      'resize',
      'status',
    ]);
    expect(pod.subresources.find((subresource) => subresource.name === 'eviction')).toEqual({
      name: 'eviction',
      kind: 'Eviction',
      group: 'policy',
      version: 'v1',
      verbs: ['create'],
    });
    expect(pod.subresources.find((subresource) => subresource.name === 'status')).toEqual({
      name: 'status',
      kind: '',
      verbs: ['get', 'patch', 'update'],
    });
    expect(pod.selectableFields).toContain('spec.nodeName');
    expect(pod.printerColumns.map((column) => column.name)).toEqual([
      'Name',
      'Ready',
      'Status',
      'Restarts',
      'Age',
      'IP',
      'Node',
      'Nominated Node',
      'Readiness Gates',
    ]);
  });

  it.each([
    ['apps', 'Deployment'],
    ['apps', 'ReplicaSet'],
    ['apps', 'StatefulSet'],
    ['', 'ReplicationController'],
  ])('%s/%s has a scale subresource of kind autoscaling/v1 Scale', (group, kind) => {
    expect(descriptor(group, kind).subresources.find((subresource) => subresource.name === 'scale')).toEqual({
      name: 'scale',
      kind: 'Scale',
      group: 'autoscaling',
      version: 'v1',
      verbs: ['get', 'patch', 'update'],
    });
  });

  it.each([
    ['', 'Namespace', 'Cluster', 'label', ['ns']],
    ['', 'Node', 'Cluster', 'subdomain', ['no']],
    ['', 'Service', 'Namespaced', 'dns1035Label', ['svc']],
    ['', 'Secret', 'Namespaced', 'subdomain', []],
    ['rbac.authorization.k8s.io', 'Role', 'Namespaced', 'pathSegment', []],
    ['rbac.authorization.k8s.io', 'ClusterRole', 'Cluster', 'pathSegment', []],
    ['rbac.authorization.k8s.io', 'ClusterRoleBinding', 'Cluster', 'pathSegment', []],
    ['storage.k8s.io', 'StorageClass', 'Cluster', 'subdomain', ['sc']],
    ['apps', 'Deployment', 'Namespaced', 'subdomain', ['deploy']],
    ['batch', 'CronJob', 'Namespaced', 'subdomain', ['cj']],
  ] as const)('%s/%s is %s, names %s, short names %j', (group, kind, scope, nameFormat, shortNames) => {
    expect(descriptor(group, kind)).toMatchObject({ scope, nameFormat, shortNames });
  });

  it('keep core Event and events.k8s.io Event apart', () => {
    const core = descriptor('', 'Event');
    const events = descriptor('events.k8s.io', 'Event');
    expect(core.plural).toBe('events');
    expect(events.plural).toBe('events');
    expect(core.definition).toBe('io.k8s.api.core.v1.Event');
    expect(events.definition).toBe('io.k8s.api.events.v1.Event');
  });

  it('serve HorizontalPodAutoscaler as v2 (stored) and v1', () => {
    expect(descriptor('autoscaling', 'HorizontalPodAutoscaler')).toMatchObject({
      versions: ['v2', 'v1'],
      definition: 'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler',
      shortNames: ['hpa'],
    });
  });

  it('give namespaces no deletecollection, as kube does not', () => {
    expect(descriptor('', 'Namespace').verbs).not.toContain('deletecollection');
    expect(descriptor('', 'Namespace').subresources.map((subresource) => subresource.name)).toEqual(['finalize', 'status']);
  });

  it('give kinds without a printer handler the default table (Name, Created At)', () => {
    expect(descriptor('rbac.authorization.k8s.io', 'Role').printerColumns.map((column) => [column.name, column.type])).toEqual([
      ['Name', 'string'],
      ['Created At', 'date'],
    ]);
  });
});
