import { describe, expect, it } from 'vitest';
import { assumePod, buildNodeInfos, type ClusterLister, createSchedulingContext, EMPTY_CLUSTER, type FilterResult, type NodeInfo } from '../../framework.ts';
import type { Node, Pod, TopologySpreadConstraint } from '../../../../schemas/index.ts';
import { schedule } from '../../scheduler.ts';
import { makeNode, makePod } from '../../test-fixtures.ts';
import { createDefaultProfile } from '../index.ts';
import { constraintsFor, defaultSelector, spreadDefaultsOf } from './constraints.ts';
import { createPodTopologySpread } from './index.ts';

const ZONE = 'topology.kubernetes.io/zone';
const FITS: FilterResult = { type: 'fit' };
const SKEW: FilterResult = { type: 'unfit', reasons: ["node(s) didn't match pod topology spread constraints"] };
const NO_LABEL: FilterResult = { type: 'unfit', reasons: ["node(s) didn't match pod topology spread constraints (missing required label)"], unresolvable: true };

const zoneNodes = (...zones: (string | undefined)[]): Node[] =>
  zones.map((zone, index) => makeNode({ name: `node-${index}`, labels: zone === undefined ? {} : { [ZONE]: zone } }));
const web = (name: string, nodeName?: string, labels: Record<string, string> = {}): Pod =>
  makePod({ name, labels: { app: 'web', ...labels }, ...(nodeName === undefined ? {} : { nodeName }) });
