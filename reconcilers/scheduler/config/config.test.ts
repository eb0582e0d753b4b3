import { describe, expect, it } from 'vitest';
import { SchedulerConfigError } from '../../errors.ts';
import { defaultProfileConfig } from '../plugins/index.ts';
import { defaultResolvedSchedulerConfig, mergePluginSet, parseSchedulerConfig } from './index.ts';

const HEADER = 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n';

const errorOf = (text: string): SchedulerConfigError => {
  try {
    parseSchedulerConfig(text);
  } catch (error) {
    if (error instanceof SchedulerConfigError) return error;
    throw error;
  }
  throw new Error('expected a SchedulerConfigError');
};

describe('KubeSchedulerConfiguration defaults', () => {
  it('without a document is one default-scheduler profile running kube 1.32\'s default plugins and weights', () => {
    const { configuration, profiles } = defaultResolvedSchedulerConfig();
    expect(configuration).toMatchObject({ parallelism: 16, percentageOfNodesToScore: 0, podInitialBackoffSeconds: 1, podMaxBackoffSeconds: 10 });
    expect([...profiles.keys()]).toEqual(['default-scheduler']);
    const profile = profiles.get('default-scheduler');
    expect(profile).toMatchObject({ ...defaultProfileConfig, percentageOfNodesToScore: 0 });
    expect(Object.keys(profile?.args ?? {}).sort()).toEqual(['DefaultPreemption', 'InterPodAffinity', 'NodeAffinity', 'NodeResourcesBalancedAllocation', 'NodeResourcesFit', 'PodTopologySpread']);
    expect(profile?.args?.NodeResourcesFit?.scoringStrategy).toEqual({ type: 'LeastAllocated', resources: [{ name: 'cpu', weight: 1 }, { name: 'memory', weight: 1 }] });
    expect(profile?.args?.DefaultPreemption).toEqual({ minCandidateNodesPercentage: 10, minCandidateNodesAbsolute: 100 });
  });

  it('an empty document and a lone unnamed profile are the same default profile', () => {
    const expected = defaultResolvedSchedulerConfig().profiles;
    expect(parseSchedulerConfig(HEADER).profiles).toEqual(expected);
    expect(parseSchedulerConfig(`${HEADER}profiles:\n  - {}\n`).profiles).toEqual(expected);
  });

  it.each([
    ['the default plugins replaced in place, custom ones appended', { enabled: [{ name: 'A' }, { name: 'B' }, { name: 'C' }], disabled: [] }, { enabled: [{ name: 'D' }, { name: 'B', weight: 5 }], disabled: [] }, ['A', 'B:5', 'C', 'D']],
    ['a disabled default dropped', { enabled: [{ name: 'A' }, { name: 'B' }], disabled: [] }, { enabled: [], disabled: [{ name: 'A' }] }, ['B']],
    ['"*" drops every default', { enabled: [{ name: 'A' }, { name: 'B' }], disabled: [] }, { enabled: [{ name: 'B' }], disabled: [{ name: '*' }] }, ['B']],
  ])('mergePluginSet: %s', (_what, defaults, custom, expected) => {
    const merged = mergePluginSet(defaults, custom);
    expect(merged.enabled.map((plugin) => (plugin.weight === undefined ? plugin.name : `${plugin.name}:${plugin.weight}`))).toEqual(expected);
    expect(merged.disabled).toEqual(custom.disabled);
  });
});

