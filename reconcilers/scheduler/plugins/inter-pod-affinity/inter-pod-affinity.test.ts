import { describe, expect, it } from 'vitest';
import { buildNodeInfos, createSchedulingContext, EMPTY_CLUSTER, type FilterResult } from '../../framework.ts';
import type { Pod, PodAffinityTerm } from '../../../../schemas/index.ts';
import { antiAffinityToApp, makeNode, makePod } from '../../test-fixtures.ts';
import { createInterPodAffinity, interPodAffinityState, topologyValue } from './index.ts';

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

describe('InterPodAffinity anti-affinity filter', () => {
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
    const plugin = createInterPodAffinity();
    expect(nodeInfos.map((nodeInfo) => plugin.filter(pod, nodeInfo, ctx))).toEqual(expected);
  });
});

describe('interPodAffinityState', () => {
  it('counts nothing when no pod has terms', () => {
    const nodeInfos = buildNodeInfos(nodes, [web('w1', 'node-a')]);
    const pod = makePod({ name: 'p' });
    const state = interPodAffinityState(pod, nodeInfos, createSchedulingContext(pod, nodeInfos));
    expect(state.affinityCounts.size + state.antiAffinityCounts.size + state.existingAntiAffinityCounts.size).toBe(0);
  });
});

const AFFINITY: FilterResult = { type: 'unfit', reasons: ["node(s) didn't match pod affinity rules"], unresolvable: true };
const toApp = (app: string, topologyKey = 'zone'): PodAffinityTerm => ({ labelSelector: { matchLabels: { app } }, topologyKey });
const withAffinity = (name: string, labels: Record<string, string>, terms: PodAffinityTerm[], namespace?: string): Pod =>
  makePod({ name, labels, ...(namespace === undefined ? {} : { namespace }), affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms } } });

