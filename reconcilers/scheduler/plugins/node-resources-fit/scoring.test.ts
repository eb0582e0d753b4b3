import { describe, expect, it } from 'vitest';
import type { ScoringStrategy } from '../../config/types.ts';
import { buildNodeInfos, createSchedulingContext, type NodeInfo } from '../../framework.ts';
import { computePodRequests, type PodRequests } from '../../resources.ts';
import { makeNode, makePod } from '../../test-fixtures.ts';
import { balancedScoreOf, createBalancedAllocation } from '../balanced-allocation/index.ts';
import { createNodeResourcesFit, leastAllocatedScore } from './index.ts';
import { strategyScore } from './scoring.ts';

const GPU = 'nvidia.com/gpu';
/** 4 cpu, 8Gi, 4 gpus; holding a pod of 2 cpu and 1Gi. */
const nodeInfo = (): NodeInfo =>
  buildNodeInfos(
    [makeNode({ name: 'n', cpu: '4', memory: '8Gi', allocatable: { [GPU]: '4' } })],
    [makePod({ name: 'placed', nodeName: 'n', cpu: '2', memory: '1Gi' })],
  )[0] as NodeInfo;

const requestsOf = (options: { cpu?: string; memory?: string; gpu?: string }): PodRequests => {
  const result = computePodRequests(makePod({ name: 'p', ...options, ...(options.gpu ? { requests: { [GPU]: options.gpu } } : {}) }));
  if (result.type !== 'ok') throw new Error('invalid requests');
  return result.requests;
};

const cpuMemory = (cpu: number, memory: number) => [
  { name: 'cpu', weight: cpu },
  { name: 'memory', weight: memory },
];
const line = (from: number, to: number) => [
  { utilization: 0, score: from },
  { utilization: 100, score: to },
];

