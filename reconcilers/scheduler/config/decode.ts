/**
 * Decodes a `kubescheduler.config.k8s.io/v1` KubeSchedulerConfiguration (YAML or JSON),
 * strictly as kube-scheduler does (unknown fields are errors), and applies kube's v1
 * defaults: one `default-scheduler` profile when none is given (a lone profile without a
 * name is `default-scheduler`), the default plugins merged under each profile's own
 * sets, default args for every enabled plugin that takes args.
 */
import YAML from 'yaml';
import { SchedulerConfigError } from '../../errors.ts';
import { ARGS_DECODERS, takesArgs } from './args.ts';
import { DEFAULT_SCHEDULER_NAME, defaultPlugins, mergePlugins, PLUGINS_NOT_BUILT } from './defaults.ts';
import { at, join, readInteger, readList, readObject, readString } from './read.ts';
import { type ArgsPluginName, EXTENSION_POINTS, type PluginArgs, type PluginRef, type Plugins, type PluginSet, type SchedulerConfiguration, type SchedulerProfileConfig } from './types.ts';

/** The group/version kube-scheduler 1.32 reads. */
export const SCHEDULER_CONFIG_API_VERSION = 'kubescheduler.config.k8s.io/v1';
export const SCHEDULER_CONFIG_KIND = 'KubeSchedulerConfiguration';

const TOP_LEVEL_FIELDS = [
  'apiVersion',
  'kind',
  'parallelism',
  'leaderElection',
  'clientConnection',
  'healthzBindAddress',
  'metricsBindAddress',
  'enableProfiling',
  'enableContentionProfiling',
  'percentageOfNodesToScore',
  'podInitialBackoffSeconds',
  'podMaxBackoffSeconds',
  'profiles',
  'extenders',
  'delayCacheUntilActive',
];

/** A profile as written, before defaulting. */
interface WrittenProfile {
  readonly schedulerName: string | undefined;
  readonly percentageOfNodesToScore: number | undefined;
  readonly plugins: Plugins | undefined;
  readonly pluginConfig: readonly { readonly name: string; readonly args: unknown }[];
}

function readPluginSet(raw: unknown, field: string): PluginSet {
  if (raw === undefined || raw === null) return { enabled: [], disabled: [] };
  const object = readObject(raw, field, ['enabled', 'disabled']);
  const readRefs = (list: unknown, listField: string): PluginRef[] =>
    readList(list, listField).map((item, index) => {
      const path = at(listField, index);
      const entry = readObject(item, path, ['name', 'weight']);
      const name = readString(entry['name'], join(path, 'name')) ?? '';
      if (name === '') throw new SchedulerConfigError(join(path, 'name'), 'Required value');
      const weight = readInteger(entry['weight'], join(path, 'weight'));
      if (weight !== undefined && weight < 0) throw new SchedulerConfigError(join(path, 'weight'), `Invalid value: ${weight}: must be non-negative`);
      return { name, weight };
    });
  return {
    enabled: readRefs(object['enabled'], join(field, 'enabled')),
    disabled: readRefs(object['disabled'], join(field, 'disabled')).map(({ name }) => ({ name })),
  };
}

function readPlugins(raw: unknown, field: string): Plugins | undefined {
  if (raw === undefined || raw === null) return undefined;
  const object = readObject(raw, field, EXTENSION_POINTS);
  return Object.fromEntries(EXTENSION_POINTS.map((point) => [point, readPluginSet(object[point], join(field, point))])) as unknown as Plugins;
}

function readProfile(raw: unknown, field: string): WrittenProfile {
  const object = readObject(raw, field, ['schedulerName', 'percentageOfNodesToScore', 'plugins', 'pluginConfig']);
  const pluginConfigField = join(field, 'pluginConfig');
  return {
    schedulerName: readString(object['schedulerName'], join(field, 'schedulerName')),
    percentageOfNodesToScore: readInteger(object['percentageOfNodesToScore'], join(field, 'percentageOfNodesToScore')),
    plugins: readPlugins(object['plugins'], join(field, 'plugins')),
    pluginConfig: readList(object['pluginConfig'], pluginConfigField).map((item, index) => {
      const path = at(pluginConfigField, index);
      const entry = readObject(item, path, ['name', 'args']);
      const name = readString(entry['name'], join(path, 'name')) ?? '';
      if (name === '') throw new SchedulerConfigError(join(path, 'name'), 'Required value');
      return { name, args: entry['args'] };
    }),
  };
}

function checkPercentage(value: number | undefined, field: string): void {
  if (value !== undefined && (value < 0 || value > 100)) throw new SchedulerConfigError(field, `Invalid value: ${value}: not in valid range [0-100]`);
}

/** Every plugin a profile names must be one logplane builds or one of kube's that it does not (see PLUGINS_NOT_BUILT). */
function checkPluginNames(plugins: Plugins | undefined, field: string, known: ReadonlySet<string>): void {
  if (plugins === undefined) return;
  for (const point of EXTENSION_POINTS) {
    plugins[point].enabled.forEach((plugin, index) => {
      if (!known.has(plugin.name) && !PLUGINS_NOT_BUILT.has(plugin.name)) {
        throw new SchedulerConfigError(join(at(join(field, `plugins.${point}.enabled`), index), 'name'), `Invalid value: "${plugin.name}": plugin does not exist (known: ${[...known].sort().join(', ')})`);
      }
    });
  }
}

