import { describe, expect, it } from 'vitest';
import { buildNodeInfos, createSchedulingContext, type FilterResult } from '../../framework.ts';
import type { Pod, PodAffinityTerm } from '../../../../schemas/index.ts';
import { antiAffinityToApp, makeNode, makePod } from '../../test-fixtures.ts';
import { antiAffinityState, createPodAntiAffinity, topologyValue } from './index.ts';

const nodes = [
  makeNode({ name: 'node-a', labels: { zone: 'z1' } }),
  makeNode({ name: 'node-b', labels: { zone: 'z1' } }),
  makeNode({ name: 'node-c', labels: { zone: 'z2' } }),
];

const INCOMING: FilterResult = { type: 'unfit', reasons: ["node(s) didn't match pod anti-affinity rules"] };
const EXISTING: FilterResult = { type: 'unfit', reasons: ["node(s) didn't satisfy existing pods anti-affinity rules"] };
const FITS: FilterResult = { type: 'fit' };

const web = (name: string, nodeName: string, extra: Partial<Parameters<typeof makePod>[0]> = {}): Pod =>
  makePod({ name, nodeName, labels: { app: 'web' }, ...extra });

describe('PodAntiAffinity filter', () => {
  it.each<[string, Pod, readonly Pod[], [FilterResult, FilterResult, FilterResult]]>([
    ['no terms anywhere', makePod({ name: 'p', labels: { app: 'web' } }), [web('w1', 'node-a')], [FITS, FITS, FITS]],
    [
      'one web pod per host',
      web('new', '', { antiAffinity: [antiAffinityToApp('web')] }),
      [web('w1', 'node-a')],
      [INCOMING, FITS, FITS],
    ],
    [
      'one web pod per zone',
      web('new', '', { antiAffinity: [{ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'zone' }] }),
      [web('w1', 'node-a')],
      [INCOMING, INCOMING, FITS],
    ],
    [
      'symmetric: an existing pod keeps the incoming one away',
      makePod({ name: 'p', labels: { app: 'web' } }),
      [web('w1', 'node-b', { antiAffinity: [antiAffinityToApp('web')] })],
      [FITS, EXISTING, FITS],
    ],
    [
      'an existing pod whose term does not match the incoming pod',
      makePod({ name: 'p', labels: { app: 'db' } }),
      [web('w1', 'node-b', { antiAffinity: [antiAffinityToApp('web')] })],
      [FITS, FITS, FITS],
    ],
    [
      'other namespaces are out of scope by default',
      web('new', '', { antiAffinity: [antiAffinityToApp('web')] }),
      [web('w1', 'node-a', { namespace: 'other' })],
      [FITS, FITS, FITS],
    ],
    [
      'namespaces list widens the scope',
      web('new', '', { antiAffinity: [{ ...antiAffinityToApp('web'), namespaces: ['other'] }] }),
      [web('w1', 'node-a', { namespace: 'other' }), web('w2', 'node-b')],
      [INCOMING, FITS, FITS],
    ],
    [
      'empty namespaceSelector means all namespaces',
      web('new', '', { antiAffinity: [{ ...antiAffinityToApp('web'), namespaceSelector: {} }] }),
      [web('w1', 'node-a', { namespace: 'other' }), web('w2', 'node-b')],
      [INCOMING, INCOMING, FITS],
    ],
    [
      'namespaceSelector by kubernetes.io/metadata.name',
      web('new', '', {
        antiAffinity: [
          { ...antiAffinityToApp('web'), namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'other' } } },
        ],
      }),
      [web('w1', 'node-a', { namespace: 'other' }), web('w2', 'node-b')],
      [INCOMING, FITS, FITS],
    ],
    [
      'a null labelSelector selects no pods',
      web('new', '', { antiAffinity: [{ topologyKey: 'kubernetes.io/hostname' }] }),
      [web('w1', 'node-a')],
      [FITS, FITS, FITS],
    ],
    [
      'a topology key no node has excludes nothing',
      web('new', '', { antiAffinity: [{ ...antiAffinityToApp('web'), topologyKey: 'rack' }] }),
      [web('w1', 'node-a')],
      [FITS, FITS, FITS],
    ],
    [
      'the incoming rule is reported before the existing one',
      web('new', '', { antiAffinity: [antiAffinityToApp('web')] }),
      [web('w1', 'node-a', { antiAffinity: [antiAffinityToApp('web')] })],
      [INCOMING, FITS, FITS],
    ],
  ])('%s', (_case, pod, placed, expected) => {
    const nodeInfos = buildNodeInfos(nodes, placed);
    const ctx = createSchedulingContext(pod, nodeInfos);
    const plugin = createPodAntiAffinity();
    expect(nodeInfos.map((nodeInfo) => plugin.filter(pod, nodeInfo, ctx))).toEqual(expected);
  });
});

describe('antiAffinityState', () => {
  it('excludes nothing, without looking at pods, when no pod has terms', () => {
    const state = antiAffinityState(makePod({ name: 'p' }), buildNodeInfos(nodes, [web('w1', 'node-a')]));
    expect(state.excludedByIncoming.size + state.excludedByExisting.size).toBe(0);
  });
});

describe('topologyValue', () => {
  it.each<[string, string | undefined]>([
    ['zone', 'z1'],
    ['kubernetes.io/hostname', 'node-x'],
    ['rack', undefined],
  ])('%s → %s', (key, expected) => {
    const node = makeNode({ name: 'node-x', labels: { zone: 'z1' } });
    expect(topologyValue({ ...node, metadata: { ...node.metadata, labels: { zone: 'z1' } } }, key)).toBe(expected);
  });

  it('prefers the hostname label over the node name', () => {
    const term: PodAffinityTerm = antiAffinityToApp('web');
    const node = makeNode({ name: 'node-x', labels: { [term.topologyKey]: 'host-1' } });
    expect(topologyValue(node, term.topologyKey)).toBe('host-1');
  });
});
