import { describe, expect, it } from 'vitest';
import { assumePod, buildNodeInfos, createProfile, EMPTY_CLUSTER, type NodeInfo } from './framework.ts';
import type { Node, Pod } from '../../schemas/index.ts';
import { createDefaultProfile, defaultRegistry } from './plugins/index.ts';
import { createRoundScheduler } from './round-scheduler.ts';
import { NO_NODES_MESSAGE, schedule, type ScheduleResult } from './scheduler.ts';
import { antiAffinityToApp, makeNode, makePod } from './test-fixtures.ts';
import { startIndexOf } from './nodes-to-score.ts';

const profile = createDefaultProfile();

/** Schedules `pods` one after another, counting each bound pod on its node for the next decision. */
function scheduleInTurn(nodeInfos: readonly NodeInfo[], pods: readonly Pod[]): ScheduleResult[] {
  let current = [...nodeInfos];
  return pods.map((pod) => {
    const result = schedule(pod, current, profile);
    if (result.type === 'bound') {
      current = current.map((nodeInfo) =>
        nodeInfo.node.metadata.name === result.node ? assumePod(nodeInfo, { ...pod, spec: { ...pod.spec, nodeName: result.node } }) : nodeInfo,
      );
    }
    return result;
  });
}

interface Scenario {
  readonly nodes: readonly Node[];
  readonly placed?: readonly Pod[];
  readonly pods: readonly Pod[];
  /** Per pod: the node it is bound to, or the exact unschedulable message. */
  readonly expected: readonly ({ bound: string } | { unschedulable: string })[];
}

const scenarios: Record<string, Scenario> = {
  'nodeSelector is honoured': {
    nodes: [
      makeNode({ name: 'node-a', labels: { disk: 'hdd' } }),
      makeNode({ name: 'node-b', labels: { disk: 'ssd' } }),
      makeNode({ name: 'node-c' }),
    ],
    pods: [makePod({ name: 'db', nodeSelector: { disk: 'ssd' } })],
    expected: [{ bound: 'node-b' }],
  },
  'taints keep pods off unless tolerated': {
    nodes: [
      makeNode({ name: 'node-a', taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }),
      makeNode({ name: 'node-b', taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }),
      makeNode({ name: 'node-c', cpu: '1' }),
    ],
    placed: [makePod({ name: 'busy', cpu: '900m', nodeName: 'node-c' })],
    pods: [
      makePod({ name: 'plain', cpu: '100m' }),
      makePod({ name: 'trainer', cpu: '100m', tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] }),
      makePod({ name: 'too-big', cpu: '200m' }),
    ],
    expected: [
      { bound: 'node-c' },
      { bound: 'node-a' },
      { unschedulable: '0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}.' },
    ],
  },
  'resources decide across 3 nodes, least allocated wins': {
    nodes: [
      makeNode({ name: 'node-a', cpu: '1', memory: '2Gi' }),
      makeNode({ name: 'node-b', cpu: '2', memory: '4Gi' }),
      makeNode({ name: 'node-c', cpu: '4', memory: '8Gi' }),
    ],
    placed: [makePod({ name: 'big', cpu: '3', memory: '6Gi', nodeName: 'node-c' })],
    pods: [
      makePod({ name: 'p1', cpu: '1500m', memory: '1Gi' }),
      makePod({ name: 'p2', cpu: '500m', memory: '512Mi' }),
      makePod({ name: 'p3', cpu: '900m', memory: '1Gi' }),
    ],
    expected: [{ bound: 'node-b' }, { bound: 'node-a' }, { bound: 'node-c' }],
  },
  'anti-affinity spreads 3 replicas over 3 nodes and the 4th is unschedulable': {
    nodes: [makeNode({ name: 'node-a' }), makeNode({ name: 'node-b' }), makeNode({ name: 'node-c' })],
    pods: [1, 2, 3, 4].map((replica) =>
      makePod({ name: `web-${replica}`, labels: { app: 'web' }, cpu: '100m', antiAffinity: [antiAffinityToApp('web')] }),
    ),
    expected: [
      { bound: 'node-a' },
      { bound: 'node-b' },
      { bound: 'node-c' },
      { unschedulable: "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules." },
    ],
  },
  'a pod that fits nowhere gets the aggregated message': {
    nodes: [
      makeNode({ name: 'node-a', cpu: '1', labels: { zone: 'a' } }),
      makeNode({ name: 'node-b', labels: { zone: 'b' } }),
      makeNode({ name: 'node-c', labels: { zone: 'c' } }),
    ],
    pods: [makePod({ name: 'p', cpu: '2', nodeSelector: { zone: 'a' } })],
    expected: [
      { unschedulable: "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector." },
    ],
  },
  'every kind of reason, counted and sorted as strings like kube-scheduler ("10 …" before "2 …")': {
    nodes: [
      makeNode({ name: 'node-1', unschedulable: true }),
      makeNode({ name: 'node-2', unschedulable: true }),
      makeNode({ name: 'node-3', ready: 'False' }),
      makeNode({ name: 'node-4', cpu: '500m', memory: '1Gi' }),
      makeNode({ name: 'node-5', pods: '1' }),
      ...[6, 7, 8, 9, 10, 11, 12, 13, 14].map((index) => makeNode({ name: `node-${index}`, memory: '1Gi' })),
    ],
    placed: [makePod({ name: 'resident', nodeName: 'node-5' })],
    pods: [makePod({ name: 'p', cpu: '1', memory: '2Gi' })],
    expected: [
      {
        unschedulable:
          '0/14 nodes are available: 1 Insufficient cpu, 1 Too many pods, ' +
          '1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 10 Insufficient memory, ' +
          '2 node(s) were unschedulable.',
      },
    ],
  },
  'nodeName pins the pod': {
    nodes: [makeNode({ name: 'node-a' }), makeNode({ name: 'node-b' })],
    pods: [makePod({ name: 'pinned', nodeName: 'node-b' }), makePod({ name: 'lost', nodeName: 'node-z' })],
    expected: [
      { bound: 'node-b' },
      { unschedulable: "0/2 nodes are available: 2 node(s) didn't match the requested node name." },
    ],
  },
  'an empty cluster': {
    nodes: [],
    pods: [makePod({ name: 'p' })],
    expected: [{ unschedulable: NO_NODES_MESSAGE }],
  },
};

