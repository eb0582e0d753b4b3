import { describe, expect, it } from 'vitest';
import type { Pod, PodDisruptionBudget } from '../../../../schemas/index.ts';
import { buildNodeInfos, type ClusterLister, EMPTY_CLUSTER, type PostFilterResult } from '../../framework.ts';
import { createPostFilterHandle } from '../../post-filter.ts';
import { schedule } from '../../scheduler.ts';
import { makeNode, makePod, type NodeOptions, type PodOptions } from '../../test-fixtures.ts';
import { createDefaultProfile } from '../index.ts';
import { bindingPreemption, candidatesWanted, type Candidate, pickOneNodeForPreemption, preempt, splitByBudgetViolation } from './index.ts';
import type { BindingPreemption } from '../../../../schemas/index.ts';

const NOW = Date.parse('2026-01-01T00:10:00Z');

/** A pod bound to `node` (1 cpu unless told), started at minute `startedAt` of the hour when given. */
const running = (name: string, node: string, priority: number, options: Partial<PodOptions> & { startedAt?: number; terminating?: boolean } = {}): Pod => {
  const pod = makePod({ name, nodeName: node, cpu: '1', priority, ...options });
  const startTime = options.startedAt === undefined ? undefined : `2026-01-01T00:0${options.startedAt}:00Z`;
  return {
    ...pod,
    metadata: { ...pod.metadata, ...(options.terminating ? { deletionTimestamp: '2026-01-01T00:11:00Z' } : {}) },
    status: {
      phase: 'Running',
      ...(startTime === undefined ? {} : { startTime }),
      ...(options.terminating ? { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler' }] } : {}),
    },
  };
};

/** A pending pod of `priority` asking for `cpu`. */
const preemptor = (cpu: string, priority: number, options: Partial<PodOptions> = {}): Pod => makePod({ name: 'high', cpu, priority, ...options });

const budgetsLister = (budgets: readonly PodDisruptionBudget[]): ClusterLister => ({
  ...EMPTY_CLUSTER,
  list: (kind, namespace) => (kind === 'PodDisruptionBudget' ? budgets.filter((b) => b.metadata.namespace === namespace) : []),
});

interface Scenario {
  readonly nodes: readonly NodeOptions[];
  readonly pods: readonly Pod[];
  readonly pod: Pod;
  readonly budgets?: readonly PodDisruptionBudget[];
  readonly nominated?: Readonly<Record<string, readonly Pod[]>>;
}

/** Filters `scenario.pod` on every node (it must fit nowhere) and runs DefaultPreemption on the verdicts. */
const run = (scenario: Scenario): PostFilterResult => {
  const profile = createDefaultProfile();
  const cluster = budgetsLister(scenario.budgets ?? []);
  const nodeInfos = buildNodeInfos(scenario.nodes.map(makeNode), scenario.pods);
  const verdict = schedule(scenario.pod, nodeInfos, profile, cluster);
  if (verdict.type !== 'unschedulable') throw new Error(`the pod fits on ${verdict.node}`);
  const nominated = new Map(Object.entries(scenario.nominated ?? {}));
  const handle = createPostFilterHandle(scenario.pod, nodeInfos, profile, cluster, nominated, NOW);
  return preempt(scenario.pod, { filtered: verdict.rationale.filtered, unresolvable: verdict.unresolvable }, handle);
};

const outcome = (result: PostFilterResult): string | { node: string; victims: string[]; pdbViolations: number } =>
  result.type === 'unschedulable' ? result.message : { node: result.node, victims: result.victims.map((v) => v.metadata.name), pdbViolations: result.pdbViolations };

const node = (name: string, cpu = '4', more: Partial<NodeOptions> = {}): NodeOptions => ({ name, cpu, ...more });

describe('DefaultPreemption: victims on one node (SelectVictimsOnNode)', () => {
  it.each<[string, Scenario, ReturnType<typeof outcome>]>([
    [
      'removes all lower-priority pods, then reprieves the most important: the two least important go',
      { nodes: [node('n1')], pods: [running('p10', 'n1', 10), running('p5', 'n1', 5), running('p0a', 'n1', 0), running('p0b', 'n1', 0)], pod: preemptor('2', 100) },
      { node: 'n1', victims: ['p0a', 'p0b'], pdbViolations: 0 },
    ],
    [
      'equal priority: the pod that started earlier is more important and is reprieved',
      { nodes: [node('n1', '2')], pods: [running('early', 'n1', 0, { startedAt: 1 }), running('late', 'n1', 0, { startedAt: 5 })], pod: preemptor('1', 100) },
      { node: 'n1', victims: ['late'], pdbViolations: 0 },
    ],
    [
      'pods of equal or higher priority are never victims',
      { nodes: [node('n1', '2')], pods: [running('same', 'n1', 100), running('higher', 'n1', 200)], pod: preemptor('1', 100) },
      'preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    ],
    [
      'a node where the pod does not fit even without every lower-priority pod is no candidate',
      { nodes: [node('n1', '3')], pods: [running('higher', 'n1', 200, { cpu: '2' }), running('low', 'n1', 0)], pod: preemptor('2', 100) },
      'preemption: 0/1 nodes are available: 1 Insufficient cpu.',
    ],
    [
      'a victim whose budget allows no disruption is reprieved before the others',
      {
        nodes: [node('n1', '2')],
        pods: [running('guarded', 'n1', 0, { labels: { app: 'db' }, startedAt: 5 }), running('free', 'n1', 0, { startedAt: 1 })],
        pod: preemptor('1', 100),
        budgets: [{ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'db', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'db' } } }, status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 } }],
      },
      { node: 'n1', victims: ['free'], pdbViolations: 0 },
    ],
    [
      'a budget-violating victim that must go anyway is counted',
      {
        nodes: [node('n1', '1')],
        pods: [running('guarded', 'n1', 0, { labels: { app: 'db' } })],
        pod: preemptor('1', 100),
        budgets: [{ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'db', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'db' } } }, status: { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 } }],
      },
      { node: 'n1', victims: ['guarded'], pdbViolations: 1 },
    ],
    [
      'a pod nominated to the node with at least the preemptor’s priority keeps its room: more victims go',
      {
        nodes: [node('n1', '4')],
        pods: [running('a', 'n1', 0), running('b', 'n1', 0), running('c', 'n1', 0, { startedAt: 1 })],
        pod: preemptor('2', 100),
        nominated: { n1: [makePod({ name: 'waiting', cpu: '1', priority: 100 })] },
      },
      { node: 'n1', victims: ['a', 'b'], pdbViolations: 0 },
    ],
    [
      'a pod nominated with lower priority does not hold room against the preemptor',
      {
        nodes: [node('n1', '4')],
        pods: [running('a', 'n1', 0), running('b', 'n1', 0), running('c', 'n1', 0, { startedAt: 1 })],
        pod: preemptor('2', 100),
        nominated: { n1: [makePod({ name: 'waiting', cpu: '1', priority: 50 })] },
      },
      { node: 'n1', victims: ['b'], pdbViolations: 0 },
    ],
  ])('%s', (_case, scenario, expected) => {
    expect(outcome(run(scenario))).toEqual(expected);
  });
});

