/**
 * The reconciler runtime (controller-runtime in RxJS): projection changes → keys →
 * predicates → a per-key deduplicating queue with backoff → `decide(key, view)` →
 * commands appended with the controller as actor and the triggering event as cause.
 *
 * Each controller kind is one consumer group. Every instance folds all partitions into
 * its own projection, but acts only on keys whose partition the group assigned to it.
 * After appending, a round waits until its own projection applied the commands, so the
 * next decision sees them (no second Pod from a retried decision).
 */
import type { Logger } from 'pino';
import { Subject, type Subscription } from 'rxjs';
import { partitionOfKey } from '../log/partitioner.ts';
import type { EventLog } from '../log/port.ts';
import { formatVector, type AppliedChange, type Projection, type View } from '../projections/index.ts';
import { appendEnvelopes, envelope } from '../projections/writer.ts';
import { commandHeaders, type GroupActor } from './actor-headers.ts';
import { CommandsRejectedError, isRetriable } from './errors.ts';
import type { CreateAdmission } from './create-admission.ts';
import { createInformer, type Informer } from './informer.ts';
import type { ControllerMetrics, RuntimeMetrics } from './runtime-metrics.ts';
import type { EventBody, EventEnvelope } from '../schemas/index.ts';

/** What a decision needs besides the view; pure inputs only, so decisions can be re-run. */
export interface DecideContext {
  /** Wall-clock time of the decision (epoch ms). */
  readonly now: number;
  /**
   * Only when `debug reconcile` re-runs a recorded decision: the commands its round appended
   * then. A controller whose decisions read observed figures that are not in the log (the
   * HPA's pod metrics) records them with its commands and takes them back from here.
   */
  readonly recorded?: readonly EventBody[];
  /**
   * The apiserver's create path for the objects the decision creates, when the composition
   * root gave one (see `create-admission.ts`): a controller that records Events admits its
   * creates with it before narrating, so a refused create is a FailedCreate Event.
   */
  readonly admitCreated?: CreateAdmission;
  /** False: the decision records no Events (a measurement switch: `npm run bench` prices them with it). */
  readonly recordEvents?: boolean;
}

/** The outcome of reconciling one key. */
export interface Decision {
  readonly commands: readonly EventBody[];
  /** Reconcile this key again after this long even if nothing changes. */
  readonly requeueAfterMs?: number;
}

/** A controller: pure mapping from changes to keys, and from (key, view) to commands. */
export interface Controller {
  readonly name: string;
  /** Keys to look at when `change` was applied (the object itself, its owner, ...). */
  keysFor(change: AppliedChange, view: View): readonly string[];
  /** Keys to look at when this instance gains partitions (a full resync of what it owns). */
  initialKeys(view: View): readonly string[];
  /** Decides one key. Must be a pure function of its arguments. */
  decide(key: string, view: View, context: DecideContext): Decision;
  /**
   * Decides several keys in one round, when decisions depend on each other (the
   * scheduler's capacity). Defaults to `decide` per key.
   */
  decideAll?(keys: readonly string[], view: View, context: DecideContext): ReadonlyMap<string, Decision>;
  /** Periodic full resync (ms), for time-based conditions. */
  readonly resyncMs?: number;
  /**
   * True: a key whose commands the fold keeps rejecting is retried with capped backoff for as
   * long as it is rejected, never dropped (kube's scheduler puts a pod whose binding failed back
   * in its queue with backoff, whatever the count: a pod waits for a node until it gets one).
   */
  readonly retriesRejectedForever?: boolean;
  /**
   * Called once by the runtime with the projection it reconciles on, so the controller can
   * keep a cache fed by the change feed (an informer's indexer, e.g. the scheduler's
   * NodeInfos); returns what detaches it. Decisions must be the same with or without it.
   */
  attach?(projection: Projection): () => void;
}

/** The outcome of deciding one key in a round: its decision, or what its decision threw. */
export type KeyOutcome =
  | { readonly type: 'decided'; readonly decision: Decision }
  | { readonly type: 'failed'; readonly error: unknown };