describe('InterPodAffinity required affinity', () => {
  it.each<[string, Pod, readonly Pod[], [FilterResult, FilterResult, FilterResult]]>([
    ['lands in the zone of the db pod', withAffinity('app', {}, [toApp('db')]), [makePod({ name: 'db', labels: { app: 'db' }, nodeName: 'node-c' })], [AFFINITY, AFFINITY, FITS]],
    ['per host: only the db host', withAffinity('app', {}, [toApp('db', 'kubernetes.io/hostname')]), [makePod({ name: 'db', labels: { app: 'db' }, nodeName: 'node-b' })], [AFFINITY, FITS, AFFINITY]],
    ['no db pod anywhere and not a db itself: nowhere', withAffinity('app', {}, [toApp('db')]), [], [AFFINITY, AFFINITY, AFFINITY]],
    ['the first pod of a group matching its own terms may land anywhere', withAffinity('db-0', { app: 'db' }, [toApp('db')]), [], [FITS, FITS, FITS]],
    [
      'the first-pod rule needs the topology key on the node',
      withAffinity('db-0', { app: 'db' }, [toApp('db', 'rack')]),
      [],
      [AFFINITY, AFFINITY, AFFINITY],
    ],
    [
      'once one matches, the group follows it',
      withAffinity('db-1', { app: 'db' }, [toApp('db')]),
      [makePod({ name: 'db-0', labels: { app: 'db' }, nodeName: 'node-a' })],
      [FITS, FITS, AFFINITY],
    ],
    [
      'a pod must match all terms to count',
      withAffinity('app', {}, [toApp('db'), { labelSelector: { matchLabels: { tier: 'gold' } }, topologyKey: 'zone' }]),
      [makePod({ name: 'db', labels: { app: 'db' }, nodeName: 'node-c' }), makePod({ name: 'gold', labels: { tier: 'gold' }, nodeName: 'node-c' })],
      [AFFINITY, AFFINITY, AFFINITY],
    ],
    [
      'the same pod matching all terms counts',
      withAffinity('app', {}, [toApp('db'), { labelSelector: { matchLabels: { tier: 'gold' } }, topologyKey: 'zone' }]),
      [makePod({ name: 'db', labels: { app: 'db', tier: 'gold' }, nodeName: 'node-a' })],
      [FITS, FITS, AFFINITY],
    ],
    [
      'other namespaces do not count by default',
      withAffinity('app', {}, [toApp('db')]),
      [makePod({ name: 'db', labels: { app: 'db' }, namespace: 'prod', nodeName: 'node-c' })],
      [AFFINITY, AFFINITY, AFFINITY],
    ],
    [
      'namespaceSelector against the real namespace labels',
      withAffinity('app', {}, [{ ...toApp('db'), namespaceSelector: { matchLabels: { env: 'prod' } } }]),
      [makePod({ name: 'db', labels: { app: 'db' }, namespace: 'prod', nodeName: 'node-c' }), makePod({ name: 'db2', labels: { app: 'db' }, namespace: 'dev', nodeName: 'node-a' })],
      [AFFINITY, AFFINITY, FITS],
    ],
  ])('%s', (_case, pod, placed, expected) => {
    const nodeInfos = buildNodeInfos(nodes, placed);
    const cluster = { ...EMPTY_CLUSTER, namespaceLabels: (name: string) => ({ 'kubernetes.io/metadata.name': name, ...(name === 'prod' ? { env: 'prod' } : {}) }) };
    const ctx = createSchedulingContext(pod, nodeInfos, cluster);
    const plugin = createInterPodAffinity();
    expect(nodeInfos.map((nodeInfo) => plugin.filter(pod, nodeInfo, ctx))).toEqual(expected);
  });

  it('an existing pod with a namespaceSelector anti-affinity keeps out pods of matching namespaces only', () => {
    const guard = makePod({
      name: 'guard',
      labels: {},
      nodeName: 'node-a',
      antiAffinity: [{ labelSelector: {}, namespaceSelector: { matchLabels: { env: 'dev' } }, topologyKey: 'zone' }],
    });
    const nodeInfos = buildNodeInfos(nodes, [guard]);
    const cluster = { ...EMPTY_CLUSTER, namespaceLabels: (name: string) => ({ 'kubernetes.io/metadata.name': name, env: name }) };
    const plugin = createInterPodAffinity();
    const verdicts = (pod: Pod) => nodeInfos.map((nodeInfo) => plugin.filter(pod, nodeInfo, createSchedulingContext(pod, nodeInfos, cluster)).type);
    expect(verdicts(makePod({ name: 'd', namespace: 'dev' }))).toEqual(['unfit', 'unfit', 'fit']);
    expect(verdicts(makePod({ name: 'p', namespace: 'prod' }))).toEqual(['fit', 'fit', 'fit']);
  });
});

