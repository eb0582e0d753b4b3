/**
 * The process runtime's pod records (see process-runtime.ts): one append-only file of JSON
 * lines per runtime, `<dataDir>/pod-records.jsonl`, instead of a `record.json` per pod
 * written as a temporary file renamed over the last one.
 *
 * Each line is `{"uid":…,"record":{…}}` (the pod's record as of then) or
 * `{"uid":…,"removed":true}`; the last line of a uid wins. Appending creates no file: on this
 * kind of machine every file created costs 0.1–1 ms of kernel time, more the more files were
 * deleted in the last minutes (ext4 without a journal skips recently deleted inodes one by
 * one), and a record file per status change also deleted one each time. Lines waiting while a
 * write is under way leave together in the next write, so a burst of pod starts costs a few
 * writes, not one file per pod.
 *
 * A write that a crash cut short leaves a partial last line, which reading skips (that
 * record's previous line stands, as a lost rename did before). The file is rewritten with only
 * the live records (a temporary file renamed over it) when it is opened and when it has grown
 * past four times their size.
 *
 * Records of an older agent, `<dataDir>/pods/<uid>/record.json`, are read when the file is
 * opened, moved into it and deleted.
 */
import { closeSync, existsSync, openSync, readFileSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { type FileHandle, open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';

/** Where a runtime with data directory `dataDir` keeps its pod records. */
export const podRecordsFile = (dataDir: string): string => join(dataDir, 'pod-records.jsonl');

/** Grows to at least this size before it is compacted. */
const MIN_COMPACT_BYTES = 1024 * 1024;

type Line = { readonly uid: string; readonly record: unknown } | { readonly uid: string; readonly removed: true };

export interface PodRecordStore {
  /** The records read when the store was opened, by pod uid (each parsed from JSON, not checked). */
  readonly restored: ReadonlyMap<string, unknown>;
  /** Appends `uid`'s record (its JSON text); resolves once it is written (rejects if the write failed). */
  write(uid: string, recordJson: string): Promise<void>;
  /** Appends that `uid` has no record any more; resolves once it is written. */
  remove(uid: string): Promise<void>;
  /** Resolves once every line appended so far is written; then closes the file (a later line opens it again). */
  close(): Promise<void>;
}

/** The live lines of the file's text, each uid's last; partial or unparsable lines are skipped and counted. */
function parseLines(text: string): { live: Map<string, string>; skipped: number } {
  const live = new Map<string, string>();
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let parsed: Line;
    try {
      parsed = JSON.parse(line) as Line;
    } catch {
      skipped += 1;
      continue;
    }
    if (typeof parsed !== 'object' || parsed === null || typeof parsed.uid !== 'string') {
      skipped += 1;
      continue;
    }
    if ('removed' in parsed) live.delete(parsed.uid);
    else live.set(parsed.uid, line);
  }
  return { live, skipped };
}

/** Reads the records in `dataDir` (for tests and tools): by uid, each parsed. */
export function readPodRecords(dataDir: string): Map<string, unknown> {
  const file = podRecordsFile(dataDir);
  const { live } = parseLines(existsSync(file) ? readFileSync(file, 'utf8') : '');
  return new Map([...live].map(([uid, line]) => [uid, (JSON.parse(line) as { record: unknown }).record]));
}

const recordLine = (uid: string, recordJson: string): string => `{"uid":${JSON.stringify(uid)},"record":${recordJson}}\n`;
const removedLine = (uid: string): string => `{"uid":${JSON.stringify(uid)},"removed":true}\n`;

/**
 * Opens (synchronously: once, when the runtime starts) the records of `dataDir`, moving in
 * those of an older agent in `podsDir`, and rewrites the file with the live records only.
 */
export function openPodRecords(dataDir: string, podsDir: string, logger: Logger): PodRecordStore {
  const file = podRecordsFile(dataDir);
  const { live, skipped } = parseLines(existsSync(file) ? readFileSync(file, 'utf8') : '');
  if (skipped > 0) logger.warn({ file, skipped }, 'skipped unreadable pod record lines (a write cut short by a crash?)');

  // An older agent's record files: moved in (they are deleted once the file is rewritten below).
  const legacy: string[] = [];
  for (const entry of existsSync(podsDir) ? readdirSync(podsDir) : []) {
    const recordFile = join(podsDir, entry, 'record.json');
    if (!existsSync(recordFile)) continue;
    legacy.push(recordFile);
    const uid = decodeURIComponent(entry);
    if (live.has(uid)) continue;
    let recordJson: string;
    try {
      recordJson = JSON.stringify(JSON.parse(readFileSync(recordFile, 'utf8')));
    } catch (err) {
      logger.error({ err, file: recordFile }, 'unreadable pod record; removing it (its processes, if any, cannot be identified)');
      continue;
    }
    live.set(uid, recordLine(uid, recordJson).slice(0, -1));
  }

  const restored = new Map([...live].map(([uid, line]) => [uid, (JSON.parse(line) as { record: unknown }).record]));
  const compacted = [...live.values()].map((line) => `${line}\n`).join('');
  const liveBytes = Buffer.byteLength(compacted);
  const fd = openSync(`${file}.tmp`, 'w', 0o600);
  try {
    writeSync(fd, compacted);
  } finally {
    closeSync(fd);
  }
  renameSync(`${file}.tmp`, file);
  for (const recordFile of legacy) rmSync(recordFile, { force: true });
  return createStore(file, live, liveBytes, restored, logger);
}

function createStore(file: string, live: Map<string, string>, initialLiveBytes: number, restored: ReadonlyMap<string, unknown>, logger: Logger): PodRecordStore {
  let liveBytes = initialLiveBytes;
  let fileBytes = initialLiveBytes;
  let handle: FileHandle | undefined;
  let closing = false;
  /** Lines waiting for the next write, with what to settle once it is done. */
  let queue: { uid: string; line: string; removed: boolean; resolve: () => void; reject: (err: unknown) => void }[] = [];
  let draining: Promise<void> | undefined;
  /** A write failed, maybe halfway through a line: the next one starts on a line of its own. */
  let torn = false;

  function account(uid: string, line: string, removed: boolean): void {
    const previous = live.get(uid);
    if (previous !== undefined) liveBytes -= Buffer.byteLength(previous) + 1;
    if (removed) {
      live.delete(uid);
    } else {
      live.set(uid, line.slice(0, -1));
      liveBytes += Buffer.byteLength(line);
    }
  }

  async function compact(): Promise<void> {
    const text = [...live.values()].map((line) => `${line}\n`).join('');
    const tmp = await open(`${file}.tmp`, 'w', 0o600);
    try {
      await tmp.writeFile(text);
    } finally {
      await tmp.close();
    }
    await rename(`${file}.tmp`, file);
    await handle?.close();
    handle = undefined;
    fileBytes = Buffer.byteLength(text);
  }

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      const text = (torn ? '\n' : '') + batch.map((entry) => entry.line).join('');
      try {
        handle ??= await open(file, 'a', 0o600);
        await handle.appendFile(text);
        torn = false;
        fileBytes += Buffer.byteLength(text);
        for (const entry of batch) account(entry.uid, entry.line, entry.removed);
      } catch (err) {
        torn = true;
        for (const entry of batch) entry.reject(err);
        continue;
      }
      for (const entry of batch) entry.resolve();
      if (fileBytes > MIN_COMPACT_BYTES && fileBytes > 4 * liveBytes) {
        try {
          await compact();
        } catch (err) {
          logger.warn({ err, file }, 'cannot compact the pod records (it keeps growing until the next try)');
        }
      }
    }
    if (closing && handle !== undefined) {
      const closed = handle;
      handle = undefined;
      await closed.close().catch((err: unknown) => logger.warn({ err, file }, 'cannot close the pod records file'));
    }
  }

  /** Starts writing what is queued unless a write is under way (which picks it up). */
  function kick(): Promise<void> {
    draining ??= drain().finally(() => {
      draining = undefined;
      // Queued while the file was being closed.
      if (queue.length > 0) void kick();
    });
    return draining;
  }

  function append(uid: string, line: string, removed: boolean): Promise<void> {
    closing = false;
    const written = new Promise<void>((resolve, reject) => queue.push({ uid, line, removed, resolve, reject }));
    void kick();
    return written;
  }

  return {
    restored,
    write: (uid, recordJson) => append(uid, recordLine(uid, recordJson), false),
    remove: (uid) => append(uid, removedLine(uid), true),
    close() {
      closing = true;
      return kick();
    },
  };
}