/** kube's setDefaults_KubeSchedulerProfile plus the plugin args' decoding and validation. */
function defaultProfile(written: WrittenProfile, schedulerName: string, field: string, known: ReadonlySet<string>): SchedulerProfileConfig {
  checkPercentage(written.percentageOfNodesToScore, join(field, 'percentageOfNodesToScore'));
  checkPluginNames(written.plugins, field, known);
  const plugins = mergePlugins(defaultPlugins(), written.plugins);
  const pluginArgs: Partial<Record<ArgsPluginName, unknown>> = {};
  const configured = new Set<string>();
  written.pluginConfig.forEach(({ name, args }, index) => {
    const path = at(join(field, 'pluginConfig'), index);
    if (configured.has(name)) throw new SchedulerConfigError(join(path, 'name'), `Duplicate value: "${name}"`);
    configured.add(name);
    if (takesArgs(name)) {
      pluginArgs[name] = ARGS_DECODERS[name](args, join(path, 'args'));
    } else if (!PLUGINS_NOT_BUILT.has(name)) {
      throw new SchedulerConfigError(join(path, 'name'), known.has(name) ? `Invalid value: "${name}": plugin takes no args` : `Invalid value: "${name}": plugin does not exist`);
    }
  });
  for (const point of EXTENSION_POINTS) {
    for (const { name } of plugins[point].enabled) {
      if (takesArgs(name) && pluginArgs[name] === undefined) pluginArgs[name] = ARGS_DECODERS[name](undefined, join(field, `pluginConfig(${name})`));
    }
  }
  return { schedulerName, percentageOfNodesToScore: written.percentageOfNodesToScore, plugins, pluginArgs: pluginArgs as PluginArgs };
}

/**
 * Decodes, defaults and validates a configuration document; throws
 * {@link SchedulerConfigError} naming the field at the first problem. `known` is the
 * set of plugin names logplane builds (the registry's).
 */
export function decodeSchedulerConfig(text: string, known: ReadonlySet<string>): SchedulerConfiguration {
  let document: unknown;
  try {
    document = YAML.parse(text, { uniqueKeys: true });
  } catch (error) {
    throw new SchedulerConfigError('(document)', `not valid YAML: ${(error as Error).message}`);
  }
  const object = readObject(document ?? {}, '', TOP_LEVEL_FIELDS);
  const apiVersion = readString(object['apiVersion'], 'apiVersion');
  if (apiVersion !== SCHEDULER_CONFIG_API_VERSION) throw new SchedulerConfigError('apiVersion', `Unsupported value: ${JSON.stringify(apiVersion ?? '')}: supported values: "${SCHEDULER_CONFIG_API_VERSION}"`);
  const kind = readString(object['kind'], 'kind');
  if (kind !== SCHEDULER_CONFIG_KIND) throw new SchedulerConfigError('kind', `Unsupported value: ${JSON.stringify(kind ?? '')}: supported values: "${SCHEDULER_CONFIG_KIND}"`);
  if (readList(object['extenders'], 'extenders').length > 0) throw new SchedulerConfigError('extenders', 'Forbidden: scheduler extenders are not supported by logplane');
  return defaultConfiguration(object, known);
}

/** kube's SetDefaults_KubeSchedulerConfiguration and ValidateKubeSchedulerConfiguration over a decoded document. */
function defaultConfiguration(object: Readonly<Record<string, unknown>>, known: ReadonlySet<string>): SchedulerConfiguration {
  const parallelism = readInteger(object['parallelism'], 'parallelism') ?? 16;
  if (parallelism <= 0) throw new SchedulerConfigError('parallelism', `Invalid value: ${parallelism}: should be an integer value greater than zero`);
  const percentageOfNodesToScore = readInteger(object['percentageOfNodesToScore'], 'percentageOfNodesToScore') ?? 0;
  checkPercentage(percentageOfNodesToScore, 'percentageOfNodesToScore');
  const podInitialBackoffSeconds = readInteger(object['podInitialBackoffSeconds'], 'podInitialBackoffSeconds') ?? 1;
  if (podInitialBackoffSeconds <= 0) throw new SchedulerConfigError('podInitialBackoffSeconds', `Invalid value: ${podInitialBackoffSeconds}: must be greater than 0`);
  const podMaxBackoffSeconds = readInteger(object['podMaxBackoffSeconds'], 'podMaxBackoffSeconds') ?? 10;
  if (podMaxBackoffSeconds < podInitialBackoffSeconds) {
    throw new SchedulerConfigError('podMaxBackoffSeconds', `Invalid value: ${podMaxBackoffSeconds}: must be greater than or equal to PodInitialBackoffSeconds`);
  }
  const written = readList(object['profiles'], 'profiles').map((profile, index) => readProfile(profile, at('profiles', index)));
  if (written.length === 0) written.push({ schedulerName: undefined, percentageOfNodesToScore: undefined, plugins: undefined, pluginConfig: [] });
  const names = new Set<string>();
  const profiles = written.map((profile, index) => {
    const field = at('profiles', index);
    // kube defaults the name only when there is a single profile.
    const schedulerName = profile.schedulerName ?? (written.length === 1 ? DEFAULT_SCHEDULER_NAME : '');
    if (schedulerName === '') throw new SchedulerConfigError(join(field, 'schedulerName'), 'Required value');
    if (names.has(schedulerName)) throw new SchedulerConfigError(join(field, 'schedulerName'), `Duplicate value: "${schedulerName}"`);
    names.add(schedulerName);
    return defaultProfile(profile, schedulerName, field, known);
  });
  return { parallelism, percentageOfNodesToScore, podInitialBackoffSeconds, podMaxBackoffSeconds, profiles };
}

/** The configuration kube-scheduler runs with when given none: one default profile. */
export function defaultSchedulerConfig(known: ReadonlySet<string>): SchedulerConfiguration {
  return defaultConfiguration({}, known);
}