const spread = (extra: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint => ({
  maxSkew: 1,
  topologyKey: ZONE,
  whenUnsatisfiable: 'DoNotSchedule',
  labelSelector: { matchLabels: { app: 'web' } },
  ...extra,
});

const verdicts = (nodes: Node[], placed: Pod[], pod: Pod): FilterResult[] => {
  const nodeInfos = buildNodeInfos(nodes, placed);
  const ctx = createSchedulingContext(pod, nodeInfos);
  const plugin = createPodTopologySpread();
  return nodeInfos.map((nodeInfo) => plugin.filter(pod, nodeInfo, ctx));
};

describe('PodTopologySpread filter (DoNotSchedule)', () => {
  const incoming = (constraint: TopologySpreadConstraint, extra: Parameters<typeof makePod>[0] | object = {}) =>
    makePod({ name: 'new', labels: { app: 'web' }, topologySpreadConstraints: [constraint], ...extra });

  it.each<[string, Node[], Pod[], Pod, FilterResult[]]>([
    ['no constraints: every node', zoneNodes('a', 'b'), [web('w', 'node-0')], web('new'), [FITS, FITS]],
    ['maxSkew 1 over zones 2/1/1', zoneNodes('a', 'b', 'c'), [web('w1', 'node-0'), web('w2', 'node-0'), web('w3', 'node-1'), web('w4', 'node-2')], incoming(spread()), [SKEW, FITS, FITS]],
    ['maxSkew 2 allows it', zoneNodes('a', 'b', 'c'), [web('w1', 'node-0'), web('w2', 'node-0'), web('w3', 'node-1'), web('w4', 'node-2')], incoming(spread({ maxSkew: 2 })), [FITS, FITS, FITS]],
    ['a node without the topology key is refused', zoneNodes('a', undefined), [], incoming(spread()), [FITS, NO_LABEL]],
    ['pods of other apps do not count', zoneNodes('a', 'b'), [makePod({ name: 'db', labels: { app: 'db' }, nodeName: 'node-0' }), web('w', 'node-1')], incoming(spread()), [FITS, SKEW]],
    ['pods of other namespaces do not count', zoneNodes('a', 'b'), [makePod({ name: 'x', namespace: 'other', labels: { app: 'web' }, nodeName: 'node-0' })], incoming(spread()), [FITS, FITS]],
    [
      'a pod its own selector does not match adds nothing to the skew',
      zoneNodes('a', 'b'),
      [web('w', 'node-0')],
      incoming(spread(), { name: 'new', labels: { app: 'other' } }),
      [FITS, FITS],
    ],
    [
      'minDomains above the domain count makes the global minimum 0',
      zoneNodes('a', 'b'),
      [web('w1', 'node-0'), web('w2', 'node-1')],
      incoming(spread({ minDomains: 3 })),
      [SKEW, SKEW],
    ],
    ['minDomains met: the real minimum', zoneNodes('a', 'b'), [web('w1', 'node-0'), web('w2', 'node-1')], incoming(spread({ minDomains: 2 })), [FITS, FITS]],
    [
      'matchLabelKeys: only pods with the same value of the key count',
      zoneNodes('a', 'b'),
      [web('old1', 'node-0', { hash: 'v1' }), web('old2', 'node-0', { hash: 'v1' }), web('new1', 'node-1', { hash: 'v2' })],
      makePod({ name: 'new', labels: { app: 'web', hash: 'v2' }, topologySpreadConstraints: [spread({ matchLabelKeys: ['hash'] })] }),
      [FITS, SKEW],
    ],
  ])('%s', (_case, nodes, placed, pod, expected) => {
    expect(verdicts(nodes, placed, pod)).toEqual(expected);
  });

  it('nodeAffinityPolicy: Honor counts only nodes the pod may run on; Ignore counts every node', () => {
    const nodes = [...zoneNodes('a', 'b'), makeNode({ name: 'node-2', labels: { [ZONE]: 'c', pool: 'other' } })];
    const placed = [web('w1', 'node-0'), web('w2', 'node-1')];
    const pod = (policy: string) =>
      makePod({
        name: 'new',
        labels: { app: 'web' },
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'DoesNotExist' }] }] } } },
        topologySpreadConstraints: [spread({ nodeAffinityPolicy: policy })],
      });
    // Honor: zones a, b (1 each) → min 1, both fit; zone c is not a domain (node-2 itself still passes: it is NodeAffinity's job).
    expect(verdicts(nodes, placed, pod('Honor')).slice(0, 2)).toEqual([FITS, FITS]);
    // Ignore: zone c (0 pods) is a domain → min 0 → a and b are too full.
    expect(verdicts(nodes, placed, pod('Ignore')).slice(0, 2)).toEqual([SKEW, SKEW]);
  });

  it('nodeTaintsPolicy: Honor leaves out nodes with untolerated taints; Ignore (the default) counts them', () => {
    const nodes = [...zoneNodes('a', 'b'), makeNode({ name: 'node-2', labels: { [ZONE]: 'c' }, taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] })];
    const placed = [web('w1', 'node-0'), web('w2', 'node-1')];
    const pod = (policy?: string) => makePod({ name: 'new', labels: { app: 'web' }, topologySpreadConstraints: [spread(policy === undefined ? {} : { nodeTaintsPolicy: policy })] });
    expect(verdicts(nodes, placed, pod('Honor')).slice(0, 2)).toEqual([FITS, FITS]);
    expect(verdicts(nodes, placed, pod()).slice(0, 2)).toEqual([SKEW, SKEW]);
  });
});

/** Schedules `pods` in turn, assuming each binding. */
const scheduleAll = (nodes: Node[], pods: Pod[], cluster: ClusterLister = EMPTY_CLUSTER, placed: Pod[] = []): (string | undefined)[] => {
  let nodeInfos: NodeInfo[] = buildNodeInfos(nodes, placed);
  const profile = createDefaultProfile();
  return pods.map((pod) => {
    const result = schedule(pod, nodeInfos, profile, cluster);
    if (result.type !== 'bound') return result.message;
    nodeInfos = nodeInfos.map((info) => (info.node.metadata.name === result.node ? assumePod(info, { ...pod, spec: { ...pod.spec, nodeName: result.node } }) : info));
    return nodeInfos.find((info) => info.node.metadata.name === result.node)?.node.metadata.labels?.[ZONE];
  });
};

