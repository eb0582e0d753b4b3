/**
 * Where the local broker keeps its jars, data and state.
 */
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Kafka version pinned in `pom.xml` (a test keeps the two in sync). */
export const KAFKA_VERSION = '4.4.0';

/** Absolute path of the repository root (three folders above this file). */
export const REPO_ROOT: string = resolve(fileURLToPath(new URL('../../../', import.meta.url)));

/** The dependency manifest that lists the broker's jars. */
export const POM_PATH: string = join(REPO_ROOT, 'log', 'kafka', 'broker', 'pom.xml');

/** `.kafka-local/` in the repo root: gitignored home of the state file and default data dir. */
export const LOCAL_DIR: string = join(REPO_ROOT, '.kafka-local');

/** `.kafka-local/state.json`: bootstrap address and pid of the running local broker. */
export const STATE_FILE: string = join(LOCAL_DIR, 'state.json');

/**
 * Default data dir of a local cluster of `brokers` brokers, beside its state file (in
 * `.kafka-local/` by default): `data` for one broker, `data-<n>` for n (a data dir
 * formatted for one cluster size cannot serve another).
 */
export function defaultDataDir(brokers: number, stateFile: string = STATE_FILE): string {
  return join(dirname(stateFile), brokers === 1 ? 'data' : `data-${brokers}`);
}

/**
 * The jar cache for one Kafka version:
 * `${XDG_CACHE_HOME:-~/.cache}/logplane/kafka-<version>/libs`.
 */
export function kafkaLibsDir(version: string = KAFKA_VERSION, env: NodeJS.ProcessEnv = process.env): string {
  const cacheHome = env['XDG_CACHE_HOME'] || join(homedir(), '.cache');
  return join(cacheHome, 'logplane', `kafka-${version}`, 'libs');
}
