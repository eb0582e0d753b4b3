/**
 * The scheduler's configuration: kube-scheduler 1.32's `kubescheduler.config.k8s.io/v1`
 * KubeSchedulerConfiguration (`--scheduler-config`), decoded, defaulted and validated as
 * kube does, resolved into one plugin set per profile (selected by `spec.schedulerName`).
 */
import { readFile } from 'node:fs/promises';
import { SchedulerConfigError } from '../../errors.ts';
import type { ProfileConfig } from '../framework.ts';
import { defaultRegistry } from '../plugins/index.ts';
import { decodeSchedulerConfig, defaultSchedulerConfig } from './decode.ts';
import { profileConfigsOf } from './expand.ts';
import type { SchedulerConfiguration } from './types.ts';

export * from './types.ts';
export { DEFAULT_SCHEDULER_NAME, defaultPlugins, mergePluginSet, PLUGINS_NOT_BUILT } from './defaults.ts';
export { SCHEDULER_CONFIG_API_VERSION, SCHEDULER_CONFIG_KIND } from './decode.ts';
export { profileConfigsOf } from './expand.ts';

/** A configuration ready to run: the defaulted document, and each profile's plugins by scheduler name. */
export interface ResolvedSchedulerConfig {
  readonly configuration: SchedulerConfiguration;
  readonly profiles: ReadonlyMap<string, ProfileConfig>;
}

const knownPlugins = (): ReadonlySet<string> => new Set(Object.keys(defaultRegistry));

/**
 * Parses a KubeSchedulerConfiguration (YAML or JSON) and resolves its profiles against the
 * built-in plugins; throws {@link SchedulerConfigError} naming the field at the first problem.
 */
export function parseSchedulerConfig(text: string): ResolvedSchedulerConfig {
  const configuration = decodeSchedulerConfig(text, knownPlugins());
  return { configuration, profiles: profileConfigsOf(configuration, defaultRegistry) };
}

/** The configuration kube-scheduler runs with when given none: one `default-scheduler` profile of the default plugins. */
export function defaultResolvedSchedulerConfig(): ResolvedSchedulerConfig {
  const configuration = defaultSchedulerConfig(knownPlugins());
  return { configuration, profiles: profileConfigsOf(configuration, defaultRegistry) };
}

/** Reads and parses the configuration file at `path` (`--scheduler-config`); the error names the file and the field. */
export async function loadSchedulerConfig(path: string): Promise<ResolvedSchedulerConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new SchedulerConfigError(path, `cannot read the file: ${(error as Error).message}`);
  }
  try {
    return parseSchedulerConfig(text);
  } catch (error) {
    if (error instanceof SchedulerConfigError) throw new SchedulerConfigError(`${path}: ${error.field}`, error.detail);
    throw error;
  }
}