describe('profiles: multiPoint expansion and per-point enable/disable', () => {
  const profileOf = (plugins: string, name = 'default-scheduler') => {
    const profile = parseSchedulerConfig(`${HEADER}profiles:\n  - schedulerName: ${name}\n    plugins:\n${plugins}`).profiles.get(name);
    if (profile === undefined) throw new Error('no profile');
    return profile;
  };
  const scoreList = (plugins: string): string[] => profileOf(plugins).scores.map(({ name, weight }) => `${name}:${weight}`);

  it.each([
    ['score disabled "*": no score plugins', '      score:\n        disabled:\n          - name: "*"\n', []],
    [
      'a score weight re-set at the score point (overrides first, in the point\'s order)',
      '      score:\n        enabled:\n          - name: ImageLocality\n            weight: 7\n          - name: NodeResourcesFit\n            weight: 4\n',
      ['ImageLocality:7', 'NodeResourcesFit:4', 'TaintToleration:3', 'NodeAffinity:2', 'PodTopologySpread:2', 'InterPodAffinity:2', 'NodeResourcesBalancedAllocation:1'],
    ],
    [
      'a weight re-set at multiPoint keeps the default order; weight 0 is 1',
      '      multiPoint:\n        enabled:\n          - name: NodeResourcesFit\n            weight: 9\n          - name: TaintToleration\n            weight: 0\n',
      ['TaintToleration:1', 'NodeAffinity:2', 'NodeResourcesFit:9', 'PodTopologySpread:2', 'InterPodAffinity:2', 'NodeResourcesBalancedAllocation:1', 'ImageLocality:1'],
    ],
    [
      'a plugin disabled at score still filters',
      '      score:\n        disabled:\n          - name: TaintToleration\n          - name: NodeAffinity\n',
      ['NodeResourcesFit:1', 'PodTopologySpread:2', 'InterPodAffinity:2', 'NodeResourcesBalancedAllocation:1', 'ImageLocality:1'],
    ],
    [
      'multiPoint disabled "*" with one plugin enabled',
      '      multiPoint:\n        disabled:\n          - name: "*"\n        enabled:\n          - name: PrioritySort\n          - name: NodeResourcesFit\n            weight: 3\n',
      ['NodeResourcesFit:3'],
    ],
  ])('%s', (_what, plugins, expected) => {
    expect(scoreList(plugins)).toEqual(expected);
  });

  it('a plugin disabled at filter does not filter but still scores', () => {
    const profile = profileOf('      filter:\n        disabled:\n          - name: TaintToleration\n');
    expect(profile.filters).not.toContain('TaintToleration');
    expect(profile.filters).toContain('NodeResourcesFit');
    expect(profile.scores.map((score) => score.name)).toContain('TaintToleration');
  });

  it('multiPoint disabled "*" keeps only what is enabled, each at every point it implements', () => {
    const profile = profileOf('      multiPoint:\n        disabled:\n          - name: "*"\n        enabled:\n          - name: PrioritySort\n          - name: NodeResourcesFit\n');
    expect(profile).toMatchObject({ queueSort: 'PrioritySort', preEnqueue: [], filters: ['NodeResourcesFit'], scores: [{ name: 'NodeResourcesFit', weight: 1 }], postFilters: [] });
  });

  it('kube\'s plugins that logplane does not build may be named, and do nothing', () => {
    const profile = profileOf('      multiPoint:\n        disabled:\n          - name: VolumeZone\n      bind:\n        enabled:\n          - name: DefaultBinder\n');
    expect(profile.filters).toEqual(defaultProfileConfig.filters);
  });

  it('VolumeBinding is built: a default filter, which a profile may disable', () => {
    expect(defaultProfileConfig.filters).toContain('VolumeBinding');
    const profile = profileOf('      multiPoint:\n        disabled:\n          - name: VolumeBinding\n');
    expect(profile.filters).toEqual(defaultProfileConfig.filters.filter((name) => name !== 'VolumeBinding'));
  });

  it('a profile\'s percentageOfNodesToScore overrides the configuration\'s', () => {
    const { profiles } = parseSchedulerConfig(`${HEADER}percentageOfNodesToScore: 30\nprofiles:\n  - schedulerName: a\n  - schedulerName: b\n    percentageOfNodesToScore: 70\n`);
    expect(profiles.get('a')?.percentageOfNodesToScore).toBe(30);
    expect(profiles.get('b')?.percentageOfNodesToScore).toBe(70);
  });
});

