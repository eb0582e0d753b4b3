import { describe, expect, it } from 'vitest';
import { buildNodeInfos, createNodeInfo, createSchedulingContext } from '../../framework.ts';
import { createDefaultProfile } from '../index.ts';
import { schedule } from '../../scheduler.ts';
import type { NodeSelectorTerm, Pod } from '../../../../schemas/index.ts';
import { makeNode, makePod } from '../../test-fixtures.ts';
import { createNodeAffinity, nodeAffinityMatcher } from './index.ts';

function podWith(nodeSelector: Readonly<Record<string, string>> | undefined, terms: readonly NodeSelectorTerm[] | undefined): Pod {
  const pod = makePod({ name: 'p', ...(nodeSelector === undefined ? {} : { nodeSelector }) });
  if (terms === undefined) return pod;
  return {
    ...pod,
    spec: {
      ...pod.spec,
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [...terms] } } },
    },
  };
}

const nodeLabels = { zone: 'a', disk: 'ssd', cores: '16' };

describe('nodeAffinityMatcher', () => {
  it.each<[string, Readonly<Record<string, string>> | undefined, readonly NodeSelectorTerm[] | undefined, boolean]>([
    ['nothing required', undefined, undefined, true],
    ['nodeSelector matches', { zone: 'a', disk: 'ssd' }, undefined, true],
    ['nodeSelector value differs', { zone: 'b' }, undefined, false],
    ['nodeSelector key missing', { gpu: 'true' }, undefined, false],
    ['In matches', undefined, [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }], true],
    ['In misses', undefined, [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['c'] }] }], false],
    ['NotIn matches', undefined, [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['c'] }] }], true],
    ['NotIn on a missing key matches', undefined, [{ matchExpressions: [{ key: 'gpu', operator: 'NotIn', values: ['x'] }] }], true],
    ['NotIn misses', undefined, [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }], false],
    ['Exists', undefined, [{ matchExpressions: [{ key: 'disk', operator: 'Exists' }] }], true],
    ['Exists on a missing key', undefined, [{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }], false],
    ['DoesNotExist', undefined, [{ matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] }], true],
    ['DoesNotExist on a present key', undefined, [{ matchExpressions: [{ key: 'disk', operator: 'DoesNotExist' }] }], false],
    ['Gt', undefined, [{ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['8'] }] }], true],
    ['Gt fails', undefined, [{ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['16'] }] }], false],
    ['Lt', undefined, [{ matchExpressions: [{ key: 'cores', operator: 'Lt', values: ['17'] }] }], true],
    ['Gt on a non-numeric label', undefined, [{ matchExpressions: [{ key: 'zone', operator: 'Gt', values: ['1'] }] }], false],
    ['Gt with two values is malformed', undefined, [{ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['1', '2'] }] }], false],
    ['In without values is malformed', undefined, [{ matchExpressions: [{ key: 'zone', operator: 'In', values: [] }] }], false],
    ['unknown operator is malformed', undefined, [{ matchExpressions: [{ key: 'zone', operator: 'Equals', values: ['a'] }] }], false],
    [
      'expressions in a term are ANDed',
      undefined,
      [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }, { key: 'disk', operator: 'In', values: ['hdd'] }] }],
      false,
    ],
    [
      'terms are ORed',
      undefined,
      [
        { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] },
        { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] },
      ],
      true,
    ],
    [
      'a malformed term does not spoil a good one',
      undefined,
      [{ matchExpressions: [{ key: 'zone', operator: 'Bogus' }] }, { matchExpressions: [{ key: 'zone', operator: 'Exists' }] }],
      true,
    ],
    ['an empty term matches nothing', undefined, [{}], false],
    ['no terms match nothing', undefined, [], false],
    ['matchFields on metadata.name', undefined, [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-a'] }] }], true],
    ['matchFields on another name', undefined, [{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['node-a'] }] }], false],
    ['matchFields on another field', undefined, [{ matchFields: [{ key: 'spec.podCIDR', operator: 'In', values: ['x'] }] }], false],
    [
      'nodeSelector and affinity must both hold',
      { zone: 'b' },
      [{ matchExpressions: [{ key: 'disk', operator: 'Exists' }] }],
      false,
    ],
  ])('%s', (_case, nodeSelector, terms, expected) => {
    const node = makeNode({ name: 'node-a', labels: nodeLabels });
    expect(nodeAffinityMatcher(podWith(nodeSelector, terms))(node)).toBe(expected);
  });
});

describe('NodeAffinity filter', () => {
  it.each([
    [{ zone: 'a' }, { type: 'fit' }],
    [{ zone: 'b' }, { type: 'unfit', reasons: ["node(s) didn't match Pod's node affinity/selector"], unresolvable: true }],
  ])('nodeSelector %j → %j', (nodeSelector, expected) => {
    const pod = podWith(nodeSelector, undefined);
    const nodeInfo = createNodeInfo(makeNode({ name: 'node-a', labels: nodeLabels }), []);
    expect(createNodeAffinity().filter(pod, nodeInfo, createSchedulingContext(pod, [nodeInfo]))).toEqual(expected);
  });
});

