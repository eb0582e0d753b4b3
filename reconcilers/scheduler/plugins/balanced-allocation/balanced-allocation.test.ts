import { describe, expect, it } from 'vitest';
import { createNodeInfo, createSchedulingContext } from '../../framework.ts';
import { makeNode, makePod } from '../../test-fixtures.ts';
import { balancedAllocationScore, createBalancedAllocation } from './index.ts';

const GI = 2 ** 30;

describe('balancedAllocationScore', () => {
  it.each<[string, { cpu: string; memory: string }, { cpuMilli: number; memoryBytes: number }, number]>([
    ['nothing requested', { cpu: '4', memory: '8Gi' }, { cpuMilli: 0, memoryBytes: 0 }, 100],
    ['same fraction of both', { cpu: '4', memory: '8Gi' }, { cpuMilli: 1000, memoryBytes: 2 * GI }, 100],
    ['cpu half, memory none', { cpu: '4', memory: '8Gi' }, { cpuMilli: 2000, memoryBytes: 0 }, 75],
    ['cpu full, memory none', { cpu: '4', memory: '8Gi' }, { cpuMilli: 4000, memoryBytes: 0 }, 50],
    ['fractions cap at 1', { cpu: '4', memory: '8Gi' }, { cpuMilli: 8000, memoryBytes: 0 }, 50],
    ['truncates', { cpu: '3', memory: '8Gi' }, { cpuMilli: 1000, memoryBytes: 0 }, 83],
    ['a node without memory is judged on cpu alone', { cpu: '4', memory: '0' }, { cpuMilli: 4000, memoryBytes: 0 }, 100],
  ])('%s', (_case, allocatable, request, expected) => {
    const nodeInfo = createNodeInfo(makeNode({ name: 'n', ...allocatable }), []);
    expect(balancedAllocationScore(request, nodeInfo)).toBe(expected);
  });

  it('adds the pod to what the node already runs, using requests as written', () => {
    const existing = makePod({ name: 'e', cpu: '1', nodeName: 'n' });
    const nodeInfo = createNodeInfo(makeNode({ name: 'n', cpu: '4', memory: '8Gi' }), [existing]);
    const pod = makePod({ name: 'p', memory: '4Gi' });
    expect(createBalancedAllocation().score(pod, nodeInfo, createSchedulingContext(pod, [nodeInfo]))).toBe(87);
  });
});