describe('DefaultPreemption: which pods may preempt, and where', () => {
  const full = (name: string, priority = 0): Pod[] => [running(`${name}-1`, name, priority), running(`${name}-2`, name, priority)];

  it.each<[string, Scenario, ReturnType<typeof outcome>]>([
    [
      'preemptionPolicy PreemptLowerPriority (the default): a higher-priority pod preempts',
      { nodes: [node('n1', '2')], pods: full('n1'), pod: preemptor('1', 100, {}) },
      { node: 'n1', victims: ['n1-2'], pdbViolations: 0 },
    ],
    [
      'nodes rejected for reasons removing pods cannot resolve (taint, cordon, node affinity, too big) are not tried',
      {
        nodes: [node('tainted', '2', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }), node('cordoned', '2', { unschedulable: true }), node('other-zone', '2', { labels: { zone: 'b' } }), node('small', '1')],
        pods: [...full('tainted'), ...full('cordoned'), ...full('other-zone'), running('small-1', 'small', 0)],
        pod: preemptor('2', 100, { nodeSelector: { zone: 'a' } }),
      },
      'preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.',
    ],
    [
      'a victim preempted for the pod still terminating on its nominated node: no new preemption',
      {
        nodes: [node('n1', '2'), node('n2', '2')],
        pods: [running('leaving', 'n1', 0, { terminating: true }), running('n1-2', 'n1', 0), ...full('n2')],
        pod: { ...preemptor('2', 100), status: { nominatedNodeName: 'n1' } },
      },
      'preemption: not eligible due to a terminating pod on the nominated node.',
    ],
  ])('%s', (_case, scenario, expected) => {
    expect(outcome(run(scenario))).toEqual(expected);
  });

  it('preemptionPolicy Never: not eligible, whatever the priorities', () => {
    const pod = { ...preemptor('1', 100), spec: { ...preemptor('1', 100).spec, preemptionPolicy: 'Never' } };
    expect(outcome(run({ nodes: [node('n1', '2')], pods: full('n1'), pod }))).toBe('preemption: not eligible due to preemptionPolicy=Never.');
  });

  it.each<[string, readonly Pod[], string]>([
    ['the node whose most important victim has the lowest priority', [running('a', 'n1', 5), running('b', 'n2', 1)], 'n2'],
    ['then the smallest sum of victim priorities', [running('a1', 'n1', 3, { cpu: '500m' }), running('a2', 'n1', 3, { cpu: '500m' }), running('b1', 'n2', 3, { cpu: '500m' }), running('b2', 'n2', 1, { cpu: '500m' })], 'n2'],
    ['then the fewest victims', [running('a1', 'n1', 0, { cpu: '500m' }), running('a2', 'n1', 0, { cpu: '500m' }), running('b', 'n2', 0)], 'n2'],
    ['then the latest start of the most important victims', [running('a', 'n1', 0, { startedAt: 7 }), running('b', 'n2', 0, { startedAt: 2 })], 'n1'],
    ['then the first node', [running('a', 'n1', 0, { startedAt: 3 }), running('b', 'n2', 0, { startedAt: 3 })], 'n1'],
  ])('picks %s', (_case, pods, expected) => {
    const result = run({ nodes: [node('n1', '1'), node('n2', '1')], pods, pod: preemptor('1', 100) });
    expect(result.type === 'nominated' && result.node).toBe(expected);
  });

  it('picks the node with fewer budget violations first', () => {
    const victim = (name: string, node: string, priority: number, labels?: Record<string, string>): Candidate['victims'][number] => running(name, node, priority, labels ? { labels } : {});
    const candidates: Candidate[] = [
      { node: 'n1', victims: [victim('a', 'n1', 0)], pdbViolations: 1 },
      { node: 'n2', victims: [victim('b', 'n2', 50)], pdbViolations: 0 },
    ];
    expect(pickOneNodeForPreemption(candidates, NOW)?.node).toBe('n2');
  });

  it.each([
    [5, 5],
    [100, 100],
    [500, 100],
    [5000, 500],
  ])('tries %i potential nodes until %i candidates are found (kube: a tenth, at least 100)', (nodes, wanted) => {
    expect(candidatesWanted(nodes)).toBe(wanted);
  });

  it.each([
    [200, { minCandidateNodesPercentage: 50, minCandidateNodesAbsolute: 10 }, 100],
    [1000, { minCandidateNodesPercentage: 1, minCandidateNodesAbsolute: 5 }, 10],
    [1000, { minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 5 }, 5],
    [3, { minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 5 }, 3],
  ])('with DefaultPreemptionArgs, %i potential nodes and %o give %i candidates', (nodes, args, wanted) => {
    expect(candidatesWanted(nodes, args)).toBe(wanted);
  });
});

