/**
 * A projection: folds the desired and observed topics of a log into LMDB, one transaction
 * per delivered batch (state + cursor together), and tells readers what changed.
 */
import { BehaviorSubject, filter, firstValueFrom, map, merge, Subject, type Observable, type Subscription, timeout } from 'rxjs';
import pino, { type Logger } from 'pino';
import type { EventLog, LogRecord, RecordBatch } from '../log/port.ts';
import { decodeEvent, type KubeObject } from '../schemas/index.ts';
import { ProjectionError, ProjectionTimeoutError } from './errors.ts';
import { foldEvent, type ChangeType, type DesiredRecord, type FoldState, type StatusRecord } from './fold.ts';
import type { FoldMetrics } from './metrics.ts';
import { FOLDED_TOPICS, formatVector, type FoldedTopic, type PositionVector, vectorCovers } from './positions.ts';
import { LAYOUT_VERSION, MAX_PARTITIONS, openProjectionStore, topicNumber, type EventRecord, type ProjectionStore } from './store.ts';
import { historicalView, liveView, positionAtTime, type ObjectCache, type View } from './view.ts';

/** Past views kept for the pages of paginated lists (see `pastView`). */
const PAST_VIEWS_KEPT = 2;

/** A change the projection committed, with the object as clients now see it. */
export interface AppliedChange {
  readonly type: ChangeType;
  readonly key: string;
  /** The event that made the change (reconcilers use it as the causation of what they do next). */
  readonly eventId: string;
  /**
   * The object after the change (before it, for DELETED), deep-frozen: it is the very
   * object the live view's cache holds and every subscriber gets (subscribers such as the
   * reconcilers' informer keep it), so nobody may change it; copy it to change it.
   */
  readonly object: KubeObject;
  readonly topic: FoldedTopic;
  readonly partition: number;
  readonly offset: number;
}

export interface ProjectionOptions {
  /** LMDB directory of this projection (one per process). */
  readonly dir: string;
  /** The log to follow. Without one, the caller feeds batches through `applyBatch`. */
  readonly log?: EventLog;
  /** Partition count when there is no log to take it from (default 1). */
  readonly partitions?: number;
  readonly logger?: Logger;
  /** Where each folded batch's latency is recorded (`createFoldMetrics`); default nowhere. */
  readonly metrics?: FoldMetrics;
}

export interface Projection {
  readonly store: ProjectionStore;
  readonly partitions: number;
  /** The applied cursor: next offset per partition of each folded topic. */
  cursor(): PositionVector;
  readonly cursor$: Observable<PositionVector>;
  /** Changes, emitted after the transaction that made them committed. */
  readonly changes$: Observable<AppliedChange>;
  /** Records that could not be decoded; they are stored in the quarantine database too. */
  readonly quarantined$: Observable<{ topic: FoldedTopic; partition: number; offset: number; error: string }>;
  /** Resolves once the cursor covers `target`. */
  waitFor(target: PositionVector, timeoutMs?: number): Promise<void>;
  /** Resolves once the event at (topic, partition, offset) is applied, with its record. */
  waitForEvent(topic: FoldedTopic, partition: number, offset: number, eventId: string, timeoutMs?: number): Promise<EventRecord>;
  view(): View;
  viewAt(position: PositionVector): View;
  positionAtTime(time: number): PositionVector;
  /** Applies one batch of records (what the subscription does; exported for replay). */
  applyBatch(batch: RecordBatch): void;
  stateHash(): string;
  close(): Promise<void>;
}