describe('schedule', () => {
  it.each(Object.entries(scenarios))('%s', (_name, scenario) => {
    const results = scheduleInTurn(buildNodeInfos(scenario.nodes, scenario.placed ?? []), scenario.pods);
    expect(
      results.map((result) => (result.type === 'bound' ? { bound: result.node } : { unschedulable: result.message })),
    ).toEqual(scenario.expected);
  });

  it('records the rationale: filtered nodes by name, top scores best first, counts', () => {
    const nodes = [
      makeNode({ name: 'node-c', cpu: '8' }),
      makeNode({ name: 'node-a', labels: { gpu: 'no' } }),
      makeNode({ name: 'node-b', cpu: '2' }),
    ];
    const result = schedule(
      makePod({ name: 'p', cpu: '1', memory: '1Gi' }),
      buildNodeInfos(nodes, [makePod({ name: 'x', cpu: '1', nodeName: 'node-a' })]),
      profile,
    );
    expect(result).toEqual({
      type: 'bound',
      node: 'node-c',
      rationale: {
        filtered: [],
        scores: [
          {
            node: 'node-c',
            score: 487,
            plugins: [
              { name: 'TaintToleration', score: 100 },
              { name: 'NodeAffinity', score: 0 },
              { name: 'NodeResourcesFit', score: 87 },
              { name: 'PodTopologySpread', score: 0 },
              { name: 'InterPodAffinity', score: 0 },
              { name: 'NodeResourcesBalancedAllocation', score: 100 },
              { name: 'ImageLocality', score: 0 },
            ],
          },
          {
            node: 'node-b',
            score: 449,
            plugins: [
              { name: 'TaintToleration', score: 100 },
              { name: 'NodeAffinity', score: 0 },
              { name: 'NodeResourcesFit', score: 68 },
              { name: 'PodTopologySpread', score: 0 },
              { name: 'InterPodAffinity', score: 0 },
              { name: 'NodeResourcesBalancedAllocation', score: 81 },
              { name: 'ImageLocality', score: 0 },
            ],
          },
          {
            node: 'node-a',
            score: 448,
            plugins: [
              { name: 'TaintToleration', score: 100 },
              { name: 'NodeAffinity', score: 0 },
              { name: 'NodeResourcesFit', score: 67 },
              { name: 'PodTopologySpread', score: 0 },
              { name: 'InterPodAffinity', score: 0 },
              { name: 'NodeResourcesBalancedAllocation', score: 81 },
              { name: 'ImageLocality', score: 0 },
            ],
          },
        ],
        feasibleNodes: 3,
        totalNodes: 3,
      },
    });
  });

  it('lists every filtered node with its reasons, sorted by name', () => {
    const nodes = [
      makeNode({ name: 'node-b', cpu: '1', memory: '1Gi' }),
      makeNode({ name: 'node-a', unschedulable: true }),
      makeNode({ name: 'node-c' }),
    ];
    const result = schedule(makePod({ name: 'p', cpu: '2', memory: '2Gi' }), buildNodeInfos(nodes, []), profile);
    expect(result.type).toBe('bound');
    expect(result.rationale.filtered).toEqual([
      { node: 'node-a', reasons: ['node(s) were unschedulable'] },
      { node: 'node-b', reasons: ['Insufficient cpu', 'Insufficient memory'] },
    ]);
    expect(result.rationale.feasibleNodes).toBe(1);
  });

  it('keeps only the 5 best scores', () => {
    const nodes = Array.from({ length: 8 }, (_, index) => makeNode({ name: `node-${index}`, cpu: `${index + 1}` }));
    const result = schedule(makePod({ name: 'p', cpu: '500m' }), buildNodeInfos(nodes, []), profile);
    expect(result.rationale.scores.map((score) => score.node)).toEqual(['node-7', 'node-6', 'node-5', 'node-4', 'node-3']);
    expect(result.rationale.feasibleNodes).toBe(8);
  });

  it('is deterministic: same input, identical output, whatever the node order; ties go to the first name', () => {
    const nodes = ['node-e', 'node-b', 'node-d', 'node-a', 'node-c', 'node-f', 'node-g'].map((name) =>
      makeNode({ name, ...(name === 'node-g' ? { unschedulable: true } : {}) }),
    );
    const pod = makePod({ name: 'p', cpu: '250m', memory: '256Mi' });
    const first = schedule(pod, buildNodeInfos(nodes, []), profile);
    const again = schedule(pod, buildNodeInfos(nodes, []), createDefaultProfile());
    const reversed = schedule(pod, buildNodeInfos([...nodes].reverse(), []), profile);
    expect(first.type === 'bound' && first.node).toBe('node-a');
    expect(again).toEqual(first);
    expect(reversed).toEqual(first);
    expect(JSON.stringify(reversed)).toBe(JSON.stringify(first));
  });

  it('spreads small pods whose integer scores tie on large nodes: fewer pods wins the tie', () => {
    const nodes = ['node-1', 'node-2'].map((name) => makeNode({ name, cpu: '64', memory: '256Gi' }));
    const pods = ['a', 'b', 'c', 'd'].map((name) => makePod({ name, cpu: '100m', memory: '64Mi' }));
    const results = scheduleInTurn(buildNodeInfos(nodes, []), pods);
    expect(results.map((r) => r.type === 'bound' && r.node)).toEqual(['node-1', 'node-2', 'node-1', 'node-2']);
    expect(results.map((r) => r.rationale.scores[0]?.score === r.rationale.scores[1]?.score)).toEqual([true, true, true, true]);
  });

  it('treats a plugin score outside 0..100 as a bug', () => {
    const broken = createProfile(
      { filters: [], scores: [{ name: 'Broken', weight: 1 }] },
      { Broken: () => ({ name: 'Broken', score: () => 101 }) },
    );
    expect(() => schedule(makePod({ name: 'p' }), buildNodeInfos([makeNode({ name: 'n' })], []), broken)).toThrow(
      'score plugin Broken gave node n the score 101',
    );
  });

  it('applies weights to the total', () => {
    const weighted = createProfile(
      { filters: ['NodeResourcesFit'], scores: [{ name: 'NodeResourcesFit', weight: 3 }] },
      defaultRegistry,
    );
    const result = schedule(makePod({ name: 'p', cpu: '2', memory: '4Gi' }), buildNodeInfos([makeNode({ name: 'n' })], []), weighted);
    expect(result.rationale.scores).toEqual([{ node: 'n', score: 150, plugins: [{ name: 'NodeResourcesFit', score: 50 }] }]);
  });
});

