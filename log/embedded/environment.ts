/**
 * One LMDB environment per directory per process, shared by every embedded log opened on
 * that directory, with a single writer queue that group-commits.
 *
 * - Sharing: `acquireEnvironment(dir)` returns the same environment to every caller in the
 *   process (reference counted); the last `release()` closes it. So two `createEmbeddedLog`
 *   calls on one directory see each other's appends live and share consumer groups.
 * - Exclusion: a lock file holding the pid keeps a second *process* out (the in-memory
 *   offset counters, live notifications and groups are per process). A lock left by a dead
 *   process is taken over.
 * - Writing: every write goes through `write(job)`. Jobs queued while a commit is in flight
 *   are prepared and written together as one LMDB transaction (`batch`), in queue order.
 *   The next group is written once the previous one committed, and groups settle (after
 *   their disk flush, for jobs that ask for it) in commit order. With lmdb-js's
 *   `overlappingSync` (its default on Linux) the writer thread syncs a transaction before
 *   it reports the commit, so a group is on disk by the time the next one is written.
 *   A job's writes are never split across transactions. A failed commit or flush breaks
 *   the environment: that group and every later write fail with `LogUnavailableError`
 *   (nothing after a failed commit is ever written, so offsets cannot get holes).
 *
 * lmdb-js's asynchronous `transaction(callback)` is deliberately not used: on this project's
 * Linux hosts its callbacks never run (the write thread's call back into JS never arrives),
 * and `transactionSync` makes `close()` hang afterwards. `batch` (executed on the write thread)
 * works and is the faster path anyway.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Database, type Key, open, type RootDatabase } from 'lmdb';
import { LogUnavailableError } from '../errors.ts';

/** One put (value set) or remove (value undefined) in a database of the environment. */
export interface WriteOp {
  readonly db: Database<Buffer, Key> | Database<unknown, Key>;
  readonly key: Key;
  readonly value?: unknown;
}

/** A unit of work for the writer queue. */
export interface WriteJob {
  /**
   * Computes the writes, right before they are handed to LMDB (so it sees the state left by
   * every job queued before it). Throwing fails this job only.
   */
  prepare(): readonly WriteOp[];
  /** When true the job completes only after the transaction is flushed to disk. */
  readonly flush: boolean;
  /** The writes are committed (and flushed if asked). */
  committed(): void;
  /**
   * None of the job's writes happened: `prepared` is false when its own `prepare` threw
   * (other jobs went on), true when the whole transaction failed (every job in it fails).
   */
  failed(error: Error, prepared: boolean): void;
}

/** A shared LMDB environment (see the module doc). */
export interface SharedEnvironment {
  readonly dir: string;
  readonly root: RootDatabase;
  /** Small bookkeeping values (layouts, end offsets), msgpack-encoded. */
  readonly meta: Database<unknown, Key>;
  /** The records database of a physical topic, keyed `[partition, offset]`. */
  recordsDb(physicalTopic: string): Database<Buffer, Key>;
  /** Per-process state attached to the environment, by name (e.g. one entry per cluster). */
  readonly attachments: Map<string, unknown>;
  /** Queues a job; its `committed` or `failed` callback reports the outcome. */
  write(job: WriteJob): void;
  /** Drops one reference; the last one drains the writer queue and closes the environment. */
  release(): Promise<void>;
}

/** Enough for 80+ clusters (3 topics each) in one directory. */
const MAX_DATABASES = 256;
/** Address space of the log's memory map (16 GiB; past it, lmdb-js grows the map). */
const MAP_SIZE = 2 ** 34;
const LOCK_FILE = 'logplane-embedded.lock';

interface Entry {
  readonly env: InternalEnvironment;
  refs: number;
}
const environments = new Map<string, Entry>();
const closing = new Map<string, Promise<void>>();

/** Opens (or joins) the environment of `dir`, creating the directory if needed. */
export const acquireEnvironment = async (dir: string): Promise<SharedEnvironment> => {
  const path = resolve(dir);
  await closing.get(path);
  const existing = environments.get(path);
  if (existing) {
    existing.refs += 1;
    return existing.env;
  }
  const entry: Entry = { env: openEnvironment(path, () => releaseEntry(path, entry)), refs: 1 };
  environments.set(path, entry);
  return entry.env;
};

const releaseEntry = async (path: string, entry: Entry): Promise<void> => {
  if (environments.get(path) !== entry || entry.refs === 0) return;
  entry.refs -= 1;
  if (entry.refs > 0) return;
  environments.delete(path);
  const done = entry.env.shutdown().finally(() => closing.delete(path));
  closing.set(path, done);
  await done;
};

interface InternalEnvironment extends SharedEnvironment {
  shutdown(): Promise<void>;
}