describe('InterPodAffinity score', () => {
  const zones = [
    makeNode({ name: 'node-a', labels: { zone: 'z1' } }),
    makeNode({ name: 'node-b', labels: { zone: 'z2' } }),
    makeNode({ name: 'node-c', labels: { zone: 'z3' } }),
  ];
  const preferred = (weight: number, app: string) => ({ weight, podAffinityTerm: toApp(app) });
  const scoresOf = (pod: Pod, placed: readonly Pod[]): number[] => {
    const nodeInfos = buildNodeInfos(zones, placed);
    const ctx = createSchedulingContext(pod, nodeInfos);
    ctx.setFeasibleNodes(nodeInfos);
    const plugin = createInterPodAffinity();
    const raw = nodeInfos.map((nodeInfo) => plugin.score(pod, nodeInfo, ctx));
    plugin.normalize?.(raw, nodeInfos, ctx);
    return raw;
  };
  it.each<[string, Pod, readonly Pod[], number[]]>([
    ['nothing to prefer: all 0', makePod({ name: 'p' }), [makePod({ name: 'db', labels: { app: 'db' }, nodeName: 'node-a' })], [0, 0, 0]],
    [
      'preferred affinity weights, min-max normalized',
      makePod({ name: 'p', affinity: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [preferred(10, 'db'), preferred(5, 'cache')] } } }),
      [makePod({ name: 'db', labels: { app: 'db' }, nodeName: 'node-a' }), makePod({ name: 'cache', labels: { app: 'cache' }, nodeName: 'node-b' })],
      [100, 50, 0],
    ],
    [
      'preferred anti-affinity subtracts',
      makePod({ name: 'p', affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [preferred(10, 'db')] } } }),
      [makePod({ name: 'db', labels: { app: 'db' }, nodeName: 'node-a' })],
      [0, 100, 100],
    ],
    [
      "an existing pod's required affinity to the incoming pod attracts it (hard weight 1)",
      makePod({ name: 'p', labels: { app: 'web' } }),
      [withAffinity('client', {}, [toApp('web')]), makePod({ name: 'other', nodeName: 'node-c' })].map((pod, index) =>
        index === 0 ? { ...pod, spec: { ...pod.spec, nodeName: 'node-b' } } : pod,
      ),
      [0, 100, 0],
    ],
    [
      "an existing pod's preferred anti-affinity repels it",
      makePod({ name: 'p', labels: { app: 'web' } }),
      [
        makePod({
          name: 'loner',
          nodeName: 'node-c',
          affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [preferred(50, 'web')] } },
        }),
      ],
      [100, 100, 0],
    ],
  ])('%s', (_case, pod, placed, expected) => {
    expect(scoresOf(pod, placed)).toEqual(expected);
  });

  describe("a profile's InterPodAffinityArgs", () => {
    const rawOf = (pod: Pod, placed: readonly Pod[], args: Parameters<typeof createInterPodAffinity>[0]): number[] => {
      const nodeInfos = buildNodeInfos(zones, placed);
      const ctx = createSchedulingContext(pod, nodeInfos);
      ctx.setFeasibleNodes(nodeInfos);
      const plugin = createInterPodAffinity(args);
      return nodeInfos.map((nodeInfo) => plugin.score(pod, nodeInfo, ctx));
    };
    const incoming = makePod({ name: 'p', labels: { app: 'web' } });
    const client = { ...withAffinity('client', {}, [toApp('web')]), spec: { ...withAffinity('client', {}, [toApp('web')]).spec, nodeName: 'node-b' } };
    const repeller = makePod({ name: 'loner', nodeName: 'node-c', affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [preferred(50, 'web')] } } });
    const wanting = makePod({ name: 'p', labels: { app: 'web' }, affinity: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [preferred(10, 'db')] } } });

    it("hardPodAffinityWeight weighs an existing pod's required affinity to the incoming pod; 0 ignores it", () => {
      expect(rawOf(incoming, [client], undefined)).toEqual([0, 1, 0]);
      expect(rawOf(incoming, [client], { hardPodAffinityWeight: 7, ignorePreferredTermsOfExistingPods: false })).toEqual([0, 7, 0]);
      expect(rawOf(incoming, [client], { hardPodAffinityWeight: 0, ignorePreferredTermsOfExistingPods: false })).toEqual([0, 0, 0]);
    });

    it('ignorePreferredTermsOfExistingPods skips the score of a pod without preferred terms of its own, not of one with them', () => {
      expect(rawOf(incoming, [repeller, client], undefined)).toEqual([0, 1, -50]);
      expect(rawOf(incoming, [repeller, client], { hardPodAffinityWeight: 1, ignorePreferredTermsOfExistingPods: true })).toEqual([0, 0, 0]);
      const db = makePod({ name: 'db', labels: { app: 'db' }, nodeName: 'node-a' });
      expect(rawOf(wanting, [db, repeller], { hardPodAffinityWeight: 1, ignorePreferredTermsOfExistingPods: true })).toEqual([10, 0, -50]);
    });
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
