/**
 * Finds a Java runtime able to run the Kafka 4.x broker (Java 17 or newer).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LocalKafkaError } from './errors.ts';
import { run } from './process-util.ts';

/** Oldest Java major version the Kafka 4.x broker runs on. */
export const MIN_JAVA_MAJOR = 17;

const INSTALL_HINT = 'install a JDK 17 or newer (Debian/Ubuntu: apt-get install openjdk-17-jdk-headless) or set JAVA_HOME';

/** Parses the major version out of `java -version` output (`"17.0.15"` → 17, `"1.8.0_392"` → 8). */
export function parseJavaMajor(versionOutput: string): number | undefined {
  const m = /version "(\d+)(?:\.(\d+))?/.exec(versionOutput);
  if (!m?.[1]) return undefined;
  const first = Number(m[1]);
  return first === 1 && m[2] ? Number(m[2]) : first;
}

/**
 * Returns the java executable to use (`$JAVA_HOME/bin/java` if set, else `java` on PATH).
 * Throws `JAVA_MISSING` or `JAVA_TOO_OLD` with install instructions.
 */
export async function findJava(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const home = env['JAVA_HOME'];
  const java = home && existsSync(join(home, 'bin', 'java')) ? join(home, 'bin', 'java') : 'java';
  const result = await run(java, ['-version']);
  if (result.spawnError || result.code !== 0) {
    throw new LocalKafkaError('JAVA_MISSING',
      `Java was not found ('${java}'${result.spawnError ? `: ${result.spawnError.code ?? result.spawnError.message}` : ''}). ` +
      `The local Kafka broker needs it: ${INSTALL_HINT}.`,
      { context: { java } });
  }
  const major = parseJavaMajor(result.output);
  if (major !== undefined && major < MIN_JAVA_MAJOR) {
    throw new LocalKafkaError('JAVA_TOO_OLD',
      `Java ${major} is too old for the Kafka 4.x broker ('${java}'): ${INSTALL_HINT}.`,
      { context: { java, major } });
  }
  return java;
}