describe('PodTopologySpread in the default profile', () => {
  it('a Deployment of 6 with a zone constraint over 3 zones (uneven node counts) lands 2/2/2', () => {
    const nodes = zoneNodes('a', 'a', 'a', 'b', 'c');
    const pods = [1, 2, 3, 4, 5, 6].map((replica) => makePod({ name: `web-${replica}`, labels: { app: 'web' }, topologySpreadConstraints: [spread()] }));
    const zones = scheduleAll(nodes, pods);
    expect(['a', 'b', 'c'].map((zone) => zones.filter((z) => z === zone).length)).toEqual([2, 2, 2]);
  });

  it("kube's message when spread and resources both refuse", () => {
    const nodes = [
      makeNode({ name: 'node-0', labels: { [ZONE]: 'a' }, allocatable: { 'nvidia.com/gpu': '4' } }),
      makeNode({ name: 'node-1', labels: { [ZONE]: 'b' } }),
      makeNode({ name: 'node-2', labels: { [ZONE]: 'c' } }),
    ];
    const placed = [web('w1', 'node-0'), web('w2', 'node-0')];
    const pod = makePod({ name: 'new', labels: { app: 'web' }, requests: { 'nvidia.com/gpu': '1' }, topologySpreadConstraints: [spread()] });
    expect(scheduleAll(nodes, [pod], EMPTY_CLUSTER, placed)).toEqual([
      "0/3 nodes are available: 1 node(s) didn't match pod topology spread constraints, 2 Insufficient nvidia.com/gpu.",
    ]);
  });

  it('ScheduleAnyway prefers the zone with fewer matching pods but never refuses', () => {
    const nodes = zoneNodes('a', 'b');
    const placed = [web('w1', 'node-0'), web('w2', 'node-0'), web('w3', 'node-0')];
    const pod = makePod({ name: 'new', labels: { app: 'web' }, topologySpreadConstraints: [spread({ whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 1 })] });
    expect(scheduleAll(nodes, [pod], EMPTY_CLUSTER, placed)).toEqual(['b']);
    const tainted = [makeNode({ name: 'node-0', labels: { [ZONE]: 'a' } }), makeNode({ name: 'node-1', labels: { [ZONE]: 'b' }, unschedulable: true })];
    expect(scheduleAll(tainted, [pod], EMPTY_CLUSTER, placed)).toEqual(['a']);
  });
});

describe('PodTopologySpread score', () => {
  it('raw Σ count × ln(domains + 2) + maxSkew - 1, rounded, normalized as kube', () => {
    const nodes = zoneNodes('a', 'b', 'c');
    const nodeInfos = buildNodeInfos(nodes, [web('w1', 'node-0'), web('w2', 'node-0'), web('w3', 'node-1')]);
    const pod = makePod({
      name: 'new',
      labels: { app: 'web' },
      topologySpreadConstraints: [spread({ whenUnsatisfiable: 'ScheduleAnyway', topologyKey: 'kubernetes.io/hostname' })],
    });
    const ctx = createSchedulingContext(pod, nodeInfos);
    ctx.setFeasibleNodes(nodeInfos);
    const plugin = createPodTopologySpread();
    const raw = nodeInfos.map((nodeInfo) => plugin.score(pod, nodeInfo, ctx));
    // ln(5) = 1.609: 2 pods → 3.22 → 3, 1 pod → 2, none → 0.
    expect(raw).toEqual([3, 2, 0]);
    plugin.normalize?.(raw, nodeInfos, ctx);
    expect(raw).toEqual([0, 33, 100]);
  });
});