/**
 * Decides `keys` for one round, catching what a decision throws: per key, so one failing
 * key does not hold back the others of its batch; a controller's batch decision
 * (`decideAll`) decides its keys together, so when it throws, every key of the batch failed.
 */
export const decideRound = (
  controller: Controller,
  keys: readonly string[],
  view: View,
  context: DecideContext,
): ReadonlyMap<string, KeyOutcome> => {
  const outcomes = new Map<string, KeyOutcome>();
  if (controller.decideAll) {
    try {
      for (const [key, decision] of controller.decideAll(keys, view, context)) outcomes.set(key, { type: 'decided', decision });
    } catch (error) {
      for (const key of keys) outcomes.set(key, { type: 'failed', error });
    }
    return outcomes;
  }
  for (const key of keys) {
    try {
      outcomes.set(key, { type: 'decided', decision: controller.decide(key, view, context) });
    } catch (error) {
      outcomes.set(key, { type: 'failed', error });
    }
  }
  return outcomes;
};

/** Decides `keys` with the controller's batch decision if it has one. */
export const decideKeys = (
  controller: Controller,
  keys: readonly string[],
  view: View,
  context: DecideContext,
): ReadonlyMap<string, Decision> =>
  controller.decideAll
    ? controller.decideAll(keys, view, context)
    : new Map(keys.map((key) => [key, controller.decide(key, view, context)]));

export interface RuntimeOptions {
  readonly controller: Controller;
  readonly log: EventLog;
  readonly projection: Projection;
  readonly logger: Logger;
  /** Where the runtime's workqueue, round and consumer-group metrics go (`createRuntimeMetrics`); default nowhere. */
  readonly metrics?: RuntimeMetrics;
  /** Keys per round (default 1,000). */
  readonly batchSize?: number;
  /** Backoff of a failing key: base and cap in ms (default 100 ms → 30 s). */
  readonly backoff?: { readonly baseMs: number; readonly maxMs: number };
  /**
   * Retries of a key whose commands the fold keeps rejecting (default 8) before the key is
   * recorded as failed (`CommandsRejectedError`, terminal) and dropped until a change wakes it.
   */
  readonly maxRejectedRetries?: number;
  readonly now?: () => number;
}

/** Where a reconcile of one key failed. */
export const FailureStage = {
  /** `decide` (or `decideAll`) threw. */
  Decide: 'decide',
  /** Appending the commands, or waiting for the projection to apply them, failed. */
  Append: 'append',
  /** The fold rejected the key's commands. */
  Rejected: 'rejected',
} as const;
export type FailureStage = (typeof FailureStage)[keyof typeof FailureStage];

/** One failed reconcile of a key, as the runtime recorded it (logged, counted, and emitted on `failures$`). */
export interface ReconcileFailure {
  readonly key: string;
  readonly stage: FailureStage;
  readonly error: unknown;
  /** Consecutive failures of this key, this one included. */
  readonly attempt: number;
  /** The key is reconciled again after this long; undefined: it was dropped (a terminal error). */
  readonly retryInMs?: number;
}

export interface ReconcilerRuntime {
  readonly controller: Controller;
  /** Partitions of the desired topic this instance acts on. */
  owned(): ReadonlySet<number>;
  /** Emits after every round (for tests and metrics). */
  readonly rounds$: Subject<{ keys: number; commands: number }>;
  /** Emits every failed reconcile of a key, retried or dropped (for tests and debugging). */
  readonly failures$: Subject<ReconcileFailure>;
  stop(): Promise<void>;
}

export { createRuntimeMetrics, type RuntimeMetrics } from './runtime-metrics.ts';

/** The informer of each projection, shared by the runtimes on it (closed with the last). */
const informers = new WeakMap<Projection, { informer: Informer; users: number }>();

const acquireInformer = (projection: Projection): Informer => {
  const shared = informers.get(projection) ?? { informer: createInformer(projection), users: 0 };
  shared.users += 1;
  informers.set(projection, shared);
  return shared.informer;
};

