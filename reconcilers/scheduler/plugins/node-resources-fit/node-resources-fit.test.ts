import { describe, expect, it } from 'vitest';
import { buildNodeInfos, createNodeInfo, createSchedulingContext, type FilterResult } from '../../framework.ts';
import { createDefaultProfile } from '../index.ts';
import { schedule } from '../../scheduler.ts';
import type { Pod } from '../../../../schemas/index.ts';
import { computePodRequests } from '../../resources.ts';
import { makeNode, makePod } from '../../test-fixtures.ts';
import { createNodeResourcesFit, fitsResources, leastAllocatedScore } from './index.ts';

const node = makeNode({ name: 'n', cpu: '2', memory: '4Gi', pods: '3' });

function nodeWith(...requests: [cpu: string, memory: string][]) {
  return createNodeInfo(
    node,
    requests.map(([cpu, memory], index) => makePod({ name: `existing-${index}`, cpu, memory, nodeName: 'n' })),
  );
}

describe('computePodRequests', () => {
  const withContainers = (containers: Pod['spec']['containers'], initContainers?: Pod['spec']['containers']): Pod => ({
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: { name: 'p' },
    spec: { containers, ...(initContainers === undefined ? {} : { initContainers }) },
  });
  it.each<[string, Pod, { cpuMilli: number; memoryBytes: number }, { cpuMilli: number; memoryBytes: number }]>([
    ['no requests', withContainers([{ name: 'a' }]), { cpuMilli: 0, memoryBytes: 0 }, { cpuMilli: 100, memoryBytes: 209_715_200 }],
    [
      'containers are summed',
      withContainers([
        { name: 'a', resources: { requests: { cpu: '250m', memory: '64Mi' } } },
        { name: 'b', resources: { requests: { cpu: '0.5', memory: '64Mi' } } },
      ]),
      { cpuMilli: 750, memoryBytes: 134_217_728 },
      { cpuMilli: 750, memoryBytes: 134_217_728 },
    ],
    [
      'init containers count by their maximum',
      withContainers(
        [{ name: 'a', resources: { requests: { cpu: '100m', memory: '1Gi' } } }],
        [
          { name: 'init-1', resources: { requests: { cpu: '1', memory: '10Mi' } } },
          { name: 'init-2', resources: { requests: { cpu: '500m' } } },
        ],
      ),
      { cpuMilli: 1000, memoryBytes: 1_073_741_824 },
      { cpuMilli: 1000, memoryBytes: 1_073_741_824 },
    ],
    [
      'a limit without a request is the request',
      withContainers([{ name: 'a', resources: { limits: { cpu: '300m' } } }]),
      { cpuMilli: 300, memoryBytes: 0 },
      { cpuMilli: 300, memoryBytes: 209_715_200 },
    ],
    [
      'an explicit zero request stays zero for scoring',
      withContainers([{ name: 'a', resources: { requests: { cpu: '0', memory: '0' } } }]),
      { cpuMilli: 0, memoryBytes: 0 },
      { cpuMilli: 0, memoryBytes: 0 },
    ],
  ])('%s', (_case, pod, requested, nonZeroRequested) => {
    expect(computePodRequests(pod)).toEqual({ type: 'ok', requests: { requested: { ...requested, ephemeralStorageBytes: 0, scalar: new Map() }, nonZeroRequested } });
  });

  it('names an unreadable quantity', () => {
    const result = computePodRequests(makePod({ name: 'p', cpu: 'lots' }));
    expect(result.type).toBe('invalid');
    if (result.type === 'invalid') expect(result.error.input).toBe('lots');
  });
});

describe('computePodRequests over many pods (quantities read once and remembered)', () => {
  it('reads every distinct quantity right, past the remembered count, and an unreadable one every time', () => {
    // More distinct strings than the scheduler keeps (1,024 per scale), each read twice.
    for (let round = 0; round < 2; round += 1) {
      for (let i = 1; i <= 1_500; i += 1) {
        const result = computePodRequests(makePod({ name: `p${i}`, cpu: `${i}m`, memory: `${i}Ki` }));
        expect(result).toEqual({
          type: 'ok',
          requests: { requested: { cpuMilli: i, memoryBytes: i * 1024, ephemeralStorageBytes: 0, scalar: new Map() }, nonZeroRequested: { cpuMilli: i, memoryBytes: i * 1024 } },
        });
      }
      const bad = computePodRequests(makePod({ name: 'bad', cpu: '1.5.5' }));
      expect(bad.type === 'invalid' && bad.error.input).toBe('1.5.5');
    }
  });
});

