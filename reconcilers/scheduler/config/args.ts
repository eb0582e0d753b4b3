/**
 * The plugins' args (kube's `<Plugin>Args` kinds of `kubescheduler.config.k8s.io/v1`):
 * decoded strictly, defaulted as kube's v1 defaults do, and validated as kube's
 * `ValidateXxxArgs` do, each error naming its field.
 */
import type { NodeAffinity, NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm } from '../../../schemas/index.ts';
import { SchedulerConfigError } from '../../errors.ts';
import { at, join, readBoolean, readInteger, readList, readObject, readString } from './read.ts';
import {
  type ArgsPluginName,
  type DefaultPreemptionArgs,
  type DefaultSpreadConstraint,
  type InterPodAffinityArgs,
  type NodeAffinityArgs,
  type NodeResourcesBalancedAllocationArgs,
  type NodeResourcesFitArgs,
  type PluginArgsByName,
  type PodTopologySpreadArgs,
  type ResourceSpec,
  type ScoringStrategy,
  ScoringStrategyType,
  type UtilizationShapePoint,
} from './types.ts';

/** kube's defaultResourceSpec: cpu and memory, weight 1 each. */
export const DEFAULT_RESOURCES: readonly ResourceSpec[] = [
  { name: 'cpu', weight: 1 },
  { name: 'memory', weight: 1 },
];

/** kube's MaxCustomPriorityScore: the highest score of a RequestedToCapacityRatio shape point. */
export const MAX_CUSTOM_PRIORITY_SCORE = 10;
/** kube's MaxUtilization. */
export const MAX_UTILIZATION = 100;
/** kube's MaxResourceWeight (and a preferred node affinity term's highest weight). */
const MAX_WEIGHT = 100;

const TYPE_META = ['apiVersion', 'kind'];

/** Reads the args object at `field`, checking `kind` when it is given (kube's `<Plugin>Args`). */
function argsObject(raw: unknown, field: string, plugin: ArgsPluginName, known: readonly string[]): Readonly<Record<string, unknown>> {
  if (raw === undefined || raw === null) return {};
  const object = readObject(raw, field, [...TYPE_META, ...known]);
  const kind = readString(object['kind'], join(field, 'kind'));
  if (kind !== undefined && kind !== `${plugin}Args`) throw new SchedulerConfigError(join(field, 'kind'), `must be "${plugin}Args" for plugin ${plugin}, got "${kind}"`);
  return object;
}

function readResources(raw: unknown, field: string): ResourceSpec[] {
  return readList(raw, field).map((item, index) => {
    const path = at(field, index);
    const object = readObject(item, path, ['name', 'weight']);
    const name = readString(object['name'], join(path, 'name')) ?? '';
    if (name === '') throw new SchedulerConfigError(join(path, 'name'), 'Required value');
    // kube's v1 default: a weight of 0 (unset) is 1.
    const weight = readInteger(object['weight'], join(path, 'weight')) ?? 0;
    return { name, weight: weight === 0 ? 1 : weight };
  });
}

function rejectDuplicateResources(resources: readonly ResourceSpec[], field: string): void {
  const seen = new Set<string>();
  resources.forEach((resource, index) => {
    if (seen.has(resource.name)) throw new SchedulerConfigError(join(at(field, index), 'name'), `Duplicate value: "${resource.name}"`);
    seen.add(resource.name);
  });
}

function readShape(raw: unknown, field: string): UtilizationShapePoint[] {
  const shape = readList(raw, field).map((item, index) => {
    const path = at(field, index);
    const object = readObject(item, path, ['utilization', 'score']);
    const utilization = readInteger(object['utilization'], join(path, 'utilization')) ?? 0;
    const score = readInteger(object['score'], join(path, 'score')) ?? 0;
    if (utilization < 0 || utilization > MAX_UTILIZATION) throw new SchedulerConfigError(join(path, 'utilization'), `Invalid value: ${utilization}: not in valid range [0, ${MAX_UTILIZATION}]`);
    if (score < 0 || score > MAX_CUSTOM_PRIORITY_SCORE) throw new SchedulerConfigError(join(path, 'score'), `Invalid value: ${score}: not in valid range [0, ${MAX_CUSTOM_PRIORITY_SCORE}]`);
    return { utilization, score };
  });
  if (shape.length === 0) throw new SchedulerConfigError(field, 'Required value: at least one point must be specified');
  shape.forEach((point, index) => {
    const previous = shape[index - 1];
    if (previous !== undefined && previous.utilization >= point.utilization) {
      throw new SchedulerConfigError(join(at(field, index), 'utilization'), `Invalid value: ${point.utilization}: utilization values must be sorted in increasing order`);
    }
  });
  return shape;
}

