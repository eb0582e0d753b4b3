import { describe, expect, it } from 'vitest';
import {
  assumePod,
  buildNodeInfos,
  createNodeInfo,
  createProfile,
  createSchedulingContext,
  defineCycleValue,
  type ProfileConfig,
  ProfileConfigError,
} from './framework.ts';
import { defaultProfileConfig, defaultRegistry } from './plugins/index.ts';
import { antiAffinityToApp, makeNode, makePod } from './test-fixtures.ts';

describe('NodeInfo', () => {
  const node = makeNode({ name: 'n', cpu: '2', memory: '4Gi', pods: '10' });

  it('sums every bound pod (finished ones too, as the fold does) and keeps the anti-affinity ones apart', () => {
    const spread = makePod({ name: 'spread', cpu: '500m', memory: '1Gi', antiAffinity: [antiAffinityToApp('web')] });
    const plain = makePod({ name: 'plain' });
    const done = makePod({ name: 'done', cpu: '1', phase: 'Failed' });
    const nodeInfo = createNodeInfo(node, [spread, plain, done]);
    expect(nodeInfo.pods).toEqual([spread, plain, done]);
    expect(nodeInfo.requested).toEqual({ cpuMilli: 1500, memoryBytes: 2 ** 30, ephemeralStorageBytes: 0, scalar: new Map(), pods: 3 });
    expect(nodeInfo.nonZeroRequested).toEqual({ cpuMilli: 1600, memoryBytes: 2 ** 30 + 400 * 2 ** 20 });
    expect(nodeInfo.allocatable).toEqual({ cpuMilli: 2000, memoryBytes: 4 * 2 ** 30, ephemeralStorageBytes: 0, scalar: new Map(), pods: 10 });
    expect(nodeInfo.podsWithRequiredAntiAffinity.map((entry) => entry.pod)).toEqual([spread]);
    expect(nodeInfo.podsWithAffinity.map((entry) => entry.pod)).toEqual([spread]);
  });

  it('sums scalar resources, ephemeral-storage and host ports of the pods', () => {
    const gpu = makePod({ name: 'gpu', requests: { 'nvidia.com/gpu': '1', 'ephemeral-storage': '1Gi' }, ports: [{ containerPort: 80, hostPort: 8080 }] });
    const gpus = makePod({ name: 'gpus', requests: { 'nvidia.com/gpu': '2', 'hugepages-2Mi': '4Mi' } });
    const nodeInfo = createNodeInfo(node, [gpu, gpus]);
    expect(nodeInfo.requested).toEqual({
      cpuMilli: 0,
      memoryBytes: 0,
      ephemeralStorageBytes: 2 ** 30,
      scalar: new Map([
        ['nvidia.com/gpu', 3],
        ['hugepages-2Mi', 4 * 2 ** 20],
      ]),
      pods: 2,
    });
    expect(nodeInfo.usedPorts).toEqual([{ hostIP: '0.0.0.0', protocol: 'TCP', port: 8080 }]);
    expect(assumePod(createNodeInfo(node, [gpu]), gpus)).toEqual(nodeInfo);
  });

  it('reads extended resources, hugepages and ephemeral-storage from allocatable', () => {
    const gpuNode = makeNode({ name: 'g', allocatable: { 'nvidia.com/gpu': '4', 'ephemeral-storage': '100Gi', 'hugepages-1Gi': '2Gi', storage: '1Ti' } });
    const { allocatable } = createNodeInfo(gpuNode, []);
    expect(allocatable.ephemeralStorageBytes).toBe(100 * 2 ** 30);
    expect([...allocatable.scalar]).toEqual([
      ['nvidia.com/gpu', 4],
      ['hugepages-1Gi', 2 * 2 ** 30],
    ]);
  });

  it('assumePod gives the same aggregates as building from scratch, without touching the original', () => {
    const first = makePod({ name: 'a', cpu: '100m' });
    const second = makePod({ name: 'b', cpu: '200m', antiAffinity: [antiAffinityToApp('x')] });
    const before = createNodeInfo(node, [first]);
    expect(assumePod(before, second)).toEqual(createNodeInfo(node, [first, second]));
    expect(before).toEqual(createNodeInfo(node, [first]));
    const finished = makePod({ name: 'c', phase: 'Succeeded' });
    expect(assumePod(before, finished)).toEqual(createNodeInfo(node, [first, finished]));
  });

  it.each([
    ['allocatable', { allocatable: { cpu: '3', memory: '1Gi', pods: '5' } }, { cpuMilli: 3000, memoryBytes: 2 ** 30, ephemeralStorageBytes: 0, scalar: new Map(), pods: 5 }],
    ['capacity when allocatable lacks a resource', { allocatable: { cpu: '3' }, capacity: { cpu: '4', memory: '2Gi', pods: '7' } }, { cpuMilli: 3000, memoryBytes: 2 * 2 ** 30, ephemeralStorageBytes: 0, scalar: new Map(), pods: 7 }],
    ['nothing reported', {}, { cpuMilli: 0, memoryBytes: 0, ephemeralStorageBytes: 0, scalar: new Map(), pods: 0 }],
    ['unreadable amounts offer nothing', { allocatable: { cpu: 'many', memory: '-1Gi', pods: '3' } }, { cpuMilli: 0, memoryBytes: 0, ephemeralStorageBytes: 0, scalar: new Map(), pods: 3 }],
  ])('allocatable from %s', (_case, status, expected) => {
    expect(createNodeInfo({ kind: 'Node', apiVersion: 'v1', metadata: { name: 'n' }, status }, []).allocatable).toEqual(expected);
  });

  it('buildNodeInfos groups pods by spec.nodeName and ignores unbound pods and unknown nodes', () => {
    const nodes = [makeNode({ name: 'a' }), makeNode({ name: 'b' })];
    const pods = [
      makePod({ name: 'p1', nodeName: 'b' }),
      makePod({ name: 'p2' }),
      makePod({ name: 'p3', nodeName: 'gone' }),
      makePod({ name: 'p4', nodeName: 'b' }),
    ];
    expect(buildNodeInfos(nodes, pods).map((info) => info.pods.map((pod) => pod.metadata.name))).toEqual([[], ['p1', 'p4']]);
  });
});

