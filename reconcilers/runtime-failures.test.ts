/**
 * The reconciler runtime when things go wrong, on real logs: a decision that throws
 * (retriable or terminal), backoff growth and cap, one failing key among good ones, commands
 * the fold keeps rejecting, and an append the Kafka broker refuses for good (a record larger
 * than the topic allows).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import pino from 'pino';
import { filter, firstValueFrom, throwError, timeout, type Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { LogError } from '../log/errors.ts';
import type { EventLog } from '../log/port.ts';
import { topicName } from '../log/port.ts';
import { createProjection, type Projection, type View } from '../projections/index.ts';
import type { Pod } from '../schemas/index.ts';
import { kafkaBrokers } from '../test/kafka-env.ts';
import { CommandsRejectedError, ReconcileError } from './errors.ts';
import { FailureStage, startReconciler, type Controller, type Decision, type ReconcileFailure, type ReconcilerRuntime, type RuntimeOptions } from './runtime.ts';
import { ADMIN, appendAndApply, LOG_ADAPTERS, podKey, seedCluster, type LogAdapter } from './testing.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const adapter = (name: LogAdapter['name']): LogAdapter => {
  const found = LOG_ADAPTERS.find((a) => a.name === name);
  if (!found) throw new Error(`no ${name} log adapter`);
  return found;
};

const pod = (name: string, annotations?: Record<string, string>): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', ...(annotations ? { annotations } : {}) },
  spec: { containers: [{ name: 'main', image: 'logplane/echo:1' }] },
});

const nameOf = (key: string): string => key.split('/')[2] ?? '';

interface Harness {
  readonly log: EventLog;
  readonly projection: Projection;
  start(controller: Controller, options?: Partial<RuntimeOptions>): Promise<ReconcilerRuntime>;
  /** Resolves once `condition` holds on the view, failing after `timeoutMs` with what it waited for. */
  waitUntil(what: string, condition: (view: View) => boolean, timeoutMs?: number): Promise<void>;
}