function readScoringStrategy(raw: unknown, field: string): ScoringStrategy {
  if (raw === undefined || raw === null) return { type: ScoringStrategyType.LeastAllocated, resources: DEFAULT_RESOURCES };
  const object = readObject(raw, field, ['type', 'resources', 'requestedToCapacityRatio']);
  const type = readString(object['type'], join(field, 'type')) ?? ScoringStrategyType.LeastAllocated;
  let resources: readonly ResourceSpec[] = readResources(object['resources'], join(field, 'resources'));
  if (resources.length === 0) resources = DEFAULT_RESOURCES;
  rejectDuplicateResources(resources, join(field, 'resources'));
  resources.forEach((resource, index) => {
    if (resource.weight < 1 || resource.weight > MAX_WEIGHT) {
      throw new SchedulerConfigError(join(at(join(field, 'resources'), index), 'weight'), `Invalid value: ${resource.weight}: resource weight of ${resource.name} not in valid range [1, ${MAX_WEIGHT}]`);
    }
  });
  const ratioField = join(field, 'requestedToCapacityRatio');
  switch (type) {
    case ScoringStrategyType.LeastAllocated:
    case ScoringStrategyType.MostAllocated:
      if (object['requestedToCapacityRatio'] !== undefined && object['requestedToCapacityRatio'] !== null) {
        throw new SchedulerConfigError(ratioField, `Forbidden: only for scoring strategy type ${ScoringStrategyType.RequestedToCapacityRatio}`);
      }
      return { type, resources };
    case ScoringStrategyType.RequestedToCapacityRatio: {
      const ratio = readObject(object['requestedToCapacityRatio'] ?? {}, ratioField, ['shape']);
      return { type, resources, shape: readShape(ratio['shape'], join(ratioField, 'shape')) };
    }
    default:
      throw new SchedulerConfigError(join(field, 'type'), `Unsupported value: "${type}": supported values: ${Object.values(ScoringStrategyType).map((value) => `"${value}"`).join(', ')}`);
  }
}

function readNames(raw: unknown, field: string): string[] {
  return readList(raw, field).map((item, index) => readString(item, at(field, index)) ?? '');
}

function decodeNodeResourcesFit(raw: unknown, field: string): NodeResourcesFitArgs {
  const object = argsObject(raw, field, 'NodeResourcesFit', ['ignoredResources', 'ignoredResourceGroups', 'scoringStrategy']);
  const ignoredResourceGroups = readNames(object['ignoredResourceGroups'], join(field, 'ignoredResourceGroups'));
  ignoredResourceGroups.forEach((group, index) => {
    if (group === '' || group.includes('/')) throw new SchedulerConfigError(at(join(field, 'ignoredResourceGroups'), index), `Invalid value: "${group}": resource group name can't contain '/'`);
  });
  return {
    ignoredResources: readNames(object['ignoredResources'], join(field, 'ignoredResources')),
    ignoredResourceGroups,
    scoringStrategy: readScoringStrategy(object['scoringStrategy'], join(field, 'scoringStrategy')),
  };
}

function decodeBalancedAllocation(raw: unknown, field: string): NodeResourcesBalancedAllocationArgs {
  const object = argsObject(raw, field, 'NodeResourcesBalancedAllocation', ['resources']);
  const resourcesField = join(field, 'resources');
  const given = readResources(object['resources'], resourcesField);
  const resources = given.length === 0 ? DEFAULT_RESOURCES : given;
  rejectDuplicateResources(resources, resourcesField);
  resources.forEach((resource, index) => {
    if (resource.weight !== 1) throw new SchedulerConfigError(join(at(resourcesField, index), 'weight'), `Invalid value: ${resource.weight}: must be 1`);
  });
  return { resources };
}

