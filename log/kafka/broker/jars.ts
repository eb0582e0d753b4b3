/**
 * Fetches the broker's jars once (via Maven, from whatever repository Maven is set up to
 * use) and caches them per Kafka version, so later starts are offline.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { LocalKafkaError, tail } from './errors.ts';
import { KAFKA_VERSION, POM_PATH, kafkaLibsDir } from './paths.ts';
import { run } from './process-util.ts';

const MARKER = '.complete';

/** Options of {@link ensureKafkaJars}. */
export interface EnsureJarsOptions {
  /** Where the jars go; default `${XDG_CACHE_HOME:-~/.cache}/logplane/kafka-<version>/libs`. */
  readonly libsDir?: string;
  /** The pom that lists the jars; default `log/kafka/broker/pom.xml`. */
  readonly pomPath?: string;
  /** Maven executable; default `$MVN` or `mvn`. */
  readonly mvn?: string;
}

/** The cached jar folder and whether this call had to download it. */
export interface KafkaJars {
  readonly libsDir: string;
  readonly downloaded: boolean;
}

/**
 * Makes sure the Kafka broker jars are in the cache and returns their folder.
 * A cache entry is valid when its marker holds the hash of the current pom, so changing
 * the pom (e.g. the log4j binding) refreshes it. Throws `MAVEN_MISSING` / `MAVEN_FAILED`
 * (with the tail of Maven's output) when the jars cannot be fetched.
 */
export async function ensureKafkaJars(options: EnsureJarsOptions = {}): Promise<KafkaJars> {
  const pomPath = options.pomPath ?? POM_PATH;
  const libsDir = options.libsDir ?? kafkaLibsDir(KAFKA_VERSION);
  const pomHash = createHash('sha256').update(readFileSync(pomPath)).digest('hex');
  const marker = join(libsDir, MARKER);
  if (existsSync(marker) && readFileSync(marker, 'utf8').trim() === pomHash) {
    return { libsDir, downloaded: false };
  }

  // Download into a sibling temp folder and rename, so a crash never leaves a half cache.
  const parent = dirname(libsDir);
  mkdirSync(parent, { recursive: true });
  const tmp = join(parent, `libs.tmp-${process.pid}-${Date.now()}`);
  const mvn = options.mvn ?? process.env['MVN'] ?? 'mvn';
  const result = await run(mvn, [
    '-q', '-B', '-f', pomPath,
    'dependency:copy-dependencies',
    `-DoutputDirectory=${tmp}`,
    '-DincludeScope=runtime',
  ]);
  if (result.spawnError?.code === 'ENOENT') {
    throw new LocalKafkaError('MAVEN_MISSING',
      `Maven ('${mvn}') was not found. It fetches the Kafka ${KAFKA_VERSION} broker jars once; ` +
      `install it (Debian/Ubuntu: apt-get install maven) or set MVN to its path.`,
      { context: { mvn, pomPath } });
  }
  if (result.code !== 0 || !existsSync(join(tmp, `kafka_2.13-${KAFKA_VERSION}.jar`))) {
    rmSync(tmp, { recursive: true, force: true });
    throw new LocalKafkaError('MAVEN_FAILED',
      `Maven could not fetch the Kafka ${KAFKA_VERSION} broker jars (exit ${String(result.code)}). ` +
      `Last lines of its output:\n${tail(result.output)}`,
      { retriable: true, context: { mvn, pomPath, exitCode: result.code } });
  }
  writeFileSync(join(tmp, MARKER), pomHash + '\n');
  rmSync(libsDir, { recursive: true, force: true });
  try {
    renameSync(tmp, libsDir);
  } catch (err) {
    // Another process won the race and filled the cache: use theirs.
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(marker)) throw err;
  }
  return { libsDir, downloaded: true };
}

/** The jar files in a libs folder (for checks and diagnostics). */
export function listJars(libsDir: string): string[] {
  return readdirSync(libsDir).filter((f) => f.endsWith('.jar')).sort();
}