/** A seeded cluster (namespace `default`) on `adapter`'s log with a projection following it. */
const harness = async (name: LogAdapter['name'] | (() => Promise<{ log: EventLog; close(): Promise<void> }>)): Promise<Harness> => {
  const { log, close } = await (typeof name === 'string' ? adapter(name).open(1) : name());
  cleanups.push(close);
  const dir = mkdtempSync(join(tmpdir(), 'logplane-runtime-failures-'));
  const logger = pino({ level: 'silent' });
  const projection = createProjection({ dir, log, logger });
  cleanups.push(async () => {
    await projection.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await seedCluster(log, projection, []);
  return {
    log,
    projection,
    start: async (controller, options = {}) => {
      const runtime = await startReconciler({ controller, log, projection, logger, ...options });
      cleanups.push(() => runtime.stop());
      return runtime;
    },
    waitUntil: (what, condition, timeoutMs = 30_000) =>
      firstValueFrom(
        projection.cursor$.pipe(
          filter(() => condition(projection.view())),
          timeout({ first: timeoutMs, with: () => throwError(() => new Error(`timed out after ${timeoutMs} ms waiting until ${what}`)) }),
        ),
      ).then(() => undefined),
  };
};

/** The first value of `source$` that passes `predicate`, failing after `timeoutMs` with what it waited for. */
const first = <T,>(source$: Observable<T>, what: string, predicate: (value: T) => boolean, timeoutMs = 30_000): Promise<T> =>
  firstValueFrom(
    source$.pipe(
      filter(predicate),
      timeout({ first: timeoutMs, with: () => throwError(() => new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)) }),
    ),
  );

/** A controller over the given keys whose `decide` is `decide`, counting (and timing) every decision per key. */
const scripted = (
  keys: readonly string[] | (() => readonly string[]),
  decide: (key: string, attempt: number) => Decision,
  keysFor: Controller['keysFor'] = () => [],
  resyncMs?: number,
) => {
  const decisions = new Map<string, number[]>();
  const controller: Controller = {
    name: 'runtime-failures-test',
    keysFor,
    initialKeys: () => (typeof keys === 'function' ? keys() : keys),
    ...(resyncMs === undefined ? {} : { resyncMs }),
    decide: (key) => {
      const times = decisions.get(key) ?? [];
      times.push(performance.now());
      decisions.set(key, times);
      return decide(key, times.length);
    },
  };
  return { controller, count: (key: string) => decisions.get(key)?.length ?? 0, times: (key: string) => decisions.get(key) ?? [] };
};

const createPod = (key: string): Decision => ({ commands: [{ type: 'ObjectCreated', object: pod(nameOf(key)) }] });

describe('the reconciler runtime when a decision throws', () => {
  it('retries a failing key with exponential backoff, capped at the maximum', async () => {
    const h = await harness('embedded');
    const bad = podKey('bad');
    const test = scripted([bad], () => {
      throw new Error('decide failed');
    });
    const retries: number[] = [];
    const runtime = await h.start(test.controller, { backoff: { baseMs: 100, maxMs: 800 } });
    runtime.failures$.subscribe((failure) => retries.push(failure.retryInMs ?? -1));
    await first(runtime.rounds$, 'the 8th decision of the failing key', () => test.count(bad) >= 8, 20_000);

    const expected = [100, 200, 400, 800, 800, 800, 800];
    expect(retries.slice(0, 7)).toEqual(expected);
    const times = test.times(bad);
    const gaps = times.slice(1, 8).map((t, i) => t - (times[i] ?? 0));
    for (const [i, gap] of gaps.entries()) {
      const wanted = expected[i] ?? 0;
      // Never earlier than the backoff (a timer may fire ~1 ms early), and well below the
      // next step of the doubling, so both a missing backoff and a missing cap fail here.
      expect(gap, `gap ${i + 1}`).toBeGreaterThanOrEqual(wanted - 2);
      expect(gap, `gap ${i + 1}`).toBeLessThan(wanted * 1.5);
    }
  });

  it('records a terminal error once and drops the key, retries a retriable one until it succeeds', async () => {
    const h = await harness('embedded');
    const terminal = podKey('terminal');
    const flaky = podKey('flaky');
    let wakeTerminal = false;
    const test = scripted(
      [terminal, flaky],
      (key, attempt) => {
        if (key === terminal) {
          if (attempt === 1) throw new ReconcileError('the object can never be reconciled', false, { key });
          return createPod(key);
        }
        if (attempt <= 5) throw new ReconcileError('the cache is not warm yet', true, { key });
        return createPod(key);
      },
      // A change to the `wake` pod is a change the terminal key depends on.
      (change) => (wakeTerminal && change.key === podKey('wake') ? [terminal] : []),
    );
    const failures: ReconcileFailure[] = [];
    const runtime = await h.start(test.controller, { backoff: { baseMs: 20, maxMs: 200 } });
    runtime.failures$.subscribe((failure) => failures.push(failure));
    await h.waitUntil('the flaky pod exists', (view) => view.get(flaky) !== undefined);

    // flaky: retried 5 times with backoff (20+40+80+160+200 ms), then created; terminal: decided once in all that time.
    expect(test.count(flaky)).toBe(6);
    expect(failures.filter((f) => f.key === flaky).map((f) => f.retryInMs)).toEqual([20, 40, 80, 160, 200]);
    expect(test.count(terminal)).toBe(1);
    const terminalFailures = failures.filter((f) => f.key === terminal);
    expect(terminalFailures).toHaveLength(1);
    expect(terminalFailures[0]).toMatchObject({ stage: FailureStage.Decide, attempt: 1 });
    expect(terminalFailures[0]?.retryInMs).toBeUndefined();
    expect(terminalFailures[0]?.error).toBeInstanceOf(ReconcileError);
    expect(h.projection.view().get(terminal)).toBeUndefined();

    // Dropped is not forgotten: a change that maps to the key reconciles it again (level-based).
    wakeTerminal = true;
    await appendAndApply(h.log, h.projection, [{ body: { type: 'ObjectCreated', object: pod('wake') }, actor: ADMIN }]);
    await h.waitUntil('the terminal key was reconciled after a change', (view) => view.get(terminal) !== undefined);
    expect(test.count(terminal)).toBe(2);
  });

  it('one key whose decision throws does not hold back the other keys of its batch', async () => {
    const h = await harness('embedded');
    const [a, bad, c] = [podKey('a'), podKey('bad'), podKey('c')];
    const test = scripted([a, bad, c], (key) => {
      if (key === bad) throw new TypeError("Cannot read properties of undefined (reading 'spec')");
      return h.projection.view().get(key) ? { commands: [] } : createPod(key);
    });
    const rounds: { keys: number; commands: number }[] = [];
    const failures: ReconcileFailure[] = [];
    const runtime = await h.start(test.controller, { backoff: { baseMs: 20, maxMs: 40 } });
    runtime.rounds$.subscribe((round) => rounds.push(round));
    runtime.failures$.subscribe((failure) => failures.push(failure));
    await h.waitUntil('pods a and c exist', (view) => view.get(a) !== undefined && view.get(c) !== undefined);
    await first(runtime.rounds$, 'the 3rd decision of the failing key', () => test.count(bad) >= 3);

    // All three were decided in the first round; a and c's commands went out in it.
    expect(rounds[0]).toEqual({ keys: 3, commands: 2 });
    expect(test.count(a)).toBe(1);
    expect(test.count(c)).toBe(1);
    expect(new Set(failures.map((f) => f.key))).toEqual(new Set([bad]));
    expect(failures.every((f) => f.stage === FailureStage.Decide && f.retryInMs !== undefined)).toBe(true);
  });
});

describe('the reconciler runtime when the fold rejects its commands', () => {
  it('retries a key whose commands keep being rejected a bounded number of times, then records it and drops it', async () => {
    const h = await harness('embedded');
    // x exists, so creating it again is rejected (AlreadyExists) every time.
    await appendAndApply(h.log, h.projection, [{ body: { type: 'ObjectCreated', object: pod('x') }, actor: ADMIN }]);
    const [x, slow] = [podKey('x'), podKey('slow')];
    const test = scripted([x, slow], (key) => {
      if (key === slow) throw new Error('still failing');
      return createPod(key);
    });
    const failures: ReconcileFailure[] = [];
    const runtime = await h.start(test.controller, { backoff: { baseMs: 5, maxMs: 20 }, maxRejectedRetries: 3 });
    runtime.failures$.subscribe((failure) => failures.push(failure));
    // slow keeps failing on the same (capped) backoff: by its 15th decision x has had far
    // more than the time for another retry (≥ 5+10+20·12 ms against a 20 ms cap).
    await first(runtime.rounds$, 'the 15th decision of the slow key', () => test.count(slow) >= 15);

    expect(test.count(x)).toBe(4);
    const ofX = failures.filter((f) => f.key === x);
    expect(ofX.map((f) => f.stage)).toEqual([FailureStage.Rejected, FailureStage.Rejected, FailureStage.Rejected, FailureStage.Rejected]);
    expect(ofX.map((f) => f.retryInMs)).toEqual([5, 10, 20, undefined]);
    expect(ofX[3]?.error).toBeInstanceOf(CommandsRejectedError);
    expect(h.projection.view().list('Pod', 'default').map((p) => p.metadata.name)).toEqual(['x']);
  });

  it('never drops a key whose commands keep being rejected when the controller retries rejections forever (the scheduler)', async () => {
    const h = await harness('embedded');
    await appendAndApply(h.log, h.projection, [{ body: { type: 'ObjectCreated', object: pod('x') }, actor: ADMIN }]);
    const x = podKey('x');
    const test = scripted([x], createPod);
    const failures: ReconcileFailure[] = [];
    const runtime = await h.start({ ...test.controller, retriesRejectedForever: true }, { backoff: { baseMs: 5, maxMs: 20 }, maxRejectedRetries: 3 });
    runtime.failures$.subscribe((failure) => failures.push(failure));
    await first(runtime.rounds$, 'the 8th decision of x', () => test.count(x) >= 8);
    expect(failures.length).toBeGreaterThanOrEqual(7);
    expect(failures.every((f) => f.key === x && f.stage === FailureStage.Rejected && f.retryInMs !== undefined)).toBe(true);
    expect(failures.some((f) => f.error instanceof CommandsRejectedError)).toBe(false);
  });

  it('retries the key whose decision made a rejected command (not the command\'s key), and starts its backoff afresh after a success', async () => {
    const h = await harness('embedded');
    await appendAndApply(h.log, h.projection, [{ body: { type: 'ObjectCreated', object: pod('x') }, actor: ADMIN }]);
    // The owner key's decisions create pods, as a ReplicaSet's do: x (rejected: it exists) on
    // the 1st and 2nd decision, y (accepted) on the 3rd, x again on every later one.
    const owner = 'ReplicaSet/default/owner';
    const test = scripted(
      [owner],
      (_key, attempt) => createPod(attempt === 3 ? podKey('y') : podKey('x')),
      (change) => (change.key === podKey('retrigger') ? [owner] : []),
    );
    const failures: ReconcileFailure[] = [];
    const runtime = await h.start(test.controller, { backoff: { baseMs: 5, maxMs: 20 }, maxRejectedRetries: 3 });
    runtime.failures$.subscribe((failure) => failures.push(failure));
    await h.waitUntil('y exists', (view) => view.get(podKey('y')) !== undefined);
    expect(failures.map((f) => [f.key, f.stage, f.attempt, f.retryInMs])).toEqual([
      [owner, FailureStage.Rejected, 1, 5],
      [owner, FailureStage.Rejected, 2, 10],
    ]);
    expect(test.count(owner)).toBe(3);

    // A change wakes the owner; its rejections are counted from 1 again, up to the bound.
    const dropped = first(runtime.failures$, 'the owner dropped', (f) => f.retryInMs === undefined, 10_000);
    await appendAndApply(h.log, h.projection, [{ body: { type: 'ObjectCreated', object: pod('retrigger') }, actor: ADMIN }]);
    await dropped;
    expect(failures.slice(2).map((f) => [f.attempt, f.retryInMs])).toEqual([
      [1, 5],
      [2, 10],
      [3, 20],
      [4, undefined],
    ]);
    expect(test.count(owner)).toBe(7);
  });
});

describe('the reconciler runtime when appending fails (Kafka)', () => {
  /** Sets (or, with null, removes) one config entry of `topic` on the test broker. */
  const setTopicConfig = async (topic: string, name: string, value: string | null): Promise<void> => {
    const admin = new Kafka({ brokers: kafkaBrokers(), clientId: 'runtime-failures-test', logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const entries = value === null ? [] : [{ name, value }];
      // alterConfigs replaces the topic's dynamic config with `entries`.
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: topic, configEntries: entries }] });
    } finally {
      await admin.disconnect();
    }
  };

  it('owns a new assignment once a failed catch-up with the log succeeds on a later try', async () => {
    // The log's end cannot be read twice right after the assignment (a broker gone): the member
    // must keep trying, not leave its partitions owned by nobody until the next rebalance.
    let refusals = 2;
    const h = await harness(async () => {
      const { log, close } = await adapter('embedded').open(1);
      const flaky: EventLog = {
        ...log,
        endOffsets: (topic) => (refusals-- > 0 ? Promise.reject(new Error('the log end could not be read')) : log.endOffsets(topic)),
      };
      return { log: flaky, close };
    });
    const a = podKey('a');
    const test = scripted([a], createPod);
    await h.start(test.controller, { backoff: { baseMs: 5, maxMs: 20 } });
    await h.waitUntil('the assignment was owned and its keys resynced', (view) => view.get(a) !== undefined);
    expect(refusals).toBeLessThan(0);
    expect(test.count(a)).toBeGreaterThanOrEqual(1);
  });

  it('drops the keys of an append the broker refuses for good (record too large) until a change wakes them', async () => {
    const h = await harness('kafka');
    const desired = topicName(h.log.layout.cluster, 'desired');
    const big = podKey('big');
    let wake = false;
    const test = scripted(
      [big],
      (key) => (h.projection.view().get(key) ? { commands: [] } : { commands: [{ type: 'ObjectCreated', object: pod(nameOf(key), { note: 'x'.repeat(4096) }) }] }),
      (change) => (wake && change.key === podKey('wake') ? [big] : []),
    );
    await setTopicConfig(desired, 'max.message.bytes', '2048');
    const runtime = await h.start(test.controller, { backoff: { baseMs: 20, maxMs: 40 } });
    const failure = await first(runtime.failures$, 'a failed append', (f) => f.stage === FailureStage.Append, 45_000);
    expect(failure).toMatchObject({ key: big, attempt: 1 });
    expect(failure.retryInMs).toBeUndefined();
    expect((failure.error as LogError).retriable).toBe(false);

    await setTopicConfig(desired, 'max.message.bytes', null);
    wake = true;
    await appendAndApply(h.log, h.projection, [{ body: { type: 'ObjectCreated', object: pod('wake') }, actor: ADMIN }]);
    await h.waitUntil('the pod big was created after a change woke its key', (view) => view.get(big) !== undefined, 45_000);
    // Decided once when it failed and once when woken: the terminal failure was not retried.
    expect(test.count(big)).toBe(2);
  }, 120_000);
});