function decodePodTopologySpread(raw: unknown, field: string): PodTopologySpreadArgs {
  const object = argsObject(raw, field, 'PodTopologySpread', ['defaultConstraints', 'defaultingType']);
  const defaultingType = readString(object['defaultingType'], join(field, 'defaultingType')) ?? 'System';
  if (defaultingType !== 'System' && defaultingType !== 'List') {
    throw new SchedulerConfigError(join(field, 'defaultingType'), `Unsupported value: "${defaultingType}": supported values: "System", "List"`);
  }
  const constraintsField = join(field, 'defaultConstraints');
  const seen = new Set<string>();
  const defaultConstraints = readList(object['defaultConstraints'], constraintsField).map((item, index): DefaultSpreadConstraint => {
    const path = at(constraintsField, index);
    const constraint = readObject(item, path, ['maxSkew', 'topologyKey', 'whenUnsatisfiable', 'labelSelector', 'minDomains', 'nodeAffinityPolicy', 'nodeTaintsPolicy', 'matchLabelKeys']);
    const maxSkew = readInteger(constraint['maxSkew'], join(path, 'maxSkew')) ?? 0;
    if (maxSkew <= 0) throw new SchedulerConfigError(join(path, 'maxSkew'), `Invalid value: ${maxSkew}: not in valid range [1, inf)`);
    const topologyKey = readString(constraint['topologyKey'], join(path, 'topologyKey')) ?? '';
    if (topologyKey === '') throw new SchedulerConfigError(join(path, 'topologyKey'), 'Required value: can not be empty');
    const when = readString(constraint['whenUnsatisfiable'], join(path, 'whenUnsatisfiable')) ?? '';
    if (when !== 'DoNotSchedule' && when !== 'ScheduleAnyway') {
      throw new SchedulerConfigError(join(path, 'whenUnsatisfiable'), `Unsupported value: "${when}": supported values: "DoNotSchedule", "ScheduleAnyway"`);
    }
    if (constraint['labelSelector'] !== undefined && constraint['labelSelector'] !== null) {
      throw new SchedulerConfigError(join(path, 'labelSelector'), 'Forbidden: constraint must not define a selector, as they deduced for each pod');
    }
    for (const key of ['minDomains', 'nodeAffinityPolicy', 'nodeTaintsPolicy', 'matchLabelKeys']) {
      if (constraint[key] !== undefined) throw new SchedulerConfigError(join(path, key), 'Forbidden: not supported in default constraints by logplane');
    }
    const pair = `${topologyKey}/${when}`;
    if (seen.has(pair)) throw new SchedulerConfigError(path, `Duplicate value: {${topologyKey}, ${when}}`);
    seen.add(pair);
    return { maxSkew, topologyKey, whenUnsatisfiable: when };
  });
  if (defaultingType === 'System' && defaultConstraints.length > 0) {
    throw new SchedulerConfigError(constraintsField, 'Invalid value: when .defaultingType is "System", .defaultConstraints must be empty');
  }
  return { defaultConstraints, defaultingType };
}

function decodeInterPodAffinity(raw: unknown, field: string): InterPodAffinityArgs {
  const object = argsObject(raw, field, 'InterPodAffinity', ['hardPodAffinityWeight', 'ignorePreferredTermsOfExistingPods']);
  const hardPodAffinityWeight = readInteger(object['hardPodAffinityWeight'], join(field, 'hardPodAffinityWeight')) ?? 1;
  if (hardPodAffinityWeight < 0 || hardPodAffinityWeight > MAX_WEIGHT) {
    throw new SchedulerConfigError(join(field, 'hardPodAffinityWeight'), `Invalid value: ${hardPodAffinityWeight}: not in valid range [0, ${MAX_WEIGHT}]`);
  }
  const ignorePreferredTermsOfExistingPods = readBoolean(object['ignorePreferredTermsOfExistingPods'], join(field, 'ignorePreferredTermsOfExistingPods')) ?? false;
  return { hardPodAffinityWeight, ignorePreferredTermsOfExistingPods };
}

const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];

function readRequirements(raw: unknown, field: string, fields: boolean): NodeSelectorRequirement[] {
  return readList(raw, field).map((item, index) => {
    const path = at(field, index);
    const object = readObject(item, path, ['key', 'operator', 'values']);
    const key = readString(object['key'], join(path, 'key')) ?? '';
    if (key === '') throw new SchedulerConfigError(join(path, 'key'), 'Required value');
    if (fields && key !== 'metadata.name') throw new SchedulerConfigError(join(path, 'key'), `Invalid value: "${key}": not a valid field selector key (only metadata.name)`);
    const operator = readString(object['operator'], join(path, 'operator')) ?? '';
    if (!OPERATORS.includes(operator) || (fields && operator !== 'In' && operator !== 'NotIn')) {
      throw new SchedulerConfigError(join(path, 'operator'), `Unsupported value: "${operator}"`);
    }
    const values = readNames(object['values'], join(path, 'values'));
    const valuesField = join(path, 'values');
    if ((operator === 'In' || operator === 'NotIn') && values.length === 0) throw new SchedulerConfigError(valuesField, 'Required value: must be specified when `operator` is \'In\' or \'NotIn\'');
    if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0) throw new SchedulerConfigError(valuesField, 'Forbidden: may not be specified when `operator` is \'Exists\' or \'DoesNotExist\'');
    if ((operator === 'Gt' || operator === 'Lt') && (values.length !== 1 || !/^[+-]?\d+$/.test(values[0] ?? ''))) {
      throw new SchedulerConfigError(valuesField, 'Required value: must be specified single value when `operator` is \'Lt\' or \'Gt\'');
    }
    return { key, operator, values };
  });
}

function readTerm(raw: unknown, field: string): NodeSelectorTerm {
  const object = readObject(raw, field, ['matchExpressions', 'matchFields']);
  return {
    matchExpressions: readRequirements(object['matchExpressions'], join(field, 'matchExpressions'), false),
    matchFields: readRequirements(object['matchFields'], join(field, 'matchFields'), true),
  };
}