describe('PodTopologySpread score: domains are those of the feasible nodes', () => {
  const nodes = zoneNodes('a', 'a', 'b', 'c');
  const placed = [web('w1', 'node-0'), web('w2', 'node-3'), web('w3', 'node-3'), web('w4', 'node-3')];
  const pod = makePod({ name: 'new', labels: { app: 'web' }, topologySpreadConstraints: [spread({ whenUnsatisfiable: 'ScheduleAnyway' })] });
  const scoresOf = (feasibleIndices: number[]) => {
    const nodeInfos = buildNodeInfos(nodes, placed);
    const ctx = createSchedulingContext(pod, nodeInfos);
    const feasible = feasibleIndices.map((index) => nodeInfos[index] as NodeInfo);
    ctx.setFeasibleNodes(feasible);
    const plugin = createPodTopologySpread();
    const raw = plugin.scoreAll?.(pod, feasibleIndices, ctx) ?? [];
    const single = feasible.map((nodeInfo) => plugin.score(pod, nodeInfo, ctx));
    plugin.normalize?.(raw, feasible, ctx);
    return { raw: single, normalized: raw };
  };
  it('every node feasible: 3 zones, weight ln(5)', () => {
    // zone a: 1 pod → 1.61 → 2; b: 0; c: 3 pods → 4.83 → 5.
    expect(scoresOf([0, 1, 2, 3])).toEqual({ raw: [2, 2, 0, 5], normalized: [60, 60, 100, 0] });
  });
  it('zone c not feasible: 2 zones, weight ln(4), and c pods do not count', () => {
    // zone a: 1 pod → 1.39 → 1; b: 0.
    expect(scoresOf([0, 1, 2])).toEqual({ raw: [1, 1, 0], normalized: [0, 0, 100] });
  });
});

describe('system default constraints', () => {
  const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-1', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } } } };
  const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { tier: 'front' } } };
  const cluster: ClusterLister = {
    ...EMPTY_CLUSTER,
    list: (kind, namespace) => (kind === 'Service' && namespace === 'default' ? [service] : []),
    get: (kind, namespace, name) => (kind === 'ReplicaSet' && namespace === 'default' && name === 'web-1' ? rs : undefined),
  };
  const owned = (name: string, nodeName?: string): Pod =>
    makePod({
      name,
      labels: { app: 'web', tier: 'front' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'u1', controller: true }],
      ...(nodeName === undefined ? {} : { nodeName }),
    });

  it('the selector merges selecting Services and the controlling ReplicaSet', () => {
    expect(defaultSelector(owned('p'), cluster)).toEqual([
      { type: 'equals', key: 'tier', value: 'front' },
      { type: 'equals', key: 'app', value: 'web' },
    ]);
    expect(defaultSelector(makePod({ name: 'lonely', labels: { app: 'x' } }), cluster)).toEqual([]);
  });

  it('applies hostname maxSkew 3 and zone maxSkew 5 as ScheduleAnyway, only to pods without constraints that something selects', () => {
    const result = constraintsFor(owned('p'), 'ScheduleAnyway', cluster);
    expect(result.systemDefaulted).toBe(true);
    expect(result.constraints.map((c) => [c.topologyKey, c.maxSkew])).toEqual([
      ['kubernetes.io/hostname', 3],
      ['topology.kubernetes.io/zone', 5],
    ]);
    expect(constraintsFor(owned('p'), 'DoNotSchedule', cluster).constraints).toEqual([]);
    expect(constraintsFor(makePod({ name: 'lonely' }), 'ScheduleAnyway', cluster).constraints).toEqual([]);
    const own = makePod({ name: 'own', labels: { app: 'web' }, topologySpreadConstraints: [spread()] });
    expect(constraintsFor(own, 'ScheduleAnyway', cluster).constraints).toEqual([]);
  });

  it('spreads a ReplicaSet over nodes even where resources would stack it', () => {
    // node-0 is far bigger: LeastAllocated alone would put the second pod there too.
    const nodes = [makeNode({ name: 'node-0', cpu: '64', memory: '256Gi' }), makeNode({ name: 'node-1', cpu: '4', memory: '8Gi' })];
    const hostnames = (lister: ClusterLister) => {
      let nodeInfos: NodeInfo[] = buildNodeInfos(nodes, [owned('first', 'node-0')]);
      const profile = createDefaultProfile();
      return [owned('a'), owned('b')].map((pod) => {
        const result = schedule({ ...pod, spec: { ...pod.spec, containers: [{ name: 'main', resources: { requests: { cpu: '1' } } }] } }, nodeInfos, profile, lister);
        if (result.type !== 'bound') return undefined;
        nodeInfos = nodeInfos.map((info) => (info.node.metadata.name === result.node ? assumePod(info, { ...pod, spec: { ...pod.spec, nodeName: result.node } }) : info));
        return result.node;
      });
    };
    expect(hostnames(EMPTY_CLUSTER)).toEqual(['node-0', 'node-0']);
    expect(hostnames(cluster)).toEqual(['node-1', 'node-0']);
  });
});

