/**
 * Rebuilding a projection from the log: reads every partition of the folded topics in
 * chunks up to a target position (default: the end at the start of the replay) and folds
 * them into a fresh directory. The fold is a pure function of the log, so the result's
 * state hash equals the live projection's at the same position.
 */
import type { EventLog, LogRecord } from '../log/port.ts';
import { FOLDED_TOPICS, type PositionVector } from './positions.ts';
import { createProjection } from './projection.ts';

export interface ReplayProgress {
  readonly applied: number;
  readonly total: number;
}

export interface ReplayResult {
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  readonly position: PositionVector;
  readonly stateHash: string;
}

export interface ReplayOptions {
  readonly log: EventLog;
  /** A directory that holds no projection yet. */
  readonly dir: string;
  /** Stop here (default: the end offsets when the replay starts). */
  readonly to?: PositionVector;
  /** Records per read (default 10,000). */
  readonly chunk?: number;
  /**
   * Records folded per transaction (default 100,000: several reads). A transaction writes
   * each object's heads once however many of its events it folds (see the store's
   * `dirtyHeads`), so fewer, larger transactions write fewer records.
   */
  readonly perTransaction?: number;
  readonly onProgress?: (progress: ReplayProgress) => void;
}

/** A projection being rebuilt from the log, which can be advanced in steps. */
export interface Replayer {
  /** Folds every record before `to` not folded yet; returns how many were applied. */
  advanceTo(to: PositionVector): Promise<number>;
  cursor(): PositionVector;
  stateHash(): string;
  close(): Promise<void>;
}

/** Opens a fresh projection in `options.dir` fed from `options.log` by explicit reads. */
export const createReplayer = (options: Omit<ReplayOptions, 'to'>): Replayer => {
  const { log } = options;
  const partitions = log.layout.partitions;
  const chunk = options.chunk ?? 10_000;
  const perTransaction = Math.max(chunk, options.perTransaction ?? 100_000);
  const projection = createProjection({ dir: options.dir, partitions });
  let applied = 0;
  return {
    advanceTo: async (to) => {
      const start = projection.cursor();
      const total = applied + FOLDED_TOPICS.reduce((sum, t) => sum + to[t].reduce((a, end, p) => a + Math.max(0, end - (start[t][p] ?? 0)), 0), 0);
      const before = applied;
      for (const topic of FOLDED_TOPICS) {
        for (let partition = 0; partition < partitions; partition++) {
          const end = to[topic][partition] ?? 0;
          for (let from = projection.cursor()[topic][partition] ?? 0; from < end; ) {
            // Reads up to `perTransaction` records, then folds them in one transaction.
            let records: LogRecord[] = [];
            while (from < end && records.length < perTransaction) {
              const read = await log.read(topic, partition, from, Math.min(end, from + chunk, from + perTransaction - records.length));
              if (read.length === 0) break;
              records = records.length === 0 ? read : records.concat(read);
              from = read[read.length - 1]!.offset + 1;
            }
            if (records.length === 0) break;
            projection.applyBatch({ topic, partition, records });
            applied += records.length;
            options.onProgress?.({ applied, total });
          }
        }
      }
      return applied - before;
    },
    cursor: () => projection.cursor(),
    stateHash: () => projection.stateHash(),
    close: () => projection.close(),
  };
};

/** Replays the log into `dir` and reports throughput and the resulting state hash. */
export const replayLog = async (options: ReplayOptions): Promise<ReplayResult> => {
  const { log } = options;
  const to: PositionVector = options.to ?? {
    desired: await log.endOffsets('desired'),
    observed: await log.endOffsets('observed'),
  };
  const replayer = createReplayer(options);
  const started = performance.now();
  try {
    const events = await replayer.advanceTo(to);
    const seconds = (performance.now() - started) / 1000;
    return {
      events,
      seconds,
      eventsPerSecond: events / Math.max(seconds, 1e-9),
      position: replayer.cursor(),
      stateHash: replayer.stateHash(),
    };
  } finally {
    await replayer.close();
  }
};