describe('plugin args', () => {
  const argsOf = (plugin: string, args: string) =>
    parseSchedulerConfig(`${HEADER}profiles:\n  - pluginConfig:\n      - name: ${plugin}\n        args:\n${args}`).profiles.get('default-scheduler')?.args;

  it.each([
    ['MostAllocated with resource weights (0 is 1)', '          scoringStrategy:\n            type: MostAllocated\n            resources:\n              - name: cpu\n                weight: 3\n              - name: nvidia.com/gpu\n', { type: 'MostAllocated', resources: [{ name: 'cpu', weight: 3 }, { name: 'nvidia.com/gpu', weight: 1 }] }],
    ['MostAllocated without resources: cpu and memory', '          scoringStrategy:\n            type: MostAllocated\n', { type: 'MostAllocated', resources: [{ name: 'cpu', weight: 1 }, { name: 'memory', weight: 1 }] }],
    [
      'RequestedToCapacityRatio with a shape',
      '          scoringStrategy:\n            type: RequestedToCapacityRatio\n            requestedToCapacityRatio:\n              shape:\n                - utilization: 0\n                  score: 0\n                - utilization: 100\n                  score: 10\n',
      { type: 'RequestedToCapacityRatio', resources: [{ name: 'cpu', weight: 1 }, { name: 'memory', weight: 1 }], shape: [{ utilization: 0, score: 0 }, { utilization: 100, score: 10 }] },
    ],
  ])('NodeResourcesFit: %s', (_what, args, expected) => {
    expect(argsOf('NodeResourcesFit', args)?.NodeResourcesFit?.scoringStrategy).toEqual(expected);
  });

  it('NodeAffinity addedAffinity, DefaultPreemption counts, BalancedAllocation resources', () => {
    expect(argsOf('NodeAffinity', '          addedAffinity:\n            requiredDuringSchedulingIgnoredDuringExecution:\n              nodeSelectorTerms:\n                - matchExpressions:\n                    - key: pool\n                      operator: In\n                      values: [batch]\n')?.NodeAffinity).toEqual({
      addedAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['batch'] }], matchFields: [] }] } },
    });
    expect(argsOf('DefaultPreemption', '          minCandidateNodesAbsolute: 5\n')?.DefaultPreemption).toEqual({ minCandidateNodesPercentage: 10, minCandidateNodesAbsolute: 5 });
    expect(argsOf('NodeResourcesBalancedAllocation', '          resources:\n            - name: cpu\n            - name: memory\n            - name: nvidia.com/gpu\n')?.NodeResourcesBalancedAllocation?.resources).toHaveLength(3);
  });

  it('InterPodAffinity: any hardPodAffinityWeight in 0..100 and ignorePreferredTermsOfExistingPods', () => {
    expect(argsOf('InterPodAffinity', '          hardPodAffinityWeight: 5\n          ignorePreferredTermsOfExistingPods: true\n')?.InterPodAffinity).toEqual({ hardPodAffinityWeight: 5, ignorePreferredTermsOfExistingPods: true });
  });

  it('PodTopologySpread: a List of default constraints, which the plugin then applies', () => {
    expect(argsOf('PodTopologySpread', '          defaultingType: List\n          defaultConstraints:\n            - maxSkew: 1\n              topologyKey: topology.kubernetes.io/zone\n              whenUnsatisfiable: DoNotSchedule\n')?.PodTopologySpread).toEqual({
      defaultingType: 'List',
      defaultConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' }],
    });
  });
});