describe('DefaultPreemption: the result a binding records (v9 BindingPreemption)', () => {
  /** `running`, with a uid and in `namespace`. */
  const victim = (name: string, node: string, priority: number, namespace = 'default'): Pod => {
    const pod = running(name, node, priority, { namespace });
    return { ...pod, metadata: { ...pod.metadata, uid: `uid-${name}` } };
  };
  const reasonOf = (scenario: Scenario): string => {
    const verdict = schedule(scenario.pod, buildNodeInfos(scenario.nodes.map(makeNode), scenario.pods), createDefaultProfile(), budgetsLister(scenario.budgets ?? []));
    return verdict.type === 'unschedulable' ? verdict.message : '';
  };

  it.each<[string, Scenario, BindingPreemption | string]>([
    [
      'the nominated node, the filter summary that made the pod preempt, and each victim with its uid and priority, most important first',
      { nodes: [node('n1')], pods: [victim('p10', 'n1', 10), victim('p5', 'n1', 5, 'batch'), victim('p0a', 'n1', 0), victim('p0b', 'n1', 0, 'batch')], pod: preemptor('3', 100) },
      {
        nominatedNode: 'n1',
        reason: '0/1 nodes are available: 1 Insufficient cpu.',
        victims: [
          { namespace: 'batch', name: 'p5', uid: 'uid-p5', priority: 5 },
          { namespace: 'default', name: 'p0a', uid: 'uid-p0a', priority: 0 },
          { namespace: 'batch', name: 'p0b', uid: 'uid-p0b', priority: 0 },
        ],
      },
    ],
    [
      'the node whose victims matter least: only its pods, negative priorities kept',
      { nodes: [node('n1', '2'), node('n2', '2')], pods: [victim('mid', 'n1', 10), victim('mid2', 'n1', 10), victim('neg', 'n2', -5), victim('zero', 'n2', 0)], pod: preemptor('1', 100) },
      { nominatedNode: 'n2', reason: '0/2 nodes are available: 2 Insufficient cpu.', victims: [{ namespace: 'default', name: 'neg', uid: 'uid-neg', priority: -5 }] },
    ],
    [
      'no preemption, nothing to record',
      { nodes: [node('n1', '2')], pods: [victim('same', 'n1', 100), victim('higher', 'n1', 200)], pod: preemptor('1', 100) },
      'preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    ],
  ])('%s', (_name, scenario, expected) => {
    const result = run(scenario);
    const recorded = result.type === 'nominated' ? bindingPreemption(result.node, reasonOf(scenario), result.victims) : result.message;
    expect(recorded).toEqual(expected);
  });
});

describe('splitByBudgetViolation (kube filterPodsWithPDBViolation)', () => {
  const budget = (allowed: number, disrupted: Record<string, string> = {}, selector: NonNullable<PodDisruptionBudget['spec']>['selector'] = { matchLabels: { app: 'web' } }): PodDisruptionBudget => ({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'web', namespace: 'default' },
    spec: { selector },
    status: { disruptionsAllowed: allowed, disruptedPods: disrupted, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3 },
  });
  const web = (name: string, namespace = 'default'): Pod => makePod({ name, namespace, labels: { app: 'web' } });
  it.each<[string, readonly Pod[], PodDisruptionBudget, string[]]>([
    ['within the allowed disruptions nothing violates', [web('a')], budget(1), []],
    ['past them, the later pods violate', [web('a'), web('b'), web('c')], budget(1), ['b', 'c']],
    ['a pod already being disrupted does not count', [web('a'), web('b')], budget(1, { a: '2026-01-01T00:00:00Z' }), []],
    ['other namespaces are not the budget’s', [web('a', 'other')], budget(0), []],
    ['an empty selector matches nothing', [web('a')], budget(0, {}, {}), []],
    ['unlabelled pods match nothing', [makePod({ name: 'plain' })], budget(0, {}, { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }), []],
  ])('%s', (_case, pods, pdb, expected) => {
    expect(splitByBudgetViolation(pods, [pdb]).violating.map((p) => p.metadata.name)).toEqual(expected);
  });
});
