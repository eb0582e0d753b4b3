/**
 * replay and time travel, over one long history (see `history.ts`):
 *
 * - replay: `replayLog` folds the whole log into a fresh projection directory; events/s.
 *   In the same run, the raw limit of this machine over the same records: read them from
 *   the log in the same chunks, decode each event and put it into LMDB (one put per event,
 *   one transaction per chunk), nothing else; measured before and after the replay, the
 *   faster counts. The ratio replay/raw is the figure with a target.
 * - time travel, on the replayed projection: `objectAt` (one object at a position) and a
 *   whole-cluster view at a position (`viewAt(p).list` of every kind) latency p50/p99.
 */
import { join } from 'node:path';
import { open } from 'lmdb';
import { createEmbeddedLog } from '../../log/embedded/index.ts';
import { createKafkaLog } from '../../log/kafka/index.ts';
import type { EventLog } from '../../log/port.ts';
import { createProjection, FOLDED_TOPICS, objectAt, replayLog, type ReplayResult } from '../../projections/index.ts';
import { decodeEvent, KIND_VALUES } from '../../schemas/index.ts';
import { buildHistory, type BuiltHistory } from '../history.ts';
import { benchKafkaCluster } from '../kafka-clusters.ts';
import {
  atLeast,
  atMost,
  plain,
  quantile,
  round,
  type ScenarioContext,
  type ScenarioResult,
  withTempDir,
} from '../support.ts';

interface HistorySize {
  readonly pods: number;
  readonly rounds: number;
  readonly nodes: number;
}

const sizeFor = (context: ScenarioContext): HistorySize => {
  if (context.quick) return { pods: 1_000, rounds: 30, nodes: 10 };
  return { pods: 10_000, rounds: 100, nodes: 100 };
};

const openLog = async (context: ScenarioContext, dir: string): Promise<EventLog> =>
  context.log === 'kafka'
    ? createKafkaLog({ brokers: [...context.brokers], cluster: benchKafkaCluster(), partitions: 1, logLevel: 'error' })
    : createEmbeddedLog({ dir: join(dir, 'log'), cluster: 'bench', partitions: 1 });

/** Decode + one LMDB put per event over the log's records: the machine's limit for a fold. */
const rawLimit = async (log: EventLog, dir: string, chunk: number): Promise<{ events: number; seconds: number }> => {
  // Opened as the projection opens its store on Linux (openProjectionStore): commits are not
  // flushed one by one (noSync; the projection guards that with a boot-id mark), so the limit
  // does not include disk flushes the replay does not make.
  const root = open({ path: dir, maxDbs: 4, compression: false, commitDelay: 0, noSync: true, mapSize: 2 ** 34 });
  // Encoded as the projection encodes its databases (msgpack with shared structures).
  const db = root.openDB<unknown, string>({ name: 'events', encoding: 'msgpack', sharedStructuresKey: Symbol.for('structures') });
  const started = performance.now();
  let events = 0;
  try {
    for (const topic of FOLDED_TOPICS) {
      const [end = 0] = await log.endOffsets(topic);
      for (let from = 0; from < end; ) {
        const records = await log.read(topic, 0, from, Math.min(end, from + chunk));
        if (records.length === 0) break;
        root.transactionSync(() => {
          for (const record of records) {
            const event = decodeEvent(record.value);
            db.putSync(event.key, event);
          }
        });
        events += records.length;
        from = records[records.length - 1]!.offset + 1;
      }
    }
    return { events, seconds: (performance.now() - started) / 1000 };
  } finally {
    await root.close();
  }
};

/** Latencies (ms) of `run` over `count` samples. */
const sample = (count: number, run: (i: number) => void): number[] => {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    run(i);
    latencies.push(performance.now() - started);
  }
  return latencies;
};

/** A small deterministic generator, so every run queries the same keys and positions. */
const lcg = (seed: number) => {
  let state = seed >>> 0;
  return (n: number): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
};