describe('NodeResourcesFit scoring strategies (kube\'s resource allocation scorers)', () => {
  // The pod adds 1 cpu and 1Gi: cpu 3/4 used (least 25, most 75), memory 2Gi/8Gi (least 75, most 25).
  it.each<[string, ScoringStrategy, { cpu?: string; memory?: string; gpu?: string }, number]>([
    ['LeastAllocated, equal weights', { type: 'LeastAllocated', resources: cpuMemory(1, 1) }, { cpu: '1', memory: '1Gi' }, 50],
    ['LeastAllocated, cpu weighs 3', { type: 'LeastAllocated', resources: cpuMemory(3, 1) }, { cpu: '1', memory: '1Gi' }, 37],
    ['MostAllocated, cpu weighs 3', { type: 'MostAllocated', resources: cpuMemory(3, 1) }, { cpu: '1', memory: '1Gi' }, 62],
    ['MostAllocated, overcommitted cpu counts as full', { type: 'MostAllocated', resources: [{ name: 'cpu', weight: 1 }] }, { cpu: '3' }, 100],
    ['LeastAllocated, overcommitted cpu scores 0', { type: 'LeastAllocated', resources: [{ name: 'cpu', weight: 1 }] }, { cpu: '3' }, 0],
    ['MostAllocated over a requested extended resource', { type: 'MostAllocated', resources: [{ name: GPU, weight: 1 }] }, { gpu: '1' }, 25],
    ['an extended resource the pod does not request is left out', { type: 'MostAllocated', resources: [{ name: GPU, weight: 1 }] }, { cpu: '1' }, 0],
    ['RequestedToCapacityRatio, rising line (rounded mean)', { type: 'RequestedToCapacityRatio', resources: cpuMemory(3, 1), shape: line(0, 10) }, { cpu: '1', memory: '1Gi' }, 63],
    ['RequestedToCapacityRatio, falling line', { type: 'RequestedToCapacityRatio', resources: cpuMemory(1, 1), shape: line(10, 0) }, { cpu: '1', memory: '1Gi' }, 50],
    [
      'RequestedToCapacityRatio, broken line (cpu at 75 % between 50 and 100)',
      { type: 'RequestedToCapacityRatio', resources: [{ name: 'cpu', weight: 1 }], shape: [{ utilization: 50, score: 2 }, { utilization: 100, score: 10 }] },
      { cpu: '1' },
      60,
    ],
  ])('%s', (_what, strategy, requests, expected) => {
    expect(strategyScore(strategy, requestsOf(requests), nodeInfo())).toBe(expected);
  });

  it.each([
    [{ cpu: '1', memory: '1Gi' }],
    [{ cpu: '100m' }],
    [{}],
    [{ cpu: '3', memory: '10Gi' }],
  ])('LeastAllocated over cpu and memory is the default score (%o)', (requests) => {
    const request = requestsOf(requests);
    expect(strategyScore({ type: 'LeastAllocated', resources: cpuMemory(1, 1) }, request, nodeInfo())).toBe(leastAllocatedScore(request.nonZeroRequested, nodeInfo()));
  });

  it('a profile with MostAllocated prefers the fuller node; the default prefers the emptier one', () => {
    const infos = buildNodeInfos([makeNode({ name: 'empty' }), makeNode({ name: 'busy' })], [makePod({ name: 'placed', nodeName: 'busy', cpu: '2', memory: '4Gi' })]);
    const pod = makePod({ name: 'p', cpu: '500m', memory: '512Mi' });
    const ctx = createSchedulingContext(pod, infos);
    const most = createNodeResourcesFit({ ignoredResources: [], ignoredResourceGroups: [], scoringStrategy: { type: 'MostAllocated', resources: cpuMemory(1, 1) } });
    const least = createNodeResourcesFit();
    const [empty, busy] = infos as [NodeInfo, NodeInfo];
    expect(most.score(pod, busy, ctx)).toBeGreaterThan(most.score(pod, empty, ctx));
    expect(least.score(pod, busy, ctx)).toBeLessThan(least.score(pod, empty, ctx));
  });

  it('ignoredResources and ignoredResourceGroups are not checked by the filter', () => {
    const infos = buildNodeInfos([makeNode({ name: 'n' })], []);
    const pod = makePod({ name: 'p', requests: { 'example.com/widget': '1', 'other.io/thing': '1' } });
    const ctx = createSchedulingContext(pod, infos);
    const args = (ignoredResources: string[], ignoredResourceGroups: string[]) => ({ ignoredResources, ignoredResourceGroups, scoringStrategy: { type: 'LeastAllocated' as const, resources: cpuMemory(1, 1) } });
    expect(createNodeResourcesFit().filter(pod, infos[0] as NodeInfo, ctx)).toMatchObject({ type: 'unfit', reasons: ['Insufficient example.com/widget', 'Insufficient other.io/thing'] });
    expect(createNodeResourcesFit(args(['example.com/widget'], [])).filter(pod, infos[0] as NodeInfo, ctx)).toMatchObject({ type: 'unfit', reasons: ['Insufficient other.io/thing'] });
    expect(createNodeResourcesFit(args(['example.com/widget'], ['other.io'])).filter(pod, infos[0] as NodeInfo, ctx)).toEqual({ type: 'fit' });
  });
});

describe('NodeResourcesBalancedAllocation over configured resources', () => {
  it.each([
    ['two resources: 1 - half their difference', [4000, 8], [3000, 2], 75],
    ['three resources: 1 - the standard deviation', [4000, 8, 4], [3000, 2, 1], 76],
    ['a resource the node lacks is left out', [4000, 0], [3000, 2], 100],
    ['fractions are capped at 1', [4000, 8], [8000, 8], 100],
  ])('%s', (_what, allocatable, requested, expected) => {
    expect(balancedScoreOf(allocatable, requested)).toBe(expected);
  });

  it('with a gpu among its resources, ranks by all three', () => {
    const infos = buildNodeInfos([makeNode({ name: 'n', allocatable: { [GPU]: '4' } })], []);
    const pod = makePod({ name: 'p', cpu: '2', memory: '4Gi', requests: { [GPU]: '4' } });
    const ctx = createSchedulingContext(pod, infos);
    const plugin = createBalancedAllocation({ resources: [...cpuMemory(1, 1), { name: GPU, weight: 1 }] });
    // Fractions 0.5, 0.5, 1: mean 2/3, deviation √(1/18) ≈ 0.2357.
    expect(plugin.score(pod, infos[0] as NodeInfo, ctx)).toBe(76);
    expect(createBalancedAllocation().score(pod, infos[0] as NodeInfo, ctx)).toBe(100);
  });
});