function readNodeAffinity(raw: unknown, field: string): NodeAffinity | undefined {
  if (raw === undefined || raw === null) return undefined;
  const object = readObject(raw, field, ['requiredDuringSchedulingIgnoredDuringExecution', 'preferredDuringSchedulingIgnoredDuringExecution']);
  const requiredField = join(field, 'requiredDuringSchedulingIgnoredDuringExecution');
  let required: NodeAffinity['requiredDuringSchedulingIgnoredDuringExecution'];
  if (object['requiredDuringSchedulingIgnoredDuringExecution'] !== undefined && object['requiredDuringSchedulingIgnoredDuringExecution'] !== null) {
    const selector = readObject(object['requiredDuringSchedulingIgnoredDuringExecution'], requiredField, ['nodeSelectorTerms']);
    const termsField = join(requiredField, 'nodeSelectorTerms');
    const nodeSelectorTerms = readList(selector['nodeSelectorTerms'], termsField).map((term, index) => readTerm(term, at(termsField, index)));
    if (nodeSelectorTerms.length === 0) throw new SchedulerConfigError(termsField, 'Required value: must have at least one node selector term');
    required = { nodeSelectorTerms };
  }
  const preferredField = join(field, 'preferredDuringSchedulingIgnoredDuringExecution');
  const preferred = readList(object['preferredDuringSchedulingIgnoredDuringExecution'], preferredField).map((item, index): PreferredSchedulingTerm => {
    const path = at(preferredField, index);
    const entry = readObject(item, path, ['weight', 'preference']);
    const weight = readInteger(entry['weight'], join(path, 'weight')) ?? 0;
    if (weight < 1 || weight > MAX_WEIGHT) throw new SchedulerConfigError(join(path, 'weight'), `Invalid value: ${weight}: must be in the range 1-100`);
    return { weight, preference: readTerm(entry['preference'] ?? {}, join(path, 'preference')) };
  });
  return {
    ...(required !== undefined ? { requiredDuringSchedulingIgnoredDuringExecution: required } : {}),
    ...(preferred.length > 0 ? { preferredDuringSchedulingIgnoredDuringExecution: preferred } : {}),
  };
}

function decodeNodeAffinity(raw: unknown, field: string): NodeAffinityArgs {
  const object = argsObject(raw, field, 'NodeAffinity', ['addedAffinity']);
  return { addedAffinity: readNodeAffinity(object['addedAffinity'], join(field, 'addedAffinity')) };
}

function decodeDefaultPreemption(raw: unknown, field: string): DefaultPreemptionArgs {
  const object = argsObject(raw, field, 'DefaultPreemption', ['minCandidateNodesPercentage', 'minCandidateNodesAbsolute']);
  const percentageField = join(field, 'minCandidateNodesPercentage');
  const absoluteField = join(field, 'minCandidateNodesAbsolute');
  const minCandidateNodesPercentage = readInteger(object['minCandidateNodesPercentage'], percentageField) ?? 10;
  const minCandidateNodesAbsolute = readInteger(object['minCandidateNodesAbsolute'], absoluteField) ?? 100;
  if (minCandidateNodesPercentage < 0 || minCandidateNodesPercentage > 100) {
    throw new SchedulerConfigError(percentageField, `Invalid value: ${minCandidateNodesPercentage}: not in valid range [0, 100]`);
  }
  if (minCandidateNodesAbsolute < 0) throw new SchedulerConfigError(absoluteField, `Invalid value: ${minCandidateNodesAbsolute}: not in valid range [0, inf)`);
  if (minCandidateNodesPercentage === 0 && minCandidateNodesAbsolute === 0) {
    throw new SchedulerConfigError(field, 'Invalid value: numerator and denominator cannot be zero at the same time (minCandidateNodesPercentage and minCandidateNodesAbsolute)');
  }
  return { minCandidateNodesPercentage, minCandidateNodesAbsolute };
}

/** Each args-taking plugin's decoder: `raw` undefined gives kube's defaults. */
export const ARGS_DECODERS: { readonly [P in ArgsPluginName]: (raw: unknown, field: string) => PluginArgsByName[P] } = {
  NodeResourcesFit: decodeNodeResourcesFit,
  NodeResourcesBalancedAllocation: decodeBalancedAllocation,
  PodTopologySpread: decodePodTopologySpread,
  InterPodAffinity: decodeInterPodAffinity,
  NodeAffinity: decodeNodeAffinity,
  DefaultPreemption: decodeDefaultPreemption,
};

/** Whether plugin `name` takes args here. */
export const takesArgs = (name: string): name is ArgsPluginName => Object.hasOwn(ARGS_DECODERS, name);
