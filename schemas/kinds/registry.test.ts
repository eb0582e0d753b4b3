import { describe, expect, it } from 'vitest';
import { KIND_VALUES } from '../generated/types.ts';
import { kindByGroupKind, kindByRef, kindByResource, REGISTERED_KINDS, storedKind } from './registry.ts';

describe('kind registry', () => {
  it('gives every kind a unique ref, and finds it by ref, group/kind and group/plural', () => {
    const refs = REGISTERED_KINDS.map((kind) => kind.ref);
    expect(new Set(refs).size).toBe(refs.length);
    for (const kind of REGISTERED_KINDS) {
      expect(kindByRef(kind.ref)).toBe(kind);
      expect(kindByGroupKind(kind.group, kind.kind)).toBe(kind);
      expect(kindByResource(kind.group, kind.plural)).toBe(kind);
    }
  });

  it('names core and apps kinds bare and every other group qualified', () => {
    expect(kindByGroupKind('', 'Event')?.ref).toBe('Event');
    expect(kindByGroupKind('events.k8s.io', 'Event')?.ref).toBe('Event.events.k8s.io');
    expect(kindByGroupKind('apps', 'StatefulSet')?.ref).toBe('StatefulSet');
    expect(kindByGroupKind('batch', 'Job')?.ref).toBe('Job.batch');
  });

  it('registers every kind the current event schema stores, under the ref its keys already use', () => {
    for (const kind of KIND_VALUES) {
      expect(storedKind(kind)?.kind, kind).toBe(kind);
      expect(kindByRef(storedKind(kind)?.ref ?? '')?.kind, kind).toBe(kind);
    }
  });

  it.each([
    ['Pod', { type: 'shared', key: 'scheduling' }],
    ['Node', { type: 'shared', key: 'scheduling' }],
    ['ResourceQuota', { type: 'shared', key: 'scheduling' }],
    ['PodDisruptionBudget.policy', { type: 'shared', key: 'scheduling' }],
    ['Service', { type: 'shared', key: 'services' }],
    ['PersistentVolume', { type: 'shared', key: 'storage' }],
    ['PersistentVolumeClaim', { type: 'shared', key: 'storage' }],
    ['ConfigMap', { type: 'object' }],
    ['Deployment', { type: 'object' }],
  ])('%s is in the partition domain %j', (ref, domain) => {
    expect(kindByRef(ref)?.partitionDomain).toEqual(domain);
  });
});
