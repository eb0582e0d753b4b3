/**
 * From a defaulted profile to the plugins it runs at each extension point logplane has
 * (kube-scheduler's frameworkImpl: `expandMultiPointPlugins` and `getScoreWeights`).
 *
 * For each point: the plugins enabled at the point itself, plus every `multiPoint` plugin
 * that implements the point and is not disabled there (none when the point disables
 * `*`). A plugin enabled at both is the point's own entry (an override, e.g. a new
 * weight). Order: the overrides in the point's order, then the other `multiPoint`
 * plugins, then the point's other plugins. Score weights: the point's own entry first,
 * else the `multiPoint` one; unset or 0 means 1.
 *
 * kube's preFilter, preScore, reserve, permit, preBind, bind and postBind points are
 * accepted but have no plugins here: logplane's plugins compute their PreFilter/PreScore
 * state inside Filter/Score (cycle values), and binding is the `PodBound` event.
 */
import { SchedulerConfigError } from '../../errors.ts';
import type { Plugin, PluginRegistry, ProfileConfig } from '../framework.ts';
import { PLUGINS_NOT_BUILT } from './defaults.ts';
import { join, at } from './read.ts';
import type { SchedulerConfiguration, SchedulerProfileConfig } from './types.ts';

/** The extension points logplane runs, and how a plugin object shows it implements each. */
const POINTS = {
  preEnqueue: (plugin: Plugin) => 'preEnqueue' in plugin,
  queueSort: (plugin: Plugin) => 'compare' in plugin,
  filter: (plugin: Plugin) => 'filter' in plugin,
  score: (plugin: Plugin) => 'score' in plugin,
  postFilter: (plugin: Plugin) => 'postFilter' in plugin,
} as const;

type Point = keyof typeof POINTS;

/** Which points each built plugin implements (from an instance with default args). */
function rolesOf(registry: PluginRegistry): (name: string) => ReadonlySet<Point> {
  const roles = new Map<string, Set<Point>>();
  return (name) => {
    let set = roles.get(name);
    if (set === undefined) {
      const factory = Object.hasOwn(registry, name) ? registry[name] : undefined;
      const plugin = factory?.();
      set = new Set(plugin === undefined ? [] : (Object.keys(POINTS) as Point[]).filter((point) => POINTS[point](plugin)));
      roles.set(name, set);
    }
    return set;
  };
}

/** The plugin names a profile runs at `point`, in order. */
function expandPoint(profile: SchedulerProfileConfig, point: Point, roles: (name: string) => ReadonlySet<Point>, field: string): string[] {
  const own = profile.plugins[point];
  const ownNames: string[] = [];
  own.enabled.forEach(({ name }, index) => {
    if (PLUGINS_NOT_BUILT.has(name)) return;
    const path = join(at(join(field, `plugins.${point}.enabled`), index), 'name');
    if (!roles(name).has(point)) throw new SchedulerConfigError(path, `Invalid value: "${name}": plugin does not extend ${point}`);
    if (ownNames.includes(name)) throw new SchedulerConfigError(path, `Duplicate value: "${name}": plugin already registered at ${point}`);
    ownNames.push(name);
  });
  const disabled = new Set(own.disabled.map(({ name }) => name));
  if (disabled.has('*')) return ownNames;
  const overrides = new Set<string>();
  const fromMultiPoint: string[] = [];
  profile.plugins.multiPoint.enabled.forEach(({ name }, index) => {
    if (PLUGINS_NOT_BUILT.has(name) || !roles(name).has(point) || disabled.has(name)) return;
    if (ownNames.includes(name)) {
      overrides.add(name);
      return;
    }
    if (fromMultiPoint.includes(name)) {
      throw new SchedulerConfigError(join(at(join(field, 'plugins.multiPoint.enabled'), index), 'name'), `Duplicate value: "${name}": plugin already registered at ${point}`);
    }
    fromMultiPoint.push(name);
  });
  return [...ownNames.filter((name) => overrides.has(name)), ...fromMultiPoint, ...ownNames.filter((name) => !overrides.has(name))];
}

/** kube's getScoreWeights: the score point's own weight, else multiPoint's; unset or 0 is 1. */
function weightOf(profile: SchedulerProfileConfig, name: string): number {
  const own = profile.plugins.score.enabled.find((plugin) => plugin.name === name);
  const weight = own !== undefined ? own.weight : profile.plugins.multiPoint.enabled.find((plugin) => plugin.name === name)?.weight;
  return weight === undefined || weight === 0 ? 1 : weight;
}

/**
 * The plugins each profile of `config` runs (by scheduler name, in the configuration's
 * order), its percentageOfNodesToScore the profile's or else the configuration's. Throws
 * {@link SchedulerConfigError} for a plugin at a point it does not implement, a double
 * registration, a profile without exactly one queueSort plugin, or profiles whose queueSort
 * differs (kube runs one queue for all profiles).
 */
export function profileConfigsOf(config: SchedulerConfiguration, registry: PluginRegistry): Map<string, ProfileConfig> {
  const roles = rolesOf(registry);
  const profiles = new Map<string, ProfileConfig>();
  let firstQueueSort: string | undefined;
  config.profiles.forEach((profile, index) => {
    const field = at('profiles', index);
    const queueSorts = expandPoint(profile, 'queueSort', roles, field);
    const [queueSort] = queueSorts;
    if (queueSort === undefined) throw new SchedulerConfigError(join(field, 'plugins.queueSort'), `Required value: one queue sort plugin required for profile with scheduler name "${profile.schedulerName}"`);
    if (queueSorts.length > 1) throw new SchedulerConfigError(join(field, 'plugins.queueSort'), `Invalid value: ${queueSorts.length}: only one queue sort plugin can be enabled`);
    if (index === 0) firstQueueSort = queueSort;
    else if (queueSort !== firstQueueSort) throw new SchedulerConfigError(join(field, 'plugins.queueSort'), `Invalid value: "${queueSort}": queueSort must be the same for all profiles`);
    const scores = expandPoint(profile, 'score', roles, field).map((name) => ({ name, weight: weightOf(profile, name) }));
    profiles.set(profile.schedulerName, {
      queueSort,
      preEnqueue: expandPoint(profile, 'preEnqueue', roles, field),
      filters: expandPoint(profile, 'filter', roles, field),
      scores,
      postFilters: expandPoint(profile, 'postFilter', roles, field),
      percentageOfNodesToScore: profile.percentageOfNodesToScore ?? config.percentageOfNodesToScore,
      args: profile.pluginArgs,
    });
  });
  return profiles;
}
