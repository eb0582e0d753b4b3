import { describe, expect, it } from 'vitest';
import { InvalidObjectKeyError } from './errors.ts';
import type { Kind } from './generated/types.ts';
import { CLUSTER_SCOPED, objectKey, parseObjectKey } from './keys.ts';

describe('object keys', () => {
  it.each([
    ['Pod', 'shop', 'web-1', 'Pod/shop/web-1'],
    ['Deployment', 'default', 'web', 'Deployment/default/web'],
    ['Node', undefined, 'node-1', 'Node//node-1'],
    ['Namespace', undefined, 'shop', 'Namespace//shop'],
    ['Secret', 'shop', 'tls', 'Secret/shop/tls'],
    ['Job', 'shop', 'migrate', 'Job.batch/shop/migrate'],
    ['ClusterRole', undefined, 'view', 'ClusterRole.rbac.authorization.k8s.io//view'],
    ['Ingress', 'shop', 'web', 'Ingress.networking.k8s.io/shop/web'],
  ] as const)('%s %s/%s ⇄ %s', (kind, namespace, name, key) => {
    const metadata = namespace === undefined ? { name } : { namespace, name };
    expect(objectKey({ kind, metadata })).toBe(key);
    expect(parseObjectKey(key)).toEqual({ kind, namespace: namespace ?? null, name });
  });

  it('ignores a namespace on a cluster-scoped object', () => {
    expect(objectKey({ kind: 'Node', metadata: { namespace: 'x', name: 'n' } })).toBe('Node//n');
  });

  it.each([
    ['Pod', {name: 'p'}],
    ['Pod', { namespace: 'a/b', name: 'p' }],
    ['Service', { namespace: 'shop', name: '' }],
  ] as const)('rejects %s %j', (kind, metadata) => {
    expect(() => objectKey({ kind: kind as Kind, metadata })).toThrow(InvalidObjectKeyError);
  });

  it.each(['Pod/web', 'Pod//web', 'Node/default/n1', 'Widget/default/s', 'Job/default/j', 'Event.events.k8s.io/default/e', 'PersistentVolume/default/pv', 'Pod/shop/', 'Pod/shop/a/b', ''])(
    'refuses to parse %j',
    (key) => {
      expect(() => parseObjectKey(key)).toThrow(InvalidObjectKeyError);
    },
  );

  it('knows which kinds are cluster-scoped', () => {
    expect([...CLUSTER_SCOPED].sort()).toEqual([
      'CSIDriver', 'CSINode', 'CertificateSigningRequest', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'IngressClass',
      'MutatingWebhookConfiguration', 'Namespace', 'Node', 'PersistentVolume', 'PriorityClass', 'RuntimeClass',
      'StorageClass', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'ValidatingWebhookConfiguration', 'VolumeAttachment',
    ]);
  });
});
