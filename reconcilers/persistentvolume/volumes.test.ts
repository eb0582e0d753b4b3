/**
 * What the binder, the provisioner and the scheduler share about claims and volumes
 * (volumes.ts), as kube's pkg/controller/volume/persistentvolume/util and
 * component-helpers/storage/volume decide it: classes (the beta annotation wins), node
 * affinity with every operator and matchFields, the pinned node of a local volume,
 * delayed binding, `findMatchingVolume` (volume mode, deletion, pre-binding, phase,
 * class, node, ranking) and the claims a pod names.
 */
import { describe, expect, it } from 'vitest';
import type { Node, NodeSelectorRequirement, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from '../../schemas/index.ts';
import { nodeObject } from '../testing.ts';
import {
  claimClass,
  claimNamesOf,
  findMatchingVolume,
  hasClaims,
  isDelayBinding,
  isVolumeBoundToClaim,
  pinnedNode,
  requestedStorage,
  volumeClass,
  volumeFitsNode,
  volumeHoldsClaim,
} from './volumes.ts';

type VolumeSpec = NonNullable<PersistentVolume['spec']>;
type ClaimSpec = NonNullable<PersistentVolumeClaim['spec']>;

const volume = (name: string, storage: string | undefined, spec: Partial<VolumeSpec> = {}, metadata: Partial<PersistentVolume['metadata']> = {}, phase = 'Available'): PersistentVolume => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name, ...metadata },
  spec: { ...(storage === undefined ? {} : { capacity: { storage } }), accessModes: ['ReadWriteOnce'], storageClassName: 'manual', ...spec },
  status: { phase },
});

const claim = (storage: string | undefined, spec: Partial<ClaimSpec> = {}, metadata: Partial<PersistentVolumeClaim['metadata']> = {}): PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data', namespace: 'default', uid: 'uid-data', ...metadata },
  spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'manual', ...(storage === undefined ? {} : { resources: { requests: { storage } } }), ...spec },
});

const affinity = (...terms: { matchExpressions?: NodeSelectorRequirement[]; matchFields?: NodeSelectorRequirement[] }[]): Partial<VolumeSpec> => ({
  nodeAffinity: { required: { nodeSelectorTerms: terms } },
});

const labelledNode = (name: string, labels: Record<string, string>): Node => {
  const node = nodeObject(name);
  return { ...node, metadata: { ...node.metadata, labels: { ...node.metadata.labels, ...labels } } };
};

const names = (volumes: readonly (PersistentVolume | undefined)[]): (string | undefined)[] => volumes.map((v) => v?.metadata.name);