describe('SchedulingContext', () => {
  it('computes a cycle value once per cycle', () => {
    let computed = 0;
    const value = defineCycleValue('counter', (pod) => {
      computed += 1;
      return pod.metadata.name;
    });
    const ctx = createSchedulingContext(makePod({ name: 'p' }), []);
    expect([ctx.get(value), ctx.get(value)]).toEqual(['p', 'p']);
    expect(computed).toBe(1);
    createSchedulingContext(makePod({ name: 'q' }), []).get(value);
    expect(computed).toBe(2);
  });
});

describe('createProfile', () => {
  it('resolves the default profile, sharing one instance between roles', () => {
    const profile = createProfile(defaultProfileConfig, defaultRegistry);
    expect(profile.filters.map((plugin) => plugin.name)).toEqual([
      'NodeUnschedulable',
      'NodeName',
      'TaintToleration',
      'NodeAffinity',
      'NodePorts',
      'NodeResourcesFit',
      'VolumeBinding',
      'PodTopologySpread',
      'InterPodAffinity',
    ]);
    expect(profile.scores.map(({ plugin, weight }) => [plugin.name, weight])).toEqual([
      ['TaintToleration', 3],
      ['NodeAffinity', 2],
      ['NodeResourcesFit', 1],
      ['PodTopologySpread', 2],
      ['InterPodAffinity', 2],
      ['NodeResourcesBalancedAllocation', 1],
      ['ImageLocality', 1],
    ]);
    expect(profile.preEnqueue.map((plugin) => plugin.name)).toEqual(['SchedulingGates']);
    expect(profile.queueSort?.name).toBe('PrioritySort');
    expect(profile.scores[2]?.plugin).toBe(profile.filters[5]);
  });

  it.each<[string, ProfileConfig, string]>([
    ['unknown plugin', { filters: ['VolumeZone'], scores: [] }, 'unknown scheduler plugin "VolumeZone"'],
    ['filter plugin as queueSort', { queueSort: 'NodeName', filters: [], scores: [] }, 'is not a queueSort plugin'],
    ['filter plugin as preEnqueue', { preEnqueue: ['NodeName'], filters: [], scores: [] }, 'is not a preEnqueue plugin'],
    ['prototype names are not plugins', { filters: ['constructor'], scores: [] }, 'unknown scheduler plugin "constructor"'],
    ['score plugin as filter', { filters: ['NodeResourcesBalancedAllocation'], scores: [] }, 'is not a filter plugin'],
    ['filter plugin as score', { filters: [], scores: [{ name: 'NodeName', weight: 1 }] }, 'is not a score plugin'],
    ['duplicate filter', { filters: ['NodeName', 'NodeName'], scores: [] }, 'listed twice in filters'],
    ['zero weight', { filters: [], scores: [{ name: 'NodeResourcesFit', weight: 0 }] }, 'must be a positive integer, got 0'],
    ['fractional weight', { filters: [], scores: [{ name: 'NodeResourcesFit', weight: 1.5 }] }, 'must be a positive integer, got 1.5'],
  ])('rejects %s', (_case, config, message) => {
    expect(() => createProfile(config, defaultRegistry)).toThrow(ProfileConfigError);
    expect(() => createProfile(config, defaultRegistry)).toThrow(message);
  });

  it('gives each plugin its profile\'s args (NodeResourcesFit MostAllocated ranks the fuller node first)', () => {
    const infos = buildNodeInfos([makeNode({ name: 'empty' }), makeNode({ name: 'busy' })], [makePod({ name: 'placed', nodeName: 'busy', cpu: '2', memory: '4Gi' })]);
    const pod = makePod({ name: 'p', cpu: '500m', memory: '512Mi' });
    const ctx = createSchedulingContext(pod, infos);
    const fitScore = (config: ProfileConfig) => {
      const fit = createProfile(config, defaultRegistry).scores.find(({ plugin }) => plugin.name === 'NodeResourcesFit')?.plugin;
      return infos.map((info) => fit?.score(pod, info, ctx));
    };
    const most = fitScore({
      ...defaultProfileConfig,
      args: { NodeResourcesFit: { ignoredResources: [], ignoredResourceGroups: [], scoringStrategy: { type: 'MostAllocated', resources: [{ name: 'cpu', weight: 1 }, { name: 'memory', weight: 1 }] } } },
    });
    const least = fitScore(defaultProfileConfig);
    expect((most[1] as number) > (most[0] as number)).toBe(true);
    expect((least[1] as number) < (least[0] as number)).toBe(true);
  });
});