describe('a round scheduler (outcomes reused for equal pods on unchanged nodes)', () => {
  /** The default profile with every filter call counted. */
  const countingProfile = (): { profile: ReturnType<typeof createDefaultProfile>; calls: () => number } => {
    let calls = 0;
    const base = createDefaultProfile();
    return {
      profile: {
        preEnqueue: base.preEnqueue,
        postFilters: base.postFilters,
        filters: base.filters.map((plugin) => ({
          ...plugin,
          filter: (...args: Parameters<typeof plugin.filter>) => {
            calls += 1;
            return plugin.filter(...args);
          },
        })),
        scores: base.scores,
      },
      calls: () => calls,
    };
  };

  /** Decides `pods` in turn with `decide`, assuming each binding, as a scheduler round does. */
  const round = (nodeInfos: readonly NodeInfo[], pods: readonly Pod[], decide: (pod: Pod, infos: readonly NodeInfo[]) => ScheduleResult): ScheduleResult[] => {
    const current = [...nodeInfos];
    return pods.map((pod) => {
      const result = decide(pod, current);
      if (result.type === 'bound') {
        const index = current.findIndex((info) => info.node.metadata.name === result.node);
        current[index] = assumePod(current[index] as NodeInfo, { ...pod, spec: { ...pod.spec, nodeName: result.node } });
      }
      return result;
    });
  };

  /** As `round`, handing the round scheduler the log of replaced entries (as the controller does). */
  const roundLogged = (
    nodeInfos: readonly NodeInfo[],
    pods: readonly Pod[],
    decide: (pod: Pod, infos: readonly NodeInfo[], changes?: readonly number[]) => ScheduleResult,
  ): ScheduleResult[] => {
    const current = [...nodeInfos];
    const changes: number[] = [];
    return pods.map((pod) => {
      const result = decide(pod, current, changes);
      if (result.type === 'bound') {
        const index = current.findIndex((info) => info.node.metadata.name === result.node);
        current[index] = assumePod(current[index] as NodeInfo, { ...pod, spec: { ...pod.spec, nodeName: result.node } });
        changes.push(index);
      }
      return result;
    });
  };

  it('scores afresh a plugin that was node-local when the memo was made and is not any more (preferred anti-affinity to its own replicas)', () => {
    const nodes = ['node-a', 'node-b'].map((name) => makeNode({ name, cpu: '4' }));
    // As a coredns Deployment: each replica prefers nodes without another replica. The first
    // replica meets no pod (InterPodAffinity scores 0 everywhere, node-local); the second does.
    const replica = (n: number): Pod => {
      const pod = makePod({ name: `dns-${n}`, cpu: '100m', labels: { app: 'dns' } });
      return {
        ...pod,
        spec: {
          ...pod.spec,
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: 'dns' } }, topologyKey: 'kubernetes.io/hostname' } },
              ],
            },
          },
        },
      };
    };
    const pods = [replica(0), replica(1), replica(2)];
    const expected = round(buildNodeInfos(nodes, []), pods, (pod, infos) => schedule(pod, infos, profile));
    const actual = roundLogged(buildNodeInfos(nodes, []), pods, createRoundScheduler(createDefaultProfile()));
    expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
    expect(actual.slice(0, 2).map((r) => (r.type === 'bound' ? r.node : undefined)).sort()).toEqual(['node-a', 'node-b']);
  });

  it('with the log of replaced entries, decides exactly as schedule does, visiting only the replaced nodes', () => {
    const nodes = Array.from({ length: 150 }, (_, i) =>
      makeNode({ name: `node-${String(i).padStart(3, '0')}`, cpu: String(1 + (i % 3)), memory: `${2 + (i % 5)}Gi`, pods: String(3 + (i % 4)), labels: { zone: `z${i % 2}` } }),
    );
    // Interleaved templates: a memo catches up with several replaced entries at once.
    const pods = Array.from({ length: 700 }, (_, n) =>
      n % 9 === 0 || n % 13 === 0
        ? makePod({ name: `db-${n}`, cpu: '250m', memory: '512Mi', nodeSelector: { zone: 'z1' }, labels: { app: 'db' } })
        : n % 5 === 0
          ? makePod({ name: `solo-${n}`, cpu: '100m', labels: { app: 'solo' }, antiAffinity: [antiAffinityToApp('solo')] })
          : makePod({ name: `web-${n}`, cpu: '200m', memory: '256Mi', labels: { app: 'web' } }),
    );
    const expected = round(buildNodeInfos(nodes, []), pods, (pod, infos) => schedule(pod, infos, profile));
    const actual = roundLogged(buildNodeInfos(nodes, []), pods, createRoundScheduler(createDefaultProfile()));
    expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
    expect(expected.filter((r) => r.type === 'unschedulable').length).toBeGreaterThan(0);

    const few = Array.from({ length: 50 }, (_, i) => makeNode({ name: `node-${String(i).padStart(2, '0')}`, cpu: '32' }));
    const replicas = Array.from({ length: 100 }, (_, n) => makePod({ name: `web-${n}`, cpu: '100m', labels: { app: 'web' } }));
    const counted = countingProfile();
    const logged = roundLogged(buildNodeInfos(few, []), replicas, createRoundScheduler(counted.profile));
    expect(JSON.stringify(logged)).toBe(JSON.stringify(round(buildNodeInfos(few, []), replicas, (pod, infos) => schedule(pod, infos, profile))));
    expect(counted.calls()).toBe(counted.profile.filters.length * (50 + 99));
  });

  it('decides exactly as schedule does with scores that are not node-local (spreading, preferences), reusing the filters', () => {
    const ZONE = 'topology.kubernetes.io/zone';
    const nodes = Array.from({ length: 30 }, (_, i) =>
      makeNode({
        name: `node-${String(i).padStart(2, '0')}`,
        cpu: String(2 + (i % 3)),
        labels: { [ZONE]: `z${i % 3}`, disk: i % 4 === 0 ? 'ssd' : 'hdd' },
        allocatable: i % 5 === 0 ? { 'nvidia.com/gpu': '2' } : {},
      }),
    );
    const owner = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'u', controller: true }];
    const rs = { kind: 'ReplicaSet', apiVersion: 'apps/v1', metadata: { name: 'web-1', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } } } };
    const cluster = { ...EMPTY_CLUSTER, get: (kind: string, _ns: string, name: string) => (kind === 'ReplicaSet' && name === 'web-1' ? rs : undefined) };
    const templates = [
      (n: number) => makePod({ name: `web-${n}`, cpu: '100m', labels: { app: 'web' }, ownerReferences: owner }),
      (n: number) =>
        makePod({
          name: `ssd-${n}`,
          cpu: '100m',
          labels: { app: 'ssd' },
          affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } }] } },
        }),
      (n: number) =>
        makePod({
          name: `spread-${n}`,
          cpu: '100m',
          labels: { app: 'spread' },
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'spread' } } }],
        }),
      (n: number) => makePod({ name: `gpu-${n}`, labels: { app: 'gpu' }, requests: { 'nvidia.com/gpu': '1' }, ports: [{ containerPort: 80, hostPort: 80 }] }),
      (n: number) =>
        makePod({
          name: `near-${n}`,
          cpu: '100m',
          labels: { app: 'near' },
          affinity: { podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: { labelSelector: { matchLabels: { app: 'gpu' } }, topologyKey: ZONE } }] } },
        }),
    ];
    const pods = Array.from({ length: 200 }, (_, n) => (templates[Math.floor(n / 6) % templates.length] as (n: number) => Pod)(n));
    const expected = round(buildNodeInfos(nodes, []), pods, (pod, infos) => schedule(pod, infos, profile, cluster));
    const counted = countingProfile();
    const actual = roundLogged(buildNodeInfos(nodes, []), pods, createRoundScheduler(counted.profile, cluster));
    expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
    expect(expected.filter((r) => r.type === 'unschedulable').length).toBeGreaterThan(0);
    // Spreading moved pods off the least-allocated choice at least once (scores were really fresh).
    expect(expected.some((r) => r.rationale.scores[0]?.plugins.some((entry) => entry.name === 'PodTopologySpread' && entry.score < 100))).toBe(true);
    // Filters ran once per node per template, plus once per replaced node: not once per node per pod.
    expect(counted.calls()).toBeLessThan(counted.profile.filters.length * nodes.length * 60);

    const webs = Array.from({ length: 60 }, (_, n) => (templates[0] as (n: number) => Pod)(n));
    const countedWebs = countingProfile();
    const websActual = roundLogged(buildNodeInfos(nodes, []), webs, createRoundScheduler(countedWebs.profile, cluster));
    expect(JSON.stringify(websActual)).toBe(JSON.stringify(round(buildNodeInfos(nodes, []), webs, (pod, infos) => schedule(pod, infos, profile, cluster))));
    expect(countedWebs.calls()).toBe(countedWebs.profile.filters.length * (nodes.length + 59));
    // The default constraints spread the ReplicaSet: 2 per node, not stacked on the biggest nodes.
    const perNode = new Map<string, number>();
    for (const r of websActual) if (r.type === 'bound') perNode.set(r.node, (perNode.get(r.node) ?? 0) + 1);
    expect(Math.max(...perNode.values())).toBe(2);
  });

  it('decides exactly as schedule does, pod after pod, with filters, taints, anti-affinity and full nodes', () => {
    const nodes = Array.from({ length: 12 }, (_, i) =>
      makeNode({
        name: `node-${String(i).padStart(2, '0')}`,
        cpu: i % 4 === 0 ? '1' : '2',
        pods: i % 5 === 0 ? '3' : '110',
        labels: { zone: `z${i % 3}` },
        ...(i % 6 === 1 ? { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' as const }] } : {}),
        ...(i === 7 ? { ready: 'False' as const } : {}),
      }),
    );
    const templates = [
      (n: number) => makePod({ name: `web-${n}`, cpu: '200m', labels: { app: 'web' } }),
      (n: number) => makePod({ name: `db-${n}`, cpu: '300m', nodeSelector: { zone: 'z1' }, labels: { app: 'db' } }),
      (n: number) => makePod({ name: `gpu-${n}`, cpu: '100m', labels: { app: 'gpu' }, tolerations: [{ key: 'dedicated', operator: 'Exists' }] }),
      (n: number) => makePod({ name: `solo-${n}`, cpu: '100m', labels: { app: 'solo' }, antiAffinity: [antiAffinityToApp('solo')] }),
      // One per zone: a binding excludes the other nodes of its zone too.
      (n: number) => makePod({ name: `zonal-${n}`, cpu: '100m', labels: { app: 'zonal' }, antiAffinity: [{ labelSelector: { matchLabels: { app: 'zonal' } }, topologyKey: 'zone' }] }),
    ];
    // Mostly runs of one template (as a ReplicaSet's pods arrive), some interleaved.
    const pods = Array.from({ length: 160 }, (_, n) => (templates[(n < 60 ? 0 : Math.floor(n / 7)) % templates.length] as (n: number) => Pod)(n));
    const placed = [makePod({ name: 'old-solo', cpu: '100m', labels: { app: 'solo' }, antiAffinity: [antiAffinityToApp('solo')], nodeName: 'node-03' })];
    const expected = round(buildNodeInfos(nodes, placed), pods, (pod, infos) => schedule(pod, infos, profile));
    const counted = countingProfile();
    const actual = round(buildNodeInfos(nodes, placed), pods, createRoundScheduler(counted.profile));
    expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
    expect(expected.filter((r) => r.type === 'unschedulable').length).toBeGreaterThan(0);
    expect(expected.some((r) => r.rationale.filtered.length > 0 && r.type === 'bound')).toBe(true);
  });

  it('decides exactly as schedule does on more nodes than it keeps ranked, until the nodes fill up', () => {
    const nodes = Array.from({ length: 150 }, (_, i) =>
      makeNode({ name: `node-${String(i).padStart(3, '0')}`, cpu: String(1 + (i % 3)), memory: `${2 + (i % 5)}Gi`, pods: String(3 + (i % 4)), labels: { zone: `z${i % 2}` } }),
    );
    const pods = Array.from({ length: 700 }, (_, n) =>
      n % 9 === 0
        ? makePod({ name: `db-${n}`, cpu: '250m', memory: '512Mi', nodeSelector: { zone: 'z1' }, labels: { app: 'db' } })
        : makePod({ name: `web-${n}`, cpu: '200m', memory: '256Mi', labels: { app: 'web' } }),
    );
    const expected = round(buildNodeInfos(nodes, []), pods, (pod, infos) => schedule(pod, infos, profile));
    const actual = round(buildNodeInfos(nodes, []), pods, createRoundScheduler(createDefaultProfile()));
    expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
    expect(expected.filter((r) => r.type === 'unschedulable').length).toBeGreaterThan(0);
  });

  it('on a large cluster scores only kube\'s share of the feasible nodes (percentageOfNodesToScore), zones interleaved, the same in a round as in schedule', () => {
    const ZONE = 'topology.kubernetes.io/zone';
    // 400 nodes, 100 per zone, zones contiguous in name order: the scan interleaves them.
    const nodes = Array.from({ length: 400 }, (_, i) => makeNode({ name: `node-${String(i).padStart(3, '0')}`, cpu: '8', labels: { [ZONE]: `z${Math.floor(i / 100)}` } }));
    const owner = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'u', controller: true }];
    const rs = { kind: 'ReplicaSet', apiVersion: 'apps/v1', metadata: { name: 'web-1', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } } } };
    const cluster = { ...EMPTY_CLUSTER, get: (kind: string, _ns: string, name: string) => (kind === 'ReplicaSet' && name === 'web-1' ? rs : undefined) };
    const pods = Array.from({ length: 120 }, (_, n) =>
      n % 10 === 9 ? makePod({ name: `bare-${n}`, cpu: '100m', labels: { app: 'bare' } }) : makePod({ name: `web-${n}`, cpu: '100m', labels: { app: 'web' }, ownerReferences: owner }),
    );
    const expected = round(buildNodeInfos(nodes, []), pods, (pod, infos) => schedule(pod, infos, profile, cluster));
    const actual = roundLogged(buildNodeInfos(nodes, []), pods, createRoundScheduler(createDefaultProfile(), cluster));
    expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
    // Each pod went to a node of its window: the first 188 nodes (47 % of 400: 50 - 400/125) of the node tree from its start.
    const order = Array.from({ length: 400 }, (_, k) => (k % 4) * 100 + Math.floor(k / 4));
    pods.forEach((pod, n) => {
      const start = startIndexOf(pod, 400);
      const window = new Set(Array.from({ length: 188 }, (_, step) => `node-${String(order[(start + step) % 400]).padStart(3, '0')}`));
      const result = actual[n] as ScheduleResult;
      expect(result.type).toBe('bound');
      if (result.type === 'bound') expect(window.has(result.node)).toBe(true);
    });
    // The default zone spreading still balances the ReplicaSet over the four zones.
    const perZone = [0, 0, 0, 0];
    actual.forEach((result, n) => {
      if (result.type === 'bound' && n % 10 !== 9) perZone[Math.floor(Number(result.node.slice(5)) / 100)]! += 1;
    });
    expect(Math.max(...perZone) - Math.min(...perZone)).toBeLessThanOrEqual(5);
    // With percentageOfNodesToScore 100 every feasible node is scored: the choices differ.
    const everyNode = round(buildNodeInfos(nodes, []), pods, (pod, infos) => schedule(pod, infos, { ...profile, percentageOfNodesToScore: 100 }, cluster));
    expect(everyNode.map((r) => (r.type === 'bound' ? r.node : '')).join()).not.toBe(expected.map((r) => (r.type === 'bound' ? r.node : '')).join());
  });

  it('evaluates the replicas of one template on the changed node only, after the first', () => {
    const nodes = Array.from({ length: 50 }, (_, i) => makeNode({ name: `node-${String(i).padStart(2, '0')}`, cpu: '32' }));
    const pods = Array.from({ length: 100 }, (_, n) => makePod({ name: `web-${n}`, cpu: '100m', labels: { app: 'web' } }));
    const counted = countingProfile();
    const results = round(buildNodeInfos(nodes, []), pods, createRoundScheduler(counted.profile));
    expect(JSON.stringify(results)).toBe(JSON.stringify(round(buildNodeInfos(nodes, []), pods, (pod, infos) => schedule(pod, infos, profile))));
    // The first pod runs every filter on every node; each later one on the node just taken.
    const filters = counted.profile.filters.length;
    expect(counted.calls()).toBe(filters * (50 + 99));
  });
});