describe('classes and sizes', () => {
  it('takes the beta class annotation over spec.storageClassName, and "" without either', () => {
    expect(claimClass(claim('1Gi', { storageClassName: 'fast' }, { annotations: { 'volume.beta.kubernetes.io/storage-class': 'slow' } }))).toBe('slow');
    expect(claimClass(claim('1Gi', { storageClassName: 'fast' }))).toBe('fast');
    expect(claimClass(claim('1Gi', { storageClassName: undefined }))).toBe('');
    expect(volumeClass(volume('v', '1Gi', { storageClassName: 'fast' }, { annotations: { 'volume.beta.kubernetes.io/storage-class': 'slow' } }))).toBe('slow');
    expect(volumeClass(volume('v', '1Gi', { storageClassName: undefined }))).toBe('');
  });

  it('compares capacity with the request in quantities; an unparsable or missing capacity holds nothing', () => {
    expect(requestedStorage(claim(undefined))).toBe('0');
    expect(volumeHoldsClaim(volume('v', '1Gi'), claim('1024Mi'))).toBe(true);
    expect(volumeHoldsClaim(volume('v', '1G'), claim('1Gi'))).toBe(false);
    expect(volumeHoldsClaim(volume('v', '1Gi'), claim(undefined))).toBe(true);
    expect(volumeHoldsClaim(volume('v', 'lots'), claim('1Gi'))).toBe(false);
    expect(volumeHoldsClaim(volume('v', undefined), claim('1Gi'))).toBe(false);
    expect(volumeHoldsClaim(volume('v', '1Gi'), claim('much'))).toBe(false);
  });

  it('binds a volume to a claim by namespace and name, and by uid only when the ref has one', () => {
    const ref = (claimRef: VolumeSpec['claimRef']): PersistentVolume => volume('v', '1Gi', { claimRef });
    expect(isVolumeBoundToClaim(ref({ namespace: 'default', name: 'data' }), claim('1Gi'))).toBe(true);
    expect(isVolumeBoundToClaim(ref({ namespace: 'default', name: 'data', uid: 'uid-data' }), claim('1Gi'))).toBe(true);
    expect(isVolumeBoundToClaim(ref({ namespace: 'default', name: 'data', uid: 'uid-old' }), claim('1Gi'))).toBe(false);
    expect(isVolumeBoundToClaim(ref({ namespace: 'other', name: 'data' }), claim('1Gi'))).toBe(false);
    expect(isVolumeBoundToClaim(ref({ name: 'data' }), claim('1Gi', {}, { namespace: undefined }))).toBe(true);
    expect(isVolumeBoundToClaim(ref({ namespace: 'default', name: 'logs' }), claim('1Gi'))).toBe(false);
    expect(isVolumeBoundToClaim(volume('v', '1Gi'), claim('1Gi'))).toBe(false);
  });

  it('delays binding only for a named class that exists and says WaitForFirstConsumer', () => {
    const classes: Record<string, StorageClass> = {
      late: { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'late' }, provisioner: 'p', volumeBindingMode: 'WaitForFirstConsumer' },
      now: { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'now' }, provisioner: 'p', volumeBindingMode: 'Immediate' },
    };
    const classOf = (name: string): StorageClass | undefined => classes[name];
    expect(isDelayBinding(claim('1Gi', { storageClassName: 'late' }), classOf)).toBe(true);
    expect(isDelayBinding(claim('1Gi', { storageClassName: 'now' }), classOf)).toBe(false);
    expect(isDelayBinding(claim('1Gi', { storageClassName: 'missing' }), classOf)).toBe(false);
    expect(isDelayBinding(claim('1Gi', { storageClassName: '' }), () => classes.late)).toBe(false);
  });
});

