/**
 * kube-scheduler 1.32's v1 defaults (pkg/scheduler/apis/config/v1/default_plugins.go and
 * defaults.go): the default profile's plugins, all enabled at `multiPoint` with their score
 * weights, and `mergePluginSet`, which lays a profile's own plugin sets over them.
 */
import { EXTENSION_POINTS, type Plugins, type PluginSet } from './types.ts';

/** kube's DefaultSchedulerName. */
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

/**
 * kube's in-tree default plugins that logplane does not build: the volume plugins other
 * than VolumeBinding (no attach limits or zones here) and DefaultBinder (binding is the
 * `PodBound` event). A
 * configuration may name them; they do nothing.
 */
export const PLUGINS_NOT_BUILT: ReadonlySet<string> = new Set(['VolumeRestrictions', 'NodeVolumeLimits', 'VolumeZone', 'DefaultBinder']);

const EMPTY_SET: PluginSet = { enabled: [], disabled: [] };

/** kube's getDefaultPlugins: the 1.32 default profile, in its order and with its weights, all at `multiPoint`. */
export function defaultPlugins(): Plugins {
  const plugins = Object.fromEntries(EXTENSION_POINTS.map((point) => [point, EMPTY_SET])) as Record<keyof Plugins, PluginSet>;
  plugins.multiPoint = {
    enabled: [
      { name: 'SchedulingGates' },
      { name: 'PrioritySort' },
      { name: 'NodeUnschedulable' },
      { name: 'NodeName' },
      { name: 'TaintToleration', weight: 3 },
      { name: 'NodeAffinity', weight: 2 },
      { name: 'NodePorts' },
      { name: 'NodeResourcesFit', weight: 1 },
      { name: 'VolumeRestrictions' },
      { name: 'NodeVolumeLimits' },
      { name: 'VolumeBinding' },
      { name: 'VolumeZone' },
      { name: 'PodTopologySpread', weight: 2 },
      { name: 'InterPodAffinity', weight: 2 },
      { name: 'DefaultPreemption' },
      { name: 'NodeResourcesBalancedAllocation', weight: 1 },
      { name: 'ImageLocality', weight: 1 },
      { name: 'DefaultBinder' },
    ],
    disabled: [],
  };
  return plugins;
}

/**
 * kube's mergePluginSet: the default plugins not disabled (none when `*` is), each replaced
 * in place by the custom entry of the same name, then the other custom plugins in their
 * order; the custom `disabled` list is kept (the framework reads it when expanding
 * `multiPoint`).
 */
export function mergePluginSet(defaults: PluginSet, custom: PluginSet): PluginSet {
  const disabledNames = new Set(custom.disabled.map((plugin) => plugin.name));
  const customByName = new Map(custom.enabled.map((plugin, index) => [plugin.name, { plugin, index }]));
  const replaced = new Set<number>();
  const enabled: PluginSet['enabled'][number][] = [];
  if (!disabledNames.has('*')) {
    for (const plugin of defaults.enabled) {
      if (disabledNames.has(plugin.name)) continue;
      const override = customByName.get(plugin.name);
      if (override !== undefined) replaced.add(override.index);
      enabled.push(override?.plugin ?? plugin);
    }
  }
  custom.enabled.forEach((plugin, index) => {
    if (!replaced.has(index)) enabled.push(plugin);
  });
  return { enabled, disabled: custom.disabled.map(({ name }) => ({ name })) };
}

/** kube's mergePlugins: every extension point's set merged over the defaults'. */
export function mergePlugins(defaults: Plugins, custom: Plugins | undefined): Plugins {
  if (custom === undefined) return defaults;
  return Object.fromEntries(EXTENSION_POINTS.map((point) => [point, mergePluginSet(defaults[point], custom[point])])) as unknown as Plugins;
}
