import { describe, expect, it } from 'vitest';
import { createNodeInfo, createSchedulingContext } from '../../framework.ts';
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
    [{ zone: 'b' }, { type: 'unfit', reasons: ["node(s) didn't match Pod's node affinity/selector"] }],
  ])('nodeSelector %j → %j', (nodeSelector, expected) => {
    const pod = podWith(nodeSelector, undefined);
    const nodeInfo = createNodeInfo(makeNode({ name: 'node-a', labels: nodeLabels }), []);
    expect(createNodeAffinity().filter(pod, nodeInfo, createSchedulingContext(pod, [nodeInfo]))).toEqual(expected);
  });
});