describe('validation: errors name the field', () => {
  const profiles = (body: string): string => `${HEADER}profiles:\n${body}`;
  it.each([
    ['a wrong apiVersion', 'apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n', 'apiVersion', 'Unsupported value'],
    ['an unknown top-level field', `${HEADER}percentageOfNodes: 10\n`, 'percentageOfNodes', 'unknown field'],
    ['percentageOfNodesToScore above 100', `${HEADER}percentageOfNodesToScore: 101\n`, 'percentageOfNodesToScore', 'not in valid range [0-100]'],
    ['a profile\'s percentageOfNodesToScore below 0', profiles('  - percentageOfNodesToScore: -1\n'), 'profiles[0].percentageOfNodesToScore', 'not in valid range [0-100]'],
    ['a string where an integer goes', `${HEADER}parallelism: many\n`, 'parallelism', 'must be an integer'],
    ['podMaxBackoffSeconds below the initial one', `${HEADER}podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n`, 'podMaxBackoffSeconds', 'greater than or equal'],
    ['duplicate profile names', profiles('  - schedulerName: a\n  - schedulerName: a\n'), 'profiles[1].schedulerName', 'Duplicate value: "a"'],
    ['an unnamed profile among several', profiles('  - schedulerName: a\n  - {}\n'), 'profiles[1].schedulerName', 'Required value'],
    ['an unknown plugin', profiles('  - plugins:\n      filter:\n        enabled:\n          - name: NodeFancy\n'), 'profiles[0].plugins.filter.enabled[0].name', 'plugin does not exist'],
    ['a plugin at a point it does not implement', profiles('  - plugins:\n      score:\n        enabled:\n          - name: NodeName\n'), 'profiles[0].plugins.score.enabled[0].name', 'does not extend score'],
    ['a negative weight', profiles('  - plugins:\n      score:\n        enabled:\n          - name: ImageLocality\n            weight: -2\n'), 'profiles[0].plugins.score.enabled[0].weight', 'must be non-negative'],
    ['no queueSort', profiles('  - plugins:\n      queueSort:\n        disabled:\n          - name: "*"\n'), 'profiles[0].plugins.queueSort', 'one queue sort plugin required'],
    ['a second profile without the first one\'s queueSort', profiles('  - schedulerName: a\n  - schedulerName: b\n    plugins:\n      queueSort:\n        disabled:\n          - name: "*"\n'), 'profiles[1].plugins.queueSort', 'one queue sort plugin required'],
    ['pluginConfig twice for one plugin', profiles('  - pluginConfig:\n      - name: NodeAffinity\n      - name: NodeAffinity\n'), 'profiles[0].pluginConfig[1].name', 'Duplicate value'],
    ['args for a plugin that takes none', profiles('  - pluginConfig:\n      - name: NodeName\n        args: {}\n'), 'profiles[0].pluginConfig[0].name', 'takes no args'],
    ['args of the wrong kind', profiles('  - pluginConfig:\n      - name: NodeAffinity\n        args:\n          kind: NodeResourcesFitArgs\n'), 'profiles[0].pluginConfig[0].args.kind', 'must be "NodeAffinityArgs"'],
    ['an unknown scoring strategy', profiles('  - pluginConfig:\n      - name: NodeResourcesFit\n        args:\n          scoringStrategy:\n            type: Fullest\n'), 'profiles[0].pluginConfig[0].args.scoringStrategy.type', 'Unsupported value: "Fullest"'],
    ['a resource weight above 100', profiles('  - pluginConfig:\n      - name: NodeResourcesFit\n        args:\n          scoringStrategy:\n            resources:\n              - name: cpu\n                weight: 101\n'), 'profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight', 'not in valid range [1, 100]'],
    ['RequestedToCapacityRatio without a shape', profiles('  - pluginConfig:\n      - name: NodeResourcesFit\n        args:\n          scoringStrategy:\n            type: RequestedToCapacityRatio\n'), 'profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape', 'at least one point'],
    [
      'a shape out of order',
      profiles('  - pluginConfig:\n      - name: NodeResourcesFit\n        args:\n          scoringStrategy:\n            type: RequestedToCapacityRatio\n            requestedToCapacityRatio:\n              shape:\n                - {utilization: 50, score: 5}\n                - {utilization: 10, score: 1}\n'),
      'profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization',
      'sorted in increasing order',
    ],
    ['a shape score above 10', profiles('  - pluginConfig:\n      - name: NodeResourcesFit\n        args:\n          scoringStrategy:\n            type: RequestedToCapacityRatio\n            requestedToCapacityRatio:\n              shape:\n                - {utilization: 50, score: 11}\n'), 'shape[0].score', 'not in valid range [0, 10]'],
    ['a BalancedAllocation weight other than 1', profiles('  - pluginConfig:\n      - name: NodeResourcesBalancedAllocation\n        args:\n          resources:\n            - {name: cpu, weight: 2}\n'), 'profiles[0].pluginConfig[0].args.resources[0].weight', 'must be 1'],
    ['System defaulting with constraints', profiles('  - pluginConfig:\n      - name: PodTopologySpread\n        args:\n          defaultConstraints:\n            - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n'), 'profiles[0].pluginConfig[0].args.defaultConstraints', 'must be empty'],
    ['a default constraint with a selector', profiles('  - pluginConfig:\n      - name: PodTopologySpread\n        args:\n          defaultingType: List\n          defaultConstraints:\n            - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}}\n'), 'defaultConstraints[0].labelSelector', 'must not define a selector'],
    ['hardPodAffinityWeight above 100', profiles('  - pluginConfig:\n      - name: InterPodAffinity\n        args:\n          hardPodAffinityWeight: 101\n'), 'profiles[0].pluginConfig[0].args.hardPodAffinityWeight', 'not in valid range [0, 100]'],
    ['both candidate counts zero', profiles('  - pluginConfig:\n      - name: DefaultPreemption\n        args:\n          minCandidateNodesPercentage: 0\n          minCandidateNodesAbsolute: 0\n'), 'profiles[0].pluginConfig[0].args', 'cannot be zero at the same time'],
    ['an In requirement without values', profiles('  - pluginConfig:\n      - name: NodeAffinity\n        args:\n          addedAffinity:\n            requiredDuringSchedulingIgnoredDuringExecution:\n              nodeSelectorTerms:\n                - matchExpressions:\n                    - {key: pool, operator: In}\n'), 'nodeSelectorTerms[0].matchExpressions[0].values', 'Required value'],
    ['a __proto__ key', `${HEADER}profiles:\n  - pluginConfig:\n      - name: NodeAffinity\n        args:\n          __proto__: {}\n`, 'profiles[0].pluginConfig[0].args.__proto__', 'forbidden field name'],
  ])('rejects %s', (_what, text, field, detail) => {
    const error = errorOf(text);
    expect(error.field).toContain(field);
    expect(error.message).toContain(detail);
    expect(error.retriable).toBe(false);
  });

  it('accepts the same queueSort named at the point itself in one profile and by multiPoint in another', () => {
    const { profiles } = parseSchedulerConfig(`${HEADER}profiles:\n  - schedulerName: a\n  - schedulerName: b\n    plugins:\n      queueSort:\n        enabled:\n          - name: PrioritySort\n`);
    expect(profiles.get('b')?.queueSort).toBe('PrioritySort');
  });
});
