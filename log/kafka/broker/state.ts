/**
 * `.kafka-local/state.json`: which local broker is running, so every process (CLI, test
 * setup, other tools) can find it.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { STATE_FILE } from './paths.ts';

/** One broker (KRaft combined broker + controller node) of a recorded cluster. */
export interface BrokerNodeState {
  /** Kafka `node.id`, 1..n. */
  readonly nodeId: number;
  /** pid of the node's JVM. */
  readonly pid: number;
  /** Client (PLAINTEXT) port on 127.0.0.1. */
  readonly port: number;
  readonly controllerPort: number;
  /** The node's own directory (config, `kraft/` log dir, logs). */
  readonly dataDir: string;
  /** The node's log4j file (WARN and above). */
  readonly logFile: string;
}

/** What the state file records about a running local cluster (one broker or several). */
export interface BrokerState {
  /** Bootstrap addresses, `127.0.0.1:PORT[,127.0.0.1:PORT...]`, one per broker. */
  readonly brokers: string;
  /** pid of the first broker's JVM (every pid is in `nodes`). */
  readonly pid: number;
  /** Client port of the first broker. */
  readonly port: number;
  /** Controller port of the first broker. */
  readonly controllerPort: number;
  /** KRaft cluster id of the data dir; the probe checks the broker answering has it. */
  readonly clusterId: string;
  /** The cluster's data dir (a single broker's own; the parent of each node's dir otherwise). */
  readonly dataDir: string;
  /** The first broker's log4j file (WARN and above). */
  readonly logFile: string;
  readonly kafkaVersion: string;
  /** ISO time of the start. */
  readonly startedAt: string;
  /** Every broker of the cluster, by node id. */
  readonly nodes: readonly BrokerNodeState[];
}

/**
 * Reads the state file; undefined when there is none or it is unreadable. A file written
 * before clusters of several brokers existed (no `nodes`) reads as a cluster of one.
 */
export function readState(file: string = STATE_FILE): BrokerState | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<BrokerState>;
    if (typeof parsed.brokers !== 'string' || typeof parsed.pid !== 'number') return undefined;
    if (Array.isArray(parsed.nodes) && parsed.nodes.length > 0) return parsed as BrokerState;
    const single = parsed as Omit<BrokerState, 'nodes'>;
    return {
      ...single,
      nodes: [{ nodeId: 1, pid: single.pid, port: single.port, controllerPort: single.controllerPort, dataDir: single.dataDir, logFile: single.logFile }],
    };
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