describe('fitsResources', () => {
  it.each<[string, ReturnType<typeof nodeWith>, { cpuMilli: number; memoryBytes: number }, FilterResult]>([
    ['empty node', nodeWith(), { cpuMilli: 2000, memoryBytes: 4 * 2 ** 30 }, { type: 'fit' }],
    ['exactly the rest fits', nodeWith(['1500m', '3Gi']), { cpuMilli: 500, memoryBytes: 2 ** 30 }, { type: 'fit' }],
    ['cpu short', nodeWith(['1500m', '1Gi']), { cpuMilli: 501, memoryBytes: 0 }, { type: 'unfit', reasons: ['Insufficient cpu'] }],
    ['memory short', nodeWith(['1', '3Gi']), { cpuMilli: 0, memoryBytes: 2 ** 30 + 1 }, { type: 'unfit', reasons: ['Insufficient memory'] }],
    [
      'both short',
      nodeWith(['2', '4Gi']),
      { cpuMilli: 1, memoryBytes: 1 },
      { type: 'unfit', reasons: ['Insufficient cpu', 'Insufficient memory'] },
    ],
    [
      'no pod slot left',
      nodeWith(['0', '0'], ['0', '0'], ['0', '0']),
      { cpuMilli: 0, memoryBytes: 0 },
      { type: 'unfit', reasons: ['Too many pods'] },
    ],
    // kube's Unresolvable insufficient resource: more than the node's allocatable, so preemption skips the node.
    ['more than the whole node', nodeWith(['1', '1Gi']), { cpuMilli: 2001, memoryBytes: 0 }, { type: 'unfit', reasons: ['Insufficient cpu'], unresolvable: true }],
    ['zero request fits an overcommitted node', nodeWith(['3', '5Gi']), { cpuMilli: 0, memoryBytes: 0 }, { type: 'fit' }],
  ])('%s', (_case, nodeInfo, request, expected) => {
    expect(fitsResources({ ...request, ephemeralStorageBytes: 0, scalar: new Map() }, nodeInfo)).toEqual(expected);
  });

  it('counts finished pods until they are deleted, as the fold does when it admits bindings', () => {
    const done = makePod({ name: 'done', cpu: '2', nodeName: 'n', phase: 'Succeeded' });
    expect(fitsResources({ cpuMilli: 2000, memoryBytes: 0, ephemeralStorageBytes: 0, scalar: new Map() }, createNodeInfo(node, [done]))).toMatchObject({ type: 'unfit' });
  });
});

describe('leastAllocatedScore', () => {
  it.each<[string, ReturnType<typeof nodeWith>, { cpuMilli: number; memoryBytes: number }, number]>([
    ['empty node, tiny pod', nodeWith(), { cpuMilli: 0, memoryBytes: 0 }, 100],
    ['half of both', nodeWith(), { cpuMilli: 1000, memoryBytes: 2 * 2 ** 30 }, 50],
    ['cpu full, memory empty', nodeWith(), { cpuMilli: 2000, memoryBytes: 0 }, 50],
    ['existing pods count', nodeWith(['1', '1Gi']), { cpuMilli: 500, memoryBytes: 2 ** 30 }, 37],
    ['overcommitted resource scores 0', nodeWith(['2', '0']), { cpuMilli: 1, memoryBytes: 0 }, 50],
    ['integer division per resource', nodeWith(), { cpuMilli: 333, memoryBytes: 0 }, 91],
  ])('%s', (_case, nodeInfo, request, expected) => {
    expect(leastAllocatedScore(request, nodeInfo)).toBe(expected);
  });
});