describe('node affinity (kube CheckNodeAffinity)', () => {
  const node = labelledNode('n1', { zone: 'a', generation: '5' });
  const fits = (...requirements: NodeSelectorRequirement[]): boolean => volumeFitsNode(volume('v', '1Gi', affinity({ matchExpressions: requirements })), node);

  it.each([
    [{ key: 'zone', operator: 'In', values: ['a', 'b'] }, true],
    [{ key: 'zone', operator: 'In', values: ['b'] }, false],
    [{ key: 'rack', operator: 'In', values: ['a'] }, false],
    [{ key: 'zone', operator: 'NotIn', values: ['b'] }, true],
    [{ key: 'zone', operator: 'NotIn', values: ['a'] }, false],
    [{ key: 'rack', operator: 'NotIn', values: ['a'] }, true],
    [{ key: 'zone', operator: 'Exists' }, true],
    [{ key: 'rack', operator: 'Exists' }, false],
    [{ key: 'rack', operator: 'DoesNotExist' }, true],
    [{ key: 'zone', operator: 'DoesNotExist' }, false],
    [{ key: 'generation', operator: 'Gt', values: ['4'] }, true],
    [{ key: 'generation', operator: 'Gt', values: ['5'] }, false],
    [{ key: 'generation', operator: 'Lt', values: ['6'] }, true],
    [{ key: 'generation', operator: 'Lt', values: ['5'] }, false],
    [{ key: 'zone', operator: 'Gt', values: ['1'] }, false],
    [{ key: 'rack', operator: 'Lt', values: ['9'] }, false],
    [{ key: 'generation', operator: 'Gt', values: ['many'] }, false],
    [{ key: 'generation', operator: 'Gt' }, false],
    [{ key: 'zone', operator: 'Near', values: ['a'] }, false],
  ] as [NodeSelectorRequirement, boolean][])('%j on a node labelled zone=a, generation=5: %s', (requirement, expected) => {
    expect(fits(requirement)).toBe(expected);
  });

  it('fits every node without affinity; ANDs a term\'s requirements, ORs the terms, and an empty term matches no node', () => {
    expect(volumeFitsNode(volume('v', '1Gi'), node)).toBe(true);
    expect(fits({ key: 'zone', operator: 'In', values: ['a'] }, { key: 'generation', operator: 'Gt', values: ['7'] })).toBe(false);
    const either = affinity({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }, { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] });
    expect(volumeFitsNode(volume('v', '1Gi', either), node)).toBe(true);
    expect(volumeFitsNode(volume('v', '1Gi', affinity({})), node)).toBe(false);
    expect(volumeFitsNode(volume('v', '1Gi', affinity({ matchExpressions: [], matchFields: [] })), node)).toBe(false);
    expect(volumeFitsNode(volume('v', '1Gi', affinity()), node)).toBe(false);
  });

  it.each([
    ['NotIn without values', { key: 'zone', operator: 'NotIn', values: [] }],
    ['NotIn with values left out', { key: 'rack', operator: 'NotIn' }],
    ['In without values', { key: 'zone', operator: 'In', values: [] }],
    ['DoesNotExist with values', { key: 'rack', operator: 'DoesNotExist', values: ['x'] }],
    ['Exists with values', { key: 'zone', operator: 'Exists', values: ['a'] }],
    ['Gt with two values', { key: 'generation', operator: 'Gt', values: ['4', '9'] }],
    ['Gt with a value that is not an integer', { key: 'generation', operator: 'Gt', values: ['4abc'] }],
    ['Lt with a decimal', { key: 'generation', operator: 'Lt', values: ['6.5'] }],
    ['Gt on a label that is not an integer', { key: 'build', operator: 'Gt', values: ['4'] }],
  ] as [string, NodeSelectorRequirement][])('rejects a malformed requirement (%s) as kube does: its term matches no node', (_what, requirement) => {
    const labelled = labelledNode('n1', { zone: 'a', generation: '5', build: '5abc' });
    expect(volumeFitsNode(volume('v', '1Gi', affinity({ matchExpressions: [requirement] })), labelled)).toBe(false);
    // Another, well-formed term still matches.
    expect(volumeFitsNode(volume('v', '1Gi', affinity({ matchExpressions: [requirement] }, { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] })), labelled)).toBe(true);
  });

  it('reads Gt/Lt values with a sign, as Go ParseInt does', () => {
    expect(fits({ key: 'generation', operator: 'Gt', values: ['+4'] })).toBe(true);
    expect(fits({ key: 'generation', operator: 'Gt', values: ['-1'] })).toBe(true);
    expect(fits({ key: 'generation', operator: 'Lt', values: ['-1'] })).toBe(false);
  });

  it('matches matchFields against metadata.name, and a node without labels against label requirements', () => {
    const byName = (name: string): PersistentVolume => volume('v', '1Gi', affinity({ matchFields: [{ key: 'metadata.name', operator: 'In', values: [name] }] }));
    expect(volumeFitsNode(byName('n1'), node)).toBe(true);
    expect(volumeFitsNode(byName('n2'), node)).toBe(false);
    // matchFields may only test metadata.name; any other field makes the term match no node.
    expect(volumeFitsNode(volume('v', '1Gi', affinity({ matchFields: [{ key: 'metadata.uid', operator: 'NotIn', values: ['x'] }] })), node)).toBe(false);
    const bare: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'bare' } };
    expect(volumeFitsNode(volume('v', '1Gi', affinity({ matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] })), bare)).toBe(true);
    expect(volumeFitsNode(volume('v', '1Gi', affinity({ matchExpressions: [{ key: 'zone', operator: 'Exists' }] })), bare)).toBe(false);
  });

  it('pins a local volume to the one hostname its single term names, and to nothing otherwise', () => {
    const hostname = (values: string[], operator = 'In'): NodeSelectorRequirement => ({ key: 'kubernetes.io/hostname', operator, values });
    expect(pinnedNode(volume('v', '1Gi', affinity({ matchExpressions: [{ key: 'zone', operator: 'Exists' }, hostname(['n1'])] })))).toBe('n1');
    expect(pinnedNode(volume('v', '1Gi'))).toBeUndefined();
    expect(pinnedNode(volume('v', '1Gi', affinity({ matchExpressions: [hostname(['n1', 'n2'])] })))).toBeUndefined();
    expect(pinnedNode(volume('v', '1Gi', affinity({ matchExpressions: [hostname(['n1'], 'NotIn')] })))).toBeUndefined();
    expect(pinnedNode(volume('v', '1Gi', affinity({ matchExpressions: [hostname(['n1'])] }, { matchExpressions: [hostname(['n2'])] })))).toBeUndefined();
    expect(pinnedNode(volume('v', '1Gi', affinity({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] })))).toBeUndefined();
  });
});