const openEnvironment = (path: string, release: () => Promise<void>): InternalEnvironment => {
  try {
    mkdirSync(path, { recursive: true });
  } catch (error) {
    throw new LogUnavailableError(`cannot create embedded log directory ${path}`, { dir: path }, { cause: error });
  }
  const lockPath = join(path, LOCK_FILE);
  takeLock(lockPath);
  let root: RootDatabase;
  try {
    // The map reserved up front (address space, not disk): started small, lmdb-js doubles it as
    // the file grows and keeps every previous map until close, each holding the pages read
    // through it (31 MiB resident for a 26 MiB log after 10,000 pods).
    root = open({ path, maxDbs: MAX_DATABASES, mapSize: MAP_SIZE });
  } catch (error) {
    unlinkSync(lockPath);
    throw new LogUnavailableError(`cannot open LMDB environment in ${path}`, { dir: path }, { cause: error });
  }
  const meta = root.openDB<unknown, Key>({ name: 'meta' });
  const records = new Map<string, Database<Buffer, Key>>();
  const recordsDb = (physicalTopic: string): Database<Buffer, Key> => {
    let db = records.get(physicalTopic);
    if (!db) {
      db = root.openDB<Buffer, Key>({ name: `records:${physicalTopic}`, encoding: 'binary', keyEncoding: 'ordered-binary' });
      records.set(physicalTopic, db);
    }
    return db;
  };

  const pending: WriteJob[] = [];
  /** True from the first queued job until the queue is empty again (checked synchronously). */
  let running = false;
  let idle: Promise<void> = Promise.resolve();
  /** Settlement of committed groups (after their flush), chained so groups settle in commit order. */
  let settling: Promise<void> = Promise.resolve();
  /** Set by the first failed commit or flush: every later write fails (reopen to recover). */
  let broken: LogUnavailableError | undefined;
  const breakWith = (error: unknown): LogUnavailableError =>
    (broken ??= new LogUnavailableError('embedded log write failed; reopen the log', { dir: path }, { cause: error }));

  const drain = async (): Promise<void> => {
    try {
      while (pending.length > 0) await writeGroup(pending.splice(0));
    } finally {
      running = false;
    }
  };

  /**
   * Prepares a group of jobs and commits them as one transaction. The next group is written
   * as soon as this one committed; this one settles once its flush is done (overlapping).
   */
  const writeGroup = async (group: readonly WriteJob[]): Promise<void> => {
    const prepared: { job: WriteJob; ops: readonly WriteOp[] }[] = [];
    for (const job of group) {
      if (broken) {
        job.failed(broken, false);
        continue;
      }
      try {
        prepared.push({ job, ops: job.prepare() });
      } catch (error) {
        job.failed(asError(error), false);
      }
    }
    if (prepared.every(({ ops }) => ops.length === 0)) {
      // An empty lmdb-js batch never resolves; there is nothing to commit anyway.
      for (const { job } of prepared) job.committed();
      return;
    }
    try {
      await root.batch(() => {
        for (const { ops } of prepared) {
          for (const op of ops) {
            if (op.value === undefined) void op.db.remove(op.key);
            else void (op.db as Database<unknown, Key>).put(op.key, op.value);
          }
        }
      });
    } catch (error) {
      const failure = breakWith(error);
      for (const { job } of prepared) job.failed(failure, true);
      return;
    }
    const flush = prepared.some(({ job }) => job.flush);
    settling = settling.then(async () => {
      try {
        if (flush) await root.flushed;
      } catch (error) {
        const failure = breakWith(error);
        for (const { job } of prepared) job.failed(failure, true);
        return;
      }
      for (const { job } of prepared) job.committed();
    });
  };

  const write = (job: WriteJob): void => {
    pending.push(job);
    if (running) return;
    running = true;
    idle = drain();
  };

  const shutdown = async (): Promise<void> => {
    while (running) await idle;
    await settling;
    try {
      await root.close();
    } finally {
      try {
        unlinkSync(lockPath);
      } catch {
        // already gone: nothing to release
      }
    }
  };

  return { dir: path, root, meta, recordsDb, attachments: new Map(), write, release, shutdown };
};

/** Creates the lock file with our pid, taking over one left by a dead process. */
const takeLock = (lockPath: string): void => {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new LogUnavailableError(`cannot create lock file ${lockPath}`, { lockPath }, { cause: error });
      }
    }
    const holder = Number.parseInt(readFileSync(lockPath, 'utf8'), 10);
    if (Number.isInteger(holder) && holder !== process.pid && isAlive(holder)) {
      throw new LogUnavailableError(`embedded log directory is in use by process ${holder}`, { lockPath, pid: holder });
    }
    unlinkSync(lockPath);
  }
  throw new LogUnavailableError(`cannot take lock file ${lockPath}`, { lockPath });
};

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));