const releaseInformer = (projection: Projection): void => {
  const shared = informers.get(projection);
  if (!shared || --shared.users > 0) return;
  shared.informer.close();
  informers.delete(projection);
};

/** Starts `controller` as a member of its consumer group and reconciles the keys it owns. */
export const startReconciler = async (options: RuntimeOptions): Promise<ReconcilerRuntime> => {
  const { controller, log, projection, logger } = options;
  const now = options.now ?? Date.now;
  const batchSize = options.batchSize ?? 1000;
  const backoff = options.backoff ?? { baseMs: 100, maxMs: 30_000 };
  const maxRejectedRetries = options.maxRejectedRetries ?? 8;
  const partitions = log.layout.partitions;
  const runtimeLogger = logger.child({ controller: controller.name });

  /** key → causation event id (latest change wins). */
  const queue = new Map<string, string | null>();
  /** key → when it was added to the queue (`performance.now()` ms); kept only with metrics. */
  const addedAt = new Map<string, number>();
  /** Counts and the round in progress, read by the metrics on scrape. */
  const stats = { adds: 0, retries: 0, processing: undefined as { keys: number; sinceMs: number } | undefined };
  /** Ids of the commands of the current round that no applied change has carried yet. */
  const unconfirmed = new Set<string>();
  const failures = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const rounds$ = new Subject<{ keys: number; commands: number }>();
  const failures$ = new Subject<ReconcileFailure>();
  let owned = new Set<number>();
  /**
   * Who acts (the group member and the generation of the assignment `owned` belongs to): every
   * command carries them as record headers, so a checker can judge from the log alone that no
   * key was acted on by two members in one generation.
   */
  const actor = { group: '', member: '', generation: -1 };
  let assignments = 0;
  let running = false;
  let stopped = false;
  let current: Promise<void> = Promise.resolve();

  const owns = (key: string): boolean => owned.has(partitionOfKey(key, partitions));

  const later = (ms: number, fn: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timer.unref();
    timers.add(timer);
  };

  /** At most one pending requeue per key: the earliest wins. */
  const requeues = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  const requeueAfter = (key: string, ms: number): void => {
    const at = Date.now() + ms;
    const pending = requeues.get(key);
    if (pending && pending.at <= at) return;
    if (pending) {
      clearTimeout(pending.timer);
      timers.delete(pending.timer);
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      requeues.delete(key);
      enqueue(key, null);
    }, ms);
    timer.unref();
    timers.add(timer);
    requeues.set(key, { at, timer });
  };

  const enqueue = (key: string, causationId: string | null): void => {
    if (stopped || !owns(key)) return;
    if (!queue.has(key)) {
      stats.adds += 1;
      if (metrics) addedAt.set(key, performance.now());
      queue.set(key, causationId);
    } else if (causationId) queue.set(key, causationId);
    kick();
  };

  const kick = (): void => {
    if (running || queue.size === 0 || stopped) return;
    running = true;
    current = new Promise<void>((resolve) => {
      setImmediate(() => {
        void round().finally(() => {
          running = false;
          resolve();
          kick();
        });
      });
    });
  };

  const round = async (): Promise<void> => {
    const batch = [...queue.entries()].slice(0, batchSize);
    for (const [key] of batch) queue.delete(key);
    const started = performance.now();
    if (metrics) {
      for (const [key] of batch) {
        const added = addedAt.get(key);
        addedAt.delete(key);
        if (added !== undefined) metrics.queued((started - added) / 1000);
      }
    }
    stats.processing = { keys: batch.length, sinceMs: started };
    // The informer holds the state at the cursor, read from memory (see informer.ts).
    const view = informer.view;
    const decidedAt = formatVector(projection.cursor());
    const decidedNow = now();
    /** The member and generation this round decides in (a later rebalance does not restamp its commands). */
    const decidedBy: GroupActor = { ...actor };
    const keys = batch.map(([key]) => key).filter(owns);
    const outcomes = decideRound(controller, keys, view, { now: decidedNow });
    const envelopes: EventEnvelope[] = [];
    /** The keys decided without error, with their causes: only they are confirmed or retried by what the append does. */
    const decided: [string, string | null][] = [];
    /** Command id → the key whose decision it came from (a ReplicaSet's key for the Pods it creates). */
    const decidedFor = new Map<string, string>();
    for (const [key, cause] of batch) {
      const outcome = outcomes.get(key);
      if (!outcome) continue;
      if (outcome.type === 'failed') {
        fail(key, cause, FailureStage.Decide, outcome.error);
        continue;
      }
      decided.push([key, cause]);
      for (const body of outcome.decision.commands) {
        const command = envelope(body, { actor: { type: 'controller', name: controller.name }, causationId: cause, decidedAt, time: decidedNow });
        decidedFor.set(command.id, key);
        envelopes.push(command);
      }
      if (outcome.decision.requeueAfterMs !== undefined) requeueAfter(key, outcome.decision.requeueAfterMs);
    }
    /** Commands the log acknowledged this round. */
    let appendedCommands = 0;
    try {
      if (envelopes.length > 0) {
        for (const e of envelopes) unconfirmed.add(e.id);
        const appended = await appendEnvelopes(log, envelopes, (event) => commandHeaders(decidedBy, decidedFor.get(event.id)));
        appendedCommands = appended.length;
        const target = projection.cursor();
        const wanted = {
          desired: [...target.desired],
          observed: [...target.observed],
        };
        for (const a of appended) {
          if (a.topic === 'heartbeats') continue;
          wanted[a.topic][a.partition] = Math.max(wanted[a.topic][a.partition] ?? 0, a.offset + 1);
        }
        await projection.waitFor(wanted);
        // A rejected command changed nothing, so no change will wake its key: retry it with
        // backoff (a binding refused for capacity the decision did not see, a stale version).
        // Only a command that left no change can have been rejected: its verdict is read from
        // the store (one record read per command was ~1 % of a 10,000-pod schedule run).
        const rejected = new Set<string>();
        for (const a of appended) {
          if (a.topic === 'heartbeats' || !unconfirmed.has(a.event.id)) continue;
          const key = decidedFor.get(a.event.id);
          if (key !== undefined && projection.store.eventAt(a.topic, a.partition, a.offset, a.event.id)?.verdict.type === 'rejected') rejected.add(key);
        }
        for (const [key, cause] of decided) {
          if (!rejected.has(key)) failures.delete(key);
          else if (controller.retriesRejectedForever || (failures.get(key) ?? 0) < maxRejectedRetries) fail(key, cause, FailureStage.Rejected, new Error(`the fold rejected the commands for ${key}`));
          else fail(key, cause, FailureStage.Rejected, new CommandsRejectedError(key, (failures.get(key) ?? 0) + 1));
        }
        return;
      }
      for (const [key] of decided) failures.delete(key);
    } catch (error) {
      runtimeLogger.warn({ keys: decided.length, error: String(error) }, 'appending commands failed');
      for (const [key, cause] of decided) fail(key, cause, FailureStage.Append, error, false);
    } finally {
      unconfirmed.clear();
      stats.processing = undefined;
      metrics?.round(batch.length, (performance.now() - started) / 1000, appendedCommands);
      rounds$.next({ keys: keys.length, commands: envelopes.length });
    }
  };

  /**
   * Records a failed reconcile of `key`: a retriable error retries the key with backoff
   * (base · 2^(attempt-1), capped), a terminal one (`retriable: false`) drops it until a
   * change wakes it again.
   */
  const fail = (key: string, cause: string | null, stage: FailureStage, error: unknown, logged = true): void => {
    metrics?.failed();
    const attempt = (failures.get(key) ?? 0) + 1;
    if (!isRetriable(error)) {
      failures.delete(key);
      runtimeLogger.error({ key, stage, attempt, error: String(error) }, 'reconcile failed with a terminal error; dropping the key');
      failures$.next({ key, stage, error, attempt });
      return;
    }
    failures.set(key, attempt);
    const delay = Math.min(backoff.maxMs, backoff.baseMs * 2 ** (attempt - 1));
    if (logged) runtimeLogger.warn({ key, stage, attempt, retryInMs: delay, error: String(error) }, 'reconcile failed; retrying the key with backoff');
    failures$.next({ key, stage, error, attempt, retryInMs: delay });
    if (stopped) return;
    stats.retries += 1;
    later(delay, () => enqueue(key, cause));
  };

  const catchUp = async (): Promise<void> => {
    const end = { desired: await log.endOffsets('desired'), observed: await log.endOffsets('observed') };
    await projection.waitFor(end, 120_000);
  };

  const resync = (): void => {
    const view = projection.view();
    for (const key of controller.initialKeys(view)) enqueue(key, null);
  };

  /**
   * Owns the partitions of assignment `sequence` once the projection has caught up with the
   * log's end. A catch-up that fails (a broker gone, the end not reached in time) is retried with
   * backoff for as long as the assignment stands: giving up would leave its partitions owned by
   * no member until the next rebalance, which may never come.
   */
  const takeOver = (sequence: number, next: Set<number>, attempt: number): void => {
    void catchUp().then(
      () => {
        if (stopped || sequence !== assignments) return;
        owned = next;
        resync();
      },
      (error: unknown) => {
        if (stopped || sequence !== assignments) return;
        const retryInMs = Math.min(backoff.maxMs, backoff.baseMs * 2 ** (attempt - 1));
        runtimeLogger.warn({ error: String(error), attempt, retryInMs }, 'could not catch up with the log after a reassignment; retrying');
        later(retryInMs, () => takeOver(sequence, next, attempt + 1));
      },
    );
  };

  const group = `${log.layout.cluster}.${controller.name}`;
  const membership = await log.joinGroup(group, ['desired']);
  actor.group = group;
  actor.member = membership.memberId;
  const metrics: ControllerMetrics | undefined = options.metrics?.register(controller.name, group, membership.memberId, {
    depth: () => queue.size,
    processing: () => stats.processing,
    get adds() {
      return stats.adds;
    },
    get retries() {
      return stats.retries;
    },
  });
  const informer = acquireInformer(projection);
  const detach = controller.attach?.(projection);
  const subscriptions: Subscription[] = [
    membership.assignments$.subscribe((assignment) => {
      metrics?.assigned(assignment);
      const next = new Set(assignment.partitions.desired ?? []);
      runtimeLogger.info({ partitions: [...next], generation: assignment.generation }, 'partitions assigned');
      // Keys of partitions just gained may have commands from their previous owner still in
      // flight: act on them only once this projection has caught up with the log's end.
      owned = new Set([...next].filter((p) => owned.has(p)));
      actor.generation = assignment.generation;
      actor.member = membership.memberId;
      for (const key of [...queue.keys()]) {
        if (owns(key)) continue;
        queue.delete(key);
        addedAt.delete(key);
      }
      takeOver(++assignments, next, 1);
    }),
    projection.changes$.subscribe((change) => {
      if (unconfirmed.size > 0) unconfirmed.delete(change.eventId);
      // Keys are mapped on the informer's view, read from memory: it subscribed to the feed
      // first, so it holds the state as of this change (as a kube informer hands each event to
      // its handlers after updating its store). Reading the live view went to LMDB (the
      // garbage collector's uid lookups, the endpoints' service lists) for every change.
      for (const key of controller.keysFor(change, informer.view)) enqueue(key, change.eventId);
    }),
  ];
  if (controller.resyncMs) {
    const every = controller.resyncMs;
    const tick = (): void => {
      resync();
      later(every, tick);
    };
    later(every, tick);
  }

  return {
    controller,
    owned: () => owned,
    rounds$,
    failures$,
    stop: async () => {
      stopped = true;
      for (const s of subscriptions) s.unsubscribe();
      detach?.();
      releaseInformer(projection);
      for (const t of timers) clearTimeout(t);
      timers.clear();
      queue.clear();
      addedAt.clear();
      await current;
      metrics?.close();
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await membership.leave();
      rounds$.complete();
      failures$.complete();
    },
  };
};