describe('NodeAffinity preferred terms (score)', () => {
  const nodes = [
    makeNode({ name: 'node-a', labels: { zone: 'z1', disk: 'ssd' } }),
    makeNode({ name: 'node-b', labels: { zone: 'z2', disk: 'ssd' } }),
    makeNode({ name: 'node-c', labels: { zone: 'z3' } }),
  ];
  const prefer = (weight: number, key: string, values: string[]) => ({ weight, preference: { matchExpressions: [{ key, operator: 'In', values }] } });
  const scoresOf = (preferred: ReturnType<typeof prefer>[]): number[] => {
    const pod = makePod({ name: 'p', affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred } } });
    const nodeInfos = buildNodeInfos(nodes, []);
    const plugin = createNodeAffinity();
    const ctx = createSchedulingContext(pod, nodeInfos);
    const raw = nodeInfos.map((nodeInfo) => plugin.score(pod, nodeInfo, ctx));
    plugin.normalize?.(raw, nodeInfos, ctx);
    return raw;
  };
  it.each<[string, ReturnType<typeof prefer>[], number[]]>([
    ['no preferred terms: all 0', [], [0, 0, 0]],
    ['one term: matching nodes 100', [prefer(10, 'disk', ['ssd'])], [100, 100, 0]],
    ['weights add up, scaled to the best node', [prefer(80, 'disk', ['ssd']), prefer(20, 'zone', ['z2', 'z3'])], [80, 100, 20]],
    ['integer scaling as kube (100 × score / max, truncated)', [prefer(2, 'zone', ['z1']), prefer(1, 'zone', ['z1', 'z2']), prefer(1, 'zone', ['z3'])], [100, 33, 33]],
    ['no node matches: all 0', [prefer(50, 'zone', ['z9'])], [0, 0, 0]],
    ['an empty preference matches nothing', [{ weight: 5, preference: {} } as unknown as ReturnType<typeof prefer>, prefer(1, 'zone', ['z3'])], [0, 0, 100]],
  ])('%s', (_case, preferred, expected) => {
    expect(scoresOf(preferred)).toEqual(expected);
  });

  it('the default profile binds to the preferred node (weight 2) when resources tie', () => {
    const pod = makePod({ name: 'p', affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [prefer(1, 'zone', ['z3'])] } } });
    const result = schedule(pod, buildNodeInfos(nodes, []), createDefaultProfile());
    expect(result.type === 'bound' && result.node).toBe('node-c');
    expect(result.rationale.scores[0]?.plugins.find((entry) => entry.name === 'NodeAffinity')).toEqual({ name: 'NodeAffinity', score: 100 });
  });
});

describe('NodeAffinity addedAffinity (NodeAffinityArgs)', () => {
  const nodes = [makeNode({ name: 'batch', labels: { pool: 'batch', disk: 'ssd' } }), makeNode({ name: 'web', labels: { pool: 'web', disk: 'ssd' } })];
  const plugin = createNodeAffinity({
    addedAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }] },
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 5, preference: { matchExpressions: [{ key: 'pool', operator: 'In', values: ['batch'] }] } }],
    },
  });

  it.each([
    ['a node outside the added required terms: kube\'s scheduler-enforced reason, unresolvable', { name: 'p' }, makeNode({ name: 'hdd', labels: { disk: 'hdd' } }), { type: 'unfit', reasons: ["node(s) didn't match scheduler-enforced node affinity"], unresolvable: true }],
    ['a node inside them, for a pod with no affinity of its own', { name: 'p' }, nodes[0], { type: 'fit' }],
    ['a node inside them but outside the pod\'s own selector', { name: 'p', nodeSelector: { pool: 'web' } }, nodes[0], { type: 'unfit', reasons: ["node(s) didn't match Pod's node affinity/selector"], unresolvable: true }],
  ])('filter: %s', (_what, podOptions, node, expected) => {
    const pod = makePod(podOptions);
    const infos = buildNodeInfos([node as ReturnType<typeof makeNode>], []);
    expect(plugin.filter(pod, infos[0] as ReturnType<typeof createNodeInfo>, createSchedulingContext(pod, infos))).toEqual(expected);
  });

  it('score: the added preferred terms add to the pod\'s own', () => {
    const pod = makePod({ name: 'p', affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 2, preference: { matchExpressions: [{ key: 'pool', operator: 'In', values: ['web'] }] } }] } } });
    const infos = buildNodeInfos(nodes, []);
    const ctx = createSchedulingContext(pod, infos);
    expect(infos.map((info) => plugin.score(pod, info, ctx))).toEqual([5, 2]);
    expect(plugin.preScoreSkip?.(createSchedulingContext(makePod({ name: 'q' }), infos))).toBe(false);
    expect(createNodeAffinity().preScoreSkip?.(createSchedulingContext(makePod({ name: 'q' }), infos))).toBe(true);
  });
});