describe('a profile\'s default constraints (PodTopologySpreadArgs, defaultingType List)', () => {
  const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-1', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } } } };
  const cluster: ClusterLister = { ...EMPTY_CLUSTER, get: (kind, namespace, name) => (kind === 'ReplicaSet' && namespace === 'default' && name === 'web-1' ? rs : undefined) };
  const owned = (name: string, nodeName?: string): Pod =>
    makePod({
      name,
      labels: { app: 'web' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'u1', controller: true }],
      ...(nodeName === undefined ? {} : { nodeName }),
    });
  const list = { defaultingType: 'List', defaultConstraints: [{ maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule' }] } as const;

  it('filters with the listed DoNotSchedule constraint, selected as the system defaults are, and not for pods nothing selects', () => {
    const nodeInfos = buildNodeInfos(zoneNodes('a', 'b'), [owned('w1', 'node-0')]);
    const verdictsOf = (pod: Pod, plugin: ReturnType<typeof createPodTopologySpread>) => {
      const ctx = createSchedulingContext(pod, nodeInfos, cluster);
      return nodeInfos.map((nodeInfo) => plugin.filter(pod, nodeInfo, ctx));
    };
    expect(verdictsOf(owned('new'), createPodTopologySpread(list))).toEqual([SKEW, FITS]);
    // The same pod under kube's System defaults (ScheduleAnyway only) fits everywhere.
    expect(verdictsOf(owned('new'), createPodTopologySpread())).toEqual([FITS, FITS]);
    expect(verdictsOf(owned('new'), createPodTopologySpread({ defaultingType: 'System', defaultConstraints: [] }))).toEqual([FITS, FITS]);
    expect(verdictsOf(makePod({ name: 'lonely', labels: { app: 'x' } }), createPodTopologySpread(list))).toEqual([FITS, FITS]);
    // An empty List: no defaults at all.
    expect(constraintsFor(owned('p'), 'ScheduleAnyway', cluster, spreadDefaultsOf({ defaultingType: 'List', defaultConstraints: [] })).constraints).toEqual([]);
  });

  it('scores with listed ScheduleAnyway constraints, requiring every topology key as kube does when not system-defaulted', () => {
    const args = { defaultingType: 'List', defaultConstraints: [{ maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'ScheduleAnyway' }] } as const;
    const defaults = spreadDefaultsOf(args);
    expect(defaults.systemDefaulted).toBe(false);
    const result = constraintsFor(owned('p'), 'ScheduleAnyway', cluster, defaults);
    expect(result.constraints.map((c) => [c.topologyKey, c.maxSkew])).toEqual([[ZONE, 1]]);
    // Zone a holds a pod, zone b none; a node without the zone label is ignored (0).
    const nodeInfos = buildNodeInfos(zoneNodes('a', 'b', undefined), [owned('w1', 'node-0')]);
    const pod = owned('new');
    const ctx = createSchedulingContext(pod, nodeInfos, cluster);
    ctx.setFeasibleNodes(nodeInfos);
    const plugin = createPodTopologySpread(args);
    const scores = plugin.scoreAll?.(pod, [0, 1, 2], ctx) ?? [];
    plugin.normalize?.(scores, nodeInfos, ctx);
    expect(scores).toEqual([0, 100, 0]);
    // Under the System defaults the same pod's zone constraint has maxSkew 5 and the hostname one 3.
    expect(constraintsFor(pod, 'ScheduleAnyway', cluster).constraints.map((c) => [c.topologyKey, c.maxSkew])).toEqual([
      ['kubernetes.io/hostname', 3],
      [ZONE, 5],
    ]);
  });
});
