/**
 * Validation branches no other test ran (issue 24): ownerReferences, toleration rules,
 * node-affinity operators and weights, a Service's clusterIP (its form, 'None' only for
 * ClusterIP services, immutable on update). Each refused case names kube's field path and
 * message (kube's ValidateOwnerReferences, validateTolerations, validateNodeSelectorTerm,
 * validatePreferredSchedulingTerms, ValidateServiceUpdate), and each rule's edge that
 * kube accepts is accepted.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.ts';
import { resourceOfKind } from '../resources.ts';
import { admitCreate, admitUpdate } from './admit.ts';

type Kind = Parameters<typeof resourceOfKind>[0];

const create = (kind: Kind, body: unknown) => admitCreate({ resource: resourceOfKind(kind), body, fieldValidation: 'Strict', namespace: 'default' });
const update = (kind: Kind, current: unknown, body: unknown) =>
  admitUpdate({
    resource: resourceOfKind(kind),
    body,
    fieldValidation: 'Strict',
    namespace: 'default',
    name: (body as { metadata: { name: string } }).metadata.name,
    current: current as never,
  });

const refusal = (action: () => unknown) => {
  try {
    action();
  } catch (error) {
    if (error instanceof ApiError) return error.status;
    throw error;
  }
  throw new Error('expected the object to be refused');
};

const pod = (spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', ...metadata },
  spec: { containers: [{ name: 'c', image: 'nginx:1.27' }], ...spec },
});
const owner = (extra: Record<string, unknown> = {}) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u-1', ...extra });
const preferred = (weight: number) => ({ affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } }] } } });
const required = (operator: string) => ({
  affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator, values: operator === 'Exists' ? undefined : ['1'] }] }] } } },
});
const service = (spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: { ports: [{ port: 80 }], ...spec } });

const AFFINITY_REQUIRED = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator';
const AFFINITY_PREFERRED = 'spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight';

describe('validation: refused, with kube\'s field and message', () => {
  it.each<[string, Kind, unknown, string, string]>([
    ['an owner reference without apiVersion', 'Pod', pod({}, { ownerReferences: [owner({ apiVersion: '' })] }), 'metadata.ownerReferences[0].apiVersion', 'version must not be empty'],
    ['an owner reference without kind', 'Pod', pod({}, { ownerReferences: [owner({ kind: '' })] }), 'metadata.ownerReferences[0].kind', 'kind must not be empty'],
    ['an owner reference without name', 'Pod', pod({}, { ownerReferences: [owner({ name: '' })] }), 'metadata.ownerReferences[0].name', 'name must not be empty'],
    ['an owner reference without uid', 'Pod', pod({}, { ownerReferences: [owner({ uid: '' })] }), 'metadata.ownerReferences[0].uid', 'uid must not be empty'],
    [
      'two controller owner references',
      'Pod',
      pod({}, { ownerReferences: [owner({ controller: true }), owner({ name: 'other', uid: 'u-2', controller: true })] }),
      'metadata.ownerReferences',
      'Only one reference can have Controller set to true',
    ],
    ['a toleration operator other than Equal/Exists', 'Pod', pod({ tolerations: [{ key: 'k', operator: 'Matches', value: 'v' }] }), 'spec.tolerations[0].operator', 'supported values: "Equal", "Exists"'],
    ['an unknown toleration effect', 'Pod', pod({ tolerations: [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoWay' }] }), 'spec.tolerations[0].effect', 'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'],
    ['a value with operator Exists', 'Pod', pod({ tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }] }), 'spec.tolerations[0].operator', "value must be empty when `operator` is 'Exists'"],
    ['an empty key with operator Equal', 'Pod', pod({ tolerations: [{ operator: 'Equal', value: 'v' }] }), 'spec.tolerations[0].operator', 'operator must be Exists when `key` is empty, which means "match all values and all keys"'],
    ['tolerationSeconds with effect NoSchedule', 'Pod', pod({ tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 30 }] }), 'spec.tolerations[0].effect', "effect must be 'NoExecute' when `tolerationSeconds` is set"],
    ['tolerationSeconds without an effect', 'Pod', pod({ tolerations: [{ key: 'k', operator: 'Exists', tolerationSeconds: 30 }] }), 'spec.tolerations[0].effect', "effect must be 'NoExecute' when `tolerationSeconds` is set"],
    ['a node-affinity operator kube does not have', 'Pod', pod(required('Like')), AFFINITY_REQUIRED, 'supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'],
    ['a preferred node-affinity weight of 0', 'Pod', pod(preferred(0)), AFFINITY_PREFERRED, 'must be in the range 1-100'],
    ['a preferred node-affinity weight of 101', 'Pod', pod(preferred(101)), AFFINITY_PREFERRED, 'must be in the range 1-100'],
    ['a clusterIP that is not an IP', 'Service', service({ clusterIP: '10.0.0.300' }), 'spec.clusterIP', ''],
    ["clusterIP 'None' on a NodePort service", 'Service', service({ type: 'NodePort', clusterIP: 'None' }), 'spec.clusterIP', "may not be set to 'None' for NodePort services"],
  ])('refuses %s', (_title, kind, body, field, message) => {
    const status = refusal(() => create(kind, body));
    expect(status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(status.details?.causes).toContainEqual(expect.objectContaining({ field, message: expect.stringContaining(message) }));
  });

  it('refuses a change of a Service\'s clusterIP, and keeps an unchanged one', () => {
    const { object: current } = create('Service', service({ clusterIP: '10.96.0.10' }));
    const withMetadata = { ...(current as object), metadata: { ...(current as { metadata: object }).metadata, resourceVersion: '5.0', uid: 'svc-uid' } };
    const changed = structuredClone(withMetadata) as unknown as { spec: { clusterIP: string } };
    changed.spec.clusterIP = '10.96.0.11';
    const status = refusal(() => update('Service', withMetadata, changed));
    expect(status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(status.details?.causes).toContainEqual(expect.objectContaining({ field: 'spec.clusterIP', message: expect.stringContaining('field is immutable') }));
    const relabelled = structuredClone(withMetadata) as { metadata: { labels?: Record<string, string> } };
    relabelled.metadata.labels = { tier: 'dns' };
    expect((update('Service', withMetadata, relabelled).object as { spec: { clusterIP: string } }).spec.clusterIP).toBe('10.96.0.10');
  });
});

describe('validation: the edges kube accepts', () => {
  it.each<[string, Kind, unknown]>([
    ['one controller owner among others', 'Pod', pod({}, { ownerReferences: [owner({ controller: true }), owner({ name: 'other', uid: 'u-2', controller: false })] })],
    ['an empty key with operator Exists (tolerates everything)', 'Pod', pod({ tolerations: [{ operator: 'Exists' }] })],
    ['tolerationSeconds with effect NoExecute', 'Pod', pod({ tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }] })],
    ['a preferred weight of 1', 'Pod', pod(preferred(1))],
    ['a preferred weight of 100', 'Pod', pod(preferred(100))],
    ['operator Gt', 'Pod', pod(required('Gt'))],
    ['operator Exists', 'Pod', pod(required('Exists'))],
    ["clusterIP 'None' on a ClusterIP service (headless)", 'Service', service({ clusterIP: 'None' })],
  ])('accepts %s', (_title, kind, body) => {
    expect(() => create(kind, body)).not.toThrow();
  });
});