/** Opens the projection in `dir` and, when given a log, starts folding it in from the stored cursor. */
export const createProjection = (options: ProjectionOptions): Projection => {
  const { log, dir } = options;
  const logger = options.logger ?? pino({ level: 'warn' }).child({ component: 'projection' });
  const partitions = log?.layout.partitions ?? options.partitions ?? 1;
  if (partitions > MAX_PARTITIONS) throw new ProjectionError(`a projection folds at most ${MAX_PARTITIONS} partitions, not ${partitions}`, false, { partitions });
  const store = openProjectionStore(dir, (reason) =>
    logger.warn(
      { dir, reason },
      reason.type === 'layout'
        ? `the projection directory has layout ${String(reason.found ?? 1)}, not ${LAYOUT_VERSION}: emptied, it is refolded from the log from offset 0`
        : 'the machine restarted while the projection had unflushed commits: emptied, it is refolded from the log from offset 0',
    ),
  );
  const cursor$ = new BehaviorSubject<PositionVector>(store.readCursor(partitions));
  const changes$ = new Subject<AppliedChange>();
  const quarantined$ = new Subject<{ topic: FoldedTopic; partition: number; offset: number; error: string }>();
  const stored = store.foldState(partitions);
  /** Current objects shared by the live views; every write of the fold drops its key. */
  const objectCache: ObjectCache = new Map();
  /** What the fold wrote for the current event, so its history entry needs no read-back. */
  let written: { desired?: DesiredRecord; status?: StatusRecord } = {};
  const state: FoldState = {
    ...stored,
    putDesired: (key, record) => {
      stored.putDesired(key, record);
      objectCache.delete(key);
      written.desired = record;
    },
    deleteDesired: (key) => {
      stored.deleteDesired(key);
      objectCache.delete(key);
    },
    putStatus: (key, record) => {
      stored.putStatus(key, record);
      objectCache.delete(key);
      written.status = record;
    },
  };

  /**
   * Reads the current objects for the change feed through the live view's cache: the object
   * a change leaves is built from the records the fold just wrote (kept frozen in the
   * store, no decode) and stays cached for readers of the live view.
   */
  const current = liveView(store, () => cursor$.value, objectCache);

  const applyRecord = (topic: FoldedTopic, record: LogRecord, pending: AppliedChange[]): void => {
    const topicIndex = topicNumber(topic);
    let event;
    try {
      event = decodeEvent(record.value);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      store.quarantine.putSync([topicIndex, record.partition, record.offset], {
        topic,
        partition: record.partition,
        offset: record.offset,
        error: message,
      });
      logger.error({ topic, partition: record.partition, offset: record.offset, error: message }, 'quarantined a record that cannot be decoded');
      quarantined$.next({ topic, partition: record.partition, offset: record.offset, error: message });
      return;
    }
    // The change feed needs the object as it was only for a deletion, which only a desired
    // ObjectDeleted or ObjectUpdated (its last finalizer removed), or their custom-object
    // twins, can make; and nothing at all when nobody listens (a replay).
    const feed = changes$.observed;
    const type = event.body.type;
    const mayDelete = topic === 'desired' && (type === 'ObjectDeleted' || type === 'ObjectUpdated' || type === 'CustomObjectDeleted' || type === 'CustomObjectUpdated');
    const before = feed && mayDelete ? current.get(event.key) : undefined;
    written = {};
    const outcome = foldEvent(state, event, topic, record.offset);
    const change = outcome.change;
    const desiredNow = topic === 'desired' && change && change.type !== 'DELETED' ? written.desired : undefined;
    const statusNow = topic === 'observed' && change ? written.status : undefined;
    store.recordEvent(topic, record.partition, record.offset, {
      key: event.key,
      time: event.time,
      id: event.id,
      type: event.body.type,
      actor: event.actor,
      causationId: event.causationId,
      correlationId: event.correlationId,
      decidedAt: event.decidedAt ?? null,
      verdict: outcome.verdict,
      change: change?.type ?? null,
      object: desiredNow?.object ?? null,
      status: statusNow ?? null,
      prev: -1,
      prevChange: -1,
    }, feed);
    if (!change || !feed) return;
    const object = change.type === 'DELETED' ? before : current.get(event.key);
    if (object) pending.push({ type: change.type, key: event.key, eventId: event.id, object, topic, partition: record.partition, offset: record.offset });
  };

  const applyBatch = (batch: RecordBatch): void => {
    const topic = batch.topic as FoldedTopic;
    if (!FOLDED_TOPICS.includes(topic)) return;
    const pending: AppliedChange[] = [];
    let next: PositionVector | undefined;
    const started = options.metrics ? performance.now() : 0;
    try {
      store.root.transactionSync(() => {
        const current = store.readCursor(partitions);
        let cursor = current[topic][batch.partition] ?? 0;
        for (const record of batch.records) {
          if (record.offset < cursor) continue; // already applied: exactly once
          store.snapshotBefore(topic, batch.partition, record.offset, cursor);
          applyRecord(topic, record, pending);
          cursor = record.offset + 1;
        }
        const updated = [...current[topic]];
        updated[batch.partition] = cursor;
        next = { ...current, [topic]: updated };
        store.writeCursor(next);
      });
    } catch (error) {
      // The transaction was aborted: what the store keeps in memory may describe its writes.
      store.forgetMemory();
      for (const change of pending) objectCache.delete(change.key);
      throw error;
    }
    options.metrics?.folded(topic, batch.records.length, (performance.now() - started) / 1000);
    if (next) cursor$.next(next);
    for (const change of pending) changes$.next(change);
  };

  /**
   * Following the log. A batch is folded in one transaction; when that transaction fails
   * (it was rolled back: state and cursor unchanged) or the log's reader fails with a
   * retriable error, the topic's subscription is dropped and started again from the stored
   * cursor after a backoff (100 ms doubling, at most 5 s), so nothing is lost or applied
   * twice. A terminal error (`retriable: false`), such as records the log no longer holds
   * below the cursor, stops the projection: it is logged, and `waitFor` rejects with it.
   */
  const subscriptions = new Map<FoldedTopic, Subscription>();
  const retryTimers = new Set<NodeJS.Timeout>();
  let closed = false;
  let failure: Error | undefined;
  const failure$ = new Subject<Error>();
  const fail = (topic: FoldedTopic, error: Error): void => {
    logger.error({ topic, error: String(error) }, 'projection stopped: a terminal error');
    failure ??= error;
    failure$.next(error);
    for (const subscription of subscriptions.values()) subscription.unsubscribe();
  };
  const follow = (followed: EventLog, topic: FoldedTopic, attempt: number): void => {
    if (closed || failure) return;
    const start = Object.fromEntries(cursor$.value[topic].map((offset, p) => [p, offset]));
    const retry = (error: unknown): void => {
      subscriptions.get(topic)?.unsubscribe();
      if (closed || failure) return;
      const asError = error instanceof Error ? error : new Error(String(error));
      if ((asError as { retriable?: unknown }).retriable === false) return fail(topic, asError);
      const delayMs = Math.min(100 * 2 ** attempt, 5_000);
      logger.warn({ topic, error: String(asError), attempt, delayMs }, 'projection: folding failed, following the log again from the stored cursor');
      const timer = setTimeout(() => {
        retryTimers.delete(timer);
        follow(followed, topic, attempt + 1);
      }, delayMs);
      retryTimers.add(timer);
    };
    let failed = false;
    const subscription = followed.subscribe(topic, start).subscribe({
      next: (batch) => {
        if (failed) return;
        try {
          const expected = cursor$.value[topic][batch.partition] ?? 0;
          const first = batch.records[0]?.offset;
          if (first !== undefined && first > expected) {
            throw new ProjectionError(
              `the log no longer holds ${topic}/${batch.partition} offsets ${expected}..${first - 1} (it delivered ${first} next): ` +
                'folding past them would lose their events; rebuild this projection from a log that holds them',
              false,
              { topic, partition: batch.partition, expected, delivered: first },
            );
          }
          applyBatch(batch);
          attempt = 0;
        } catch (error) {
          failed = true;
          retry(error);
        }
      },
      error: (error: unknown) => retry(error),
    });
    subscriptions.set(topic, subscription);
    if (failed) subscription.unsubscribe();
  };
  if (log) for (const topic of FOLDED_TOPICS) follow(log, topic, 0);

  const waitFor = async (target: PositionVector, timeoutMs = 30_000): Promise<void> => {
    if (vectorCovers(cursor$.value, target)) return;
    if (failure) throw failure;
    await firstValueFrom(
      merge(
        cursor$.pipe(filter((c) => vectorCovers(c, target))),
        failure$.pipe(
          map((error) => {
            throw error;
          }),
        ),
      ).pipe(
        timeout({
          first: timeoutMs,
          with: () => {
            throw new ProjectionTimeoutError(`projection did not reach position within ${timeoutMs} ms`, { timeoutMs });
          },
        }),
      ),
    );
  };

  const waitForEvent = async (
    topic: FoldedTopic,
    partition: number,
    offset: number,
    eventId: string,
    timeoutMs = 30_000,
  ): Promise<EventRecord> => {
    const target: PositionVector = {
      desired: Array.from({ length: partitions }, (_, p) => (topic === 'desired' && p === partition ? offset + 1 : 0)),
      observed: Array.from({ length: partitions }, (_, p) => (topic === 'observed' && p === partition ? offset + 1 : 0)),
    };
    await waitFor(target, timeoutMs);
    const record = store.eventAt(topic, partition, offset, eventId);
    if (!record) throw new ProjectionTimeoutError(`event ${eventId} at ${topic}/${partition}/${offset} was not found after applying it (was it quarantined?)`, { eventId });
    return record;
  };

  /**
   * The latest past views, by position: a past view lists by rolling each partition's snapshot
   * forward to its position (a pass over every object), so the pages of one paginated list
   * (kubectl's chunks of 500, all at the first page's position) share that pass instead of
   * each making it (150,000 pods in 300 pages). Only positions the projection has reached:
   * their state no longer changes.
   */
  const pastViews = new Map<string, View>();
  const pastView = (position: PositionVector): View => {
    if (!vectorCovers(cursor$.value, position)) return historicalView(store, position);
    const key = formatVector(position);
    const cached = pastViews.get(key);
    if (cached) {
      pastViews.delete(key);
      pastViews.set(key, cached);
      return cached;
    }
    const view = historicalView(store, position);
    pastViews.set(key, view);
    while (pastViews.size > PAST_VIEWS_KEPT) pastViews.delete(pastViews.keys().next().value as string);
    return view;
  };

  return {
    store,
    partitions,
    cursor: () => cursor$.value,
    cursor$: cursor$.asObservable(),
    changes$: changes$.asObservable(),
    quarantined$: quarantined$.asObservable(),
    waitFor,
    waitForEvent,
    view: () => liveView(store, () => cursor$.value, objectCache),
    viewAt: (position) => pastView(position),
    positionAtTime: (time) => positionAtTime(store, time, partitions),
    applyBatch,
    stateHash: () => store.stateHash(),
    close: async () => {
      closed = true;
      for (const timer of retryTimers) clearTimeout(timer);
      for (const s of subscriptions.values()) s.unsubscribe();
      failure$.complete();
      cursor$.complete();
      changes$.complete();
      quarantined$.complete();
      await store.close();
    },
  };
};