describe('NodeResourcesFit plugin', () => {
  const plugin = createNodeResourcesFit();
  it.each<[string, Pod, FilterResult, number]>([
    ['fits, defaults count for scoring', makePod({ name: 'p' }), { type: 'fit' }, 95],
    ['too big', makePod({ name: 'p', cpu: '3' }), { type: 'unfit', reasons: ['Insufficient cpu'], unresolvable: true }, 47],
  ])('%s', (_case, pod, verdict, score) => {
    const nodeInfo = nodeWith();
    const ctx = createSchedulingContext(pod, [nodeInfo]);
    expect(plugin.filter(pod, nodeInfo, ctx)).toEqual(verdict);
    expect(plugin.score(pod, nodeInfo, ctx)).toBe(score);
  });

  it('reports an unreadable request instead of throwing', () => {
    const pod = makePod({ name: 'p', memory: '1GB' });
    const nodeInfo = nodeWith();
    const verdict = plugin.filter(pod, nodeInfo, createSchedulingContext(pod, [nodeInfo]));
    expect(verdict).toEqual({ type: 'unfit', reasons: [expect.stringContaining('invalid quantity "1GB"')] });
  });
});

describe('computePodRequests: every resource, init containers, sidecars, overhead', () => {
  const podOf = (spec: Partial<Pod['spec']>): Pod => ({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p' }, spec: { containers: [], ...spec } });
  const c = (name: string, requests: Record<string, string>, restartPolicy?: string): Pod['spec']['containers'][number] => ({
    name,
    resources: { requests },
    ...(restartPolicy === undefined ? {} : { restartPolicy }),
  });
  const requested = (pod: Pod) => {
    const result = computePodRequests(pod);
    if (result.type !== 'ok') throw new Error('unreadable');
    return { ...result.requests.requested, scalar: Object.fromEntries(result.requests.requested.scalar), nonZero: result.requests.nonZeroRequested };
  };

  it('extended resources, hugepages and ephemeral-storage are summed; other names ignored', () => {
    const pod = podOf({
      containers: [
        c('a', { 'nvidia.com/gpu': '1', 'ephemeral-storage': '1Gi', 'hugepages-2Mi': '2Mi', storage: '5Gi' }),
        c('b', { 'nvidia.com/gpu': '2', 'example.com/foo': '3' }),
      ],
    });
    expect(requested(pod)).toMatchObject({ ephemeralStorageBytes: 2 ** 30, scalar: { 'nvidia.com/gpu': 3, 'hugepages-2Mi': 2 * 2 ** 20, 'example.com/foo': 3 } });
  });

  it('a limit stands in for a missing request of any resource', () => {
    const pod = podOf({ containers: [{ name: 'a', resources: { limits: { 'nvidia.com/gpu': '2', cpu: '1' }, requests: { cpu: '500m' } } }] });
    expect(requested(pod)).toMatchObject({ cpuMilli: 500, scalar: { 'nvidia.com/gpu': 2 } });
  });

  it('init containers: max of each init container against the sum, per resource', () => {
    const pod = podOf({
      containers: [c('a', { cpu: '1', memory: '1Gi' }), c('b', { cpu: '1' })],
      initContainers: [c('i1', { cpu: '3' }), c('i2', { memory: '2Gi', 'example.com/foo': '1' })],
    });
    expect(requested(pod)).toMatchObject({ cpuMilli: 3000, memoryBytes: 2 * 2 ** 30, scalar: { 'example.com/foo': 1 } });
  });

  it('sidecars (restartPolicy Always) add to the sum and to every later init container', () => {
    // kube's example: sidecar 1 cpu, then init 2 cpu (runs beside the sidecar: 3), containers 1 cpu (+ sidecar: 2).
    const pod = podOf({
      containers: [c('main', { cpu: '1' })],
      initContainers: [c('sidecar', { cpu: '1' }, 'Always'), c('migrate', { cpu: '2' })],
    });
    expect(requested(pod).cpuMilli).toBe(3000);
    const longRunning = podOf({
      containers: [c('main', { cpu: '2' })],
      initContainers: [c('init', { cpu: '2' }), c('sidecar', { cpu: '1' }, 'Always')],
    });
    // init alone 2; sidecar then main: 1 + 2 = 3.
    expect(requested(longRunning).cpuMilli).toBe(3000);
  });

  it('spec.overhead is added to requests and non-zero requests', () => {
    const pod = podOf({ containers: [c('a', {})], overhead: { cpu: '250m', memory: '120Mi' } });
    expect(requested(pod)).toMatchObject({ cpuMilli: 250, memoryBytes: 120 * 2 ** 20, nonZero: { cpuMilli: 350, memoryBytes: 320 * 2 ** 20 } });
  });
});

describe('NodeResourcesFit for extended resources and ephemeral-storage', () => {
  const plugin = createNodeResourcesFit();
  const gpuNode = makeNode({ name: 'g', allocatable: { 'nvidia.com/gpu': '2', 'ephemeral-storage': '10Gi' } });
  const plainNode = makeNode({ name: 'p' });
  const verdict = (pod: Pod, nodeInfo: ReturnType<typeof createNodeInfo>) => plugin.filter(pod, nodeInfo, createSchedulingContext(pod, [nodeInfo]));
  it.each<[string, Record<string, string>, readonly Pod[], FilterResult, FilterResult]>([
    ['a GPU pod fits only where GPUs are advertised', { 'nvidia.com/gpu': '1' }, [], { type: 'fit' }, { type: 'unfit', reasons: ['Insufficient nvidia.com/gpu'], unresolvable: true }],
    [
      'GPUs already requested count',
      { 'nvidia.com/gpu': '1' },
      [makePod({ name: 'x', requests: { 'nvidia.com/gpu': '2' } })],
      { type: 'unfit', reasons: ['Insufficient nvidia.com/gpu'] },
      { type: 'unfit', reasons: ['Insufficient nvidia.com/gpu'], unresolvable: true },
    ],
    ['a zero extended request fits anywhere', { 'nvidia.com/gpu': '0' }, [], { type: 'fit' }, { type: 'fit' }],
    [
      'ephemeral-storage is checked',
      { 'ephemeral-storage': '11Gi' },
      [],
      { type: 'unfit', reasons: ['Insufficient ephemeral-storage'], unresolvable: true },
      { type: 'unfit', reasons: ['Insufficient ephemeral-storage'], unresolvable: true },
    ],
    [
      'every short resource is a reason, in kube order',
      { cpu: '5', 'example.com/foo': '1', 'nvidia.com/gpu': '3', 'ephemeral-storage': '1Ti' },
      [],
      { type: 'unfit', reasons: ['Insufficient cpu', 'Insufficient ephemeral-storage', 'Insufficient example.com/foo', 'Insufficient nvidia.com/gpu'], unresolvable: true },
      { type: 'unfit', reasons: ['Insufficient cpu', 'Insufficient ephemeral-storage', 'Insufficient example.com/foo', 'Insufficient nvidia.com/gpu'], unresolvable: true },
    ],
  ])('%s', (_case, requests, placed, onGpuNode, onPlainNode) => {
    const pod = makePod({ name: 'p', requests });
    expect(verdict(pod, createNodeInfo(gpuNode, placed.map((p) => ({ ...p, spec: { ...p.spec, nodeName: 'g' } }))))).toEqual(onGpuNode);
    expect(verdict(pod, createNodeInfo(plainNode, []))).toEqual(onPlainNode);
  });

  it("kube's message for a GPU pod on a cluster without free GPUs", () => {
    const nodes = [makeNode({ name: 'a' }), makeNode({ name: 'b', allocatable: { 'nvidia.com/gpu': '1' } }), makeNode({ name: 'c', cpu: '1' })];
    const placed = [makePod({ name: 'x', requests: { 'nvidia.com/gpu': '1' }, nodeName: 'b' })];
    const result = schedule(makePod({ name: 'p', cpu: '2', requests: { 'nvidia.com/gpu': '1' } }), buildNodeInfos(nodes, placed), createDefaultProfile());
    expect(result.type === 'unschedulable' && result.message).toBe('0/3 nodes are available: 1 Insufficient cpu, 3 Insufficient nvidia.com/gpu.');
    const bound = schedule(makePod({ name: 'p', requests: { 'nvidia.com/gpu': '1' } }), buildNodeInfos([...nodes, makeNode({ name: 'd', allocatable: { 'nvidia.com/gpu': '8' } })], placed), createDefaultProfile());
    expect(bound.type === 'bound' && bound.node).toBe('d');
  });
});
