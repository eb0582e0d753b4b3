/**
 * `.kafka-local/state.json`: which local broker is running, so every process (CLI, test
 * setup, other tools) can find it.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { STATE_FILE } from './paths.ts';

/** What the state file records about a running local broker. */
export interface BrokerState {
  /** Bootstrap address, `127.0.0.1:PORT`. */
  readonly brokers: string;
  /** pid of the broker JVM. */
  readonly pid: number;
  readonly port: number;
  readonly controllerPort: number;
  /** KRaft cluster id of the data dir; the probe checks the broker answering has it. */
  readonly clusterId: string;
  readonly dataDir: string;
  /** The broker's log4j file (WARN and above). */
  readonly logFile: string;
  readonly kafkaVersion: string;
  /** ISO time of the start. */
  readonly startedAt: string;
}

/** Reads the state file; undefined when there is none or it is unreadable. */
export function readState(file: string = STATE_FILE): BrokerState | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<BrokerState>;
    if (typeof parsed.brokers !== 'string' || typeof parsed.pid !== 'number') return undefined;
    return parsed as BrokerState;
  } catch {
    return undefined;
  }
}

/** Writes the state file atomically (temp file + rename). */
export function writeState(state: BrokerState, file: string = STATE_FILE): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n');
  renameSync(tmp, file);
}

/** Removes the state file if it still describes the broker with this pid (or any, if pid is omitted). */
export function removeState(pid?: number, file: string = STATE_FILE): void {
  const current = readState(file);
  if (pid === undefined || current === undefined || current.pid === pid) {
    rmSync(file, { force: true });
  }
}