describe('findMatchingVolume (kube FindMatchingVolume)', () => {
  const n1 = labelledNode('n1', {});
  const onNode = (name: string): Partial<VolumeSpec> => affinity({ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [name] }] });

  it('skips volumes of another volume mode (both default to Filesystem), being deleted, or of another class', () => {
    const volumes = [
      volume('block', '1Gi', { volumeMode: 'Block' }),
      volume('deleting', '1Gi', {}, { deletionTimestamp: '2026-01-01T00:00:00Z' }),
      volume('other-class', '1Gi', { storageClassName: 'fast' }),
      volume('defaulted', '5Gi'),
    ];
    expect(findMatchingVolume(claim('1Gi'), volumes, undefined, false)?.metadata.name).toBe('defaulted');
    expect(findMatchingVolume(claim('1Gi', { volumeMode: 'Block' }), volumes, undefined, false)?.metadata.name).toBe('block');
    expect(findMatchingVolume(claim('1Gi', { volumeMode: 'Filesystem', storageClassName: 'fast' }), volumes, undefined, false)?.metadata.name).toBe('other-class');
    expect(findMatchingVolume(claim('1Gi', {}, { annotations: { 'volume.beta.kubernetes.io/storage-class': 'fast' } }), volumes, undefined, false)?.metadata.name).toBe('other-class');
  });

  it('matches only Available volumes without a claimRef, and a claim without class only class-less volumes', () => {
    const volumes = [
      volume('pending', '1Gi', {}, {}, 'Pending'),
      volume('released', '1Gi', {}, {}, 'Released'),
      volume('reserved', '1Gi', { claimRef: { namespace: 'default', name: 'someone-else' } }),
      volume('no-class', '2Gi', { storageClassName: undefined }),
      volume('free', '3Gi'),
    ];
    expect(findMatchingVolume(claim('1Gi'), volumes, undefined, false)?.metadata.name).toBe('free');
    expect(findMatchingVolume(claim('1Gi', { storageClassName: undefined }), volumes, undefined, false)?.metadata.name).toBe('no-class');
    expect(findMatchingVolume(claim('1Gi', { storageClassName: '' }), volumes, undefined, false)?.metadata.name).toBe('no-class');
  });

  it('prefers the volume pre-bound to the claim over a smaller free one, whatever its phase, unless it is too small or off the node', () => {
    const bound = (storage: string, extra: Partial<VolumeSpec> = {}): PersistentVolume => volume('mine', storage, { claimRef: { namespace: 'default', name: 'data', uid: 'uid-data' }, ...extra }, {}, 'Bound');
    const small = volume('small', '1Gi');
    expect(findMatchingVolume(claim('1Gi'), [small, bound('10Gi')], undefined, false)?.metadata.name).toBe('mine');
    expect(findMatchingVolume(claim('1Gi'), [small, bound('10Gi', { storageClassName: 'other' })], undefined, false)?.metadata.name).toBe('mine');
    // Too small: not a match, and the free volume still is.
    expect(findMatchingVolume(claim('5Gi'), [bound('1Gi'), volume('big', '5Gi')], undefined, false)?.metadata.name).toBe('big');
    // Pre-bound but not on the selected node: no match at all (kube returns nil).
    expect(findMatchingVolume(claim('1Gi'), [small, bound('10Gi', onNode('n2'))], n1, false)).toBeUndefined();
    expect(findMatchingVolume(claim('1Gi'), [small, bound('10Gi', onNode('n1'))], n1, true)?.metadata.name).toBe('mine');
  });

  it('with delayed binding and no node matches only a pre-bound volume; with the node, the smallest that fits the node', () => {
    const volumes = [volume('on-n2', '1Gi', onNode('n2')), volume('on-n1-big', '8Gi', onNode('n1')), volume('on-n1', '2Gi', onNode('n1')), volume('anywhere', '4Gi')];
    expect(findMatchingVolume(claim('1Gi'), volumes, undefined, true)).toBeUndefined();
    expect(findMatchingVolume(claim('1Gi'), volumes, n1, true)?.metadata.name).toBe('on-n1');
    expect(findMatchingVolume(claim('3Gi'), volumes, n1, true)?.metadata.name).toBe('anywhere');
    expect(findMatchingVolume(claim('9Gi'), volumes, n1, true)).toBeUndefined();
    const preBound = volume('pre', '1Gi', { claimRef: { namespace: 'default', name: 'data' } });
    expect(findMatchingVolume(claim('1Gi'), [...volumes, preBound], undefined, true)?.metadata.name).toBe('pre');
  });

  it('ranks equal sizes by fewest access modes, then by name; sizes compare as quantities', () => {
    const wide = volume('a-wide', '1Gi', { accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] });
    const narrow = volume('z-narrow', '1Gi');
    expect(findMatchingVolume(claim('1Gi'), [wide, narrow], undefined, false)?.metadata.name).toBe('z-narrow');
    expect(findMatchingVolume(claim('1Gi'), [narrow, wide], undefined, false)?.metadata.name).toBe('z-narrow');
    expect(names([findMatchingVolume(claim('1Gi'), [volume('b', '1Gi'), volume('a', '1Gi')], undefined, false)])).toEqual(['a']);
    expect(findMatchingVolume(claim('1Gi'), [volume('mebi', '2048Mi'), volume('gibi', '1.5Gi'), volume('giga', '1.2G')], undefined, false)?.metadata.name).toBe('giga');
  });

  it('matches a selector with expressions, and matches nothing when the selector is invalid', () => {
    const volumes = [volume('gold', '1Gi', {}, { labels: { tier: 'gold' } }), volume('silver', '1Gi', {}, { labels: { tier: 'silver' } }), volume('bare', '1Gi')];
    const select = (selector: ClaimSpec['selector']): string | undefined => findMatchingVolume(claim('1Gi', { selector }), volumes, undefined, false)?.metadata.name;
    expect(select({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['gold'] }] })).toBe('bare');
    expect(select({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['silver', 'bronze'] }] })).toBe('silver');
    expect(select({ matchExpressions: [{ key: 'tier', operator: 'In', values: [] }] })).toBeUndefined();
    expect(select({ matchExpressions: [{ key: 'tier', operator: 'Sideways', values: ['gold'] }] })).toBeUndefined();
  });
});

describe('claims of a pod', () => {
  const pod = (volumes: NonNullable<Pod['spec']>['volumes']): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-0', namespace: 'default' },
    spec: { containers: [{ name: 'main', image: 'nginx' }], ...(volumes ? { volumes } : {}) },
  });

  it('names its persistentVolumeClaim volumes and its ephemeral volumes as <pod>-<volume>, in order, skipping others', () => {
    const withClaims = pod([
      { name: 'config', configMap: { name: 'cfg' } },
      { name: 'data', persistentVolumeClaim: { claimName: 'www-web-0' } },
      { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } },
    ]);
    expect(claimNamesOf(withClaims)).toEqual(['www-web-0', 'web-0-scratch']);
    expect(hasClaims(withClaims)).toBe(true);
    expect(claimNamesOf(pod([{ name: 'config', configMap: { name: 'cfg' } }]))).toEqual([]);
    expect(hasClaims(pod([{ name: 'config', configMap: { name: 'cfg' } }]))).toBe(false);
    expect(hasClaims(pod(undefined))).toBe(false);
    expect(claimNamesOf(pod(undefined))).toEqual([]);
  });
});