export const replayAndTimeTravel = async (context: ScenarioContext, wanted: ReadonlySet<'replay' | 'timetravel'>): Promise<ScenarioResult[]> => {
  const size = sizeFor(context);
  return withTempDir('replay', async (dir) => {
    const log = await openLog(context, dir);
    try {
      const history: BuiltHistory = await buildHistory(log, { ...size, progress: context.progress });
      context.progress(`replay/${context.log}: ${history.events} events appended in ${history.seconds.toFixed(1)} s`);
      const chunk = 10_000;
      // The raw limit is measured before and after the replay and the faster run counts: right
      // after the history is appended the log may still be busy with it (Kafka's broker, the
      // embedded log's write-back), which would flatter the ratio.
      const rawBefore = await rawLimit(log, join(dir, 'raw-before'), chunk);
      context.progress(`replay/${context.log}: raw decode + put ${Math.round(rawBefore.events / rawBefore.seconds)} events/s`);
      let lastReport = 0;
      const replayed: ReplayResult = await replayLog({
        log,
        dir: join(dir, 'projection'),
        chunk,
        onProgress: ({ applied, total }) => {
          if (applied - lastReport >= total / 5) {
            lastReport = applied;
            context.progress(`replay/${context.log}: ${applied}/${total}`);
          }
        },
      });
      const rawAfter = await rawLimit(log, join(dir, 'raw-after'), chunk);
      context.progress(`replay/${context.log}: raw decode + put, after the replay, ${Math.round(rawAfter.events / rawAfter.seconds)} events/s`);
      const results: ScenarioResult[] = [];
      const rawRates = [rawBefore, rawAfter].map((raw) => round(raw.events / raw.seconds));
      const setup = { ...size, events: history.events, partitions: 1, chunk, buildSeconds: round(history.seconds, 1), rawBefore: rawRates[0]!, rawAfter: rawRates[1]! };
      const rawPerSecond = Math.max(...rawRates);
      if (wanted.has('replay')) {
        const ratio = replayed.eventsPerSecond / rawPerSecond;
        results.push({
          scenario: 'replay',
          log: context.log,
          figures: [
            plain('replay into a fresh projection', round(replayed.eventsPerSecond), 'events/s'),
            plain('raw limit: read + decode + 1 LMDB put per event (faster of before and after the replay)', round(rawPerSecond), 'events/s'),
            atLeast('replay / raw limit', round(ratio * 100, 1), '%', 70),
            plain('replay time', round(replayed.seconds, 1), 's'),
          ],
          setup,
          notes: [
            `${history.events.toLocaleString('en-US')} events: ${size.pods} pods × ${size.rounds} events each (create, bind, status reports, a spec update every 10th), ${size.nodes} nodes, 1 namespace.`,
          ],
        });
      }
      if (wanted.has('timetravel')) {
        const projection = createProjection({ dir: join(dir, 'projection'), partitions: 1 });
        try {
          const random = lcg(42);
          const rounds = history.roundEnds.length;
          const objectSamples = context.quick ? 1_000 : 10_000;
          const objectLatencies = sample(objectSamples, () => {
            const key = history.podKeys[random(history.podKeys.length)]!;
            const position = history.roundEnds[random(rounds)]!;
            objectAt(projection.store, key, position);
          });
          const clusterSamples = context.quick ? 5 : 20;
          let objects = 0;
          const clusterLatencies = sample(clusterSamples, () => {
            // Late enough that every pod exists: the whole cluster is `pods` + nodes + 1 objects.
            const position = history.roundEnds[Math.floor(rounds / 2) + random(Math.ceil(rounds / 2))]!;
            const view = projection.viewAt(position);
            objects = KIND_VALUES.reduce((sum, kind) => sum + view.list(kind).length, 0);
          });
          results.push({
            scenario: 'timetravel',
            log: context.log,
            figures: [
              atMost('object at position p50', round(quantile(objectLatencies, 0.5), 3), 'ms', 1),
              atMost('object at position p99', round(quantile(objectLatencies, 0.99), 3), 'ms', 1),
              plain('whole cluster at position p50', round(quantile(clusterLatencies, 0.5), 1), 'ms'),
              atMost(`whole cluster at position p99 (${objects} objects)`, round(quantile(clusterLatencies, 0.99), 1), 'ms', 100),
            ],
            setup: { ...setup, objectSamples, clusterSamples, objects },
            notes: [
              'Reads the replayed projection (LMDB history index); the log adapter does not take part, so this figure is the same for both logs.',
              'Positions are the ends of random rounds of the history; keys are random pods.',
            ],
          });
        } finally {
          await projection.close();
        }
      }
      return results;
    } finally {
      await log.close();
    }
  });
};
