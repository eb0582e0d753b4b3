/**
 * Properties of the fold over random histories (fast-check, seeded and bounded):
 * several writers' creates, updates, binds and deletes of Pods, Nodes and Services,
 * appended in a random interleaving to a log of 1 or 3 partitions.
 *
 * - Any two deliveries that keep each partition's order give the same state (the fold's
 *   verdicts depend only on per-partition order, DESIGN invariant 2).
 * - No pod is ever bound twice or moved, and no node is ever charged past its allocatable.
 * - On the real embedded log with a real LMDB projection, a replay from offset 0 gives the
 *   live projection's state hash.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../log/embedded/index.ts';
import { partitionKeyOf, partitionOfKey } from '../log/partitioner.ts';
import { encodeEvent, type EventBody, type EventEnvelope, type KubeObject, type Pod } from '../schemas/index.ts';
import { foldEvent } from './fold.ts';
import type { FoldedTopic } from './positions.ts';
import { createProjection } from './projection.ts';
import { replayLog } from './replay.ts';
import { makeEvent, memoryFoldState, projectionContents, type FoldContents } from './testing.ts';
import { keyOfBody } from './writer.ts';

const NODES = ['n0', 'n1'] as const;
const PODS = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'] as const;
const SERVICES = ['s0', 's1', 's2'] as const;

const node = (name: string): KubeObject => {
  const resources = { cpu: '1', memory: '1Gi', pods: '3' };
  return { apiVersion: 'v1', kind: 'Node', metadata: { name }, status: { capacity: resources, allocatable: resources } };
};
const pod = (name: string, cpuMilli: number, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels },
  spec: { containers: [{ name: 'main', image: 'busybox', resources: { requests: { cpu: `${cpuMilli}m`, memory: '64Mi' } } }] },
});
const service = (name: string, clusterIP: string | undefined): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { ports: [{ port: 80 }], ...(clusterIP ? { clusterIP } : {}) },
});
const deleted = (kind: 'Pod' | 'Service' | 'Node', name: string): EventBody => ({
  type: 'ObjectDeleted',
  kind,
  namespace: kind === 'Node' ? null : 'default',
  name,
  expectedResourceVersion: null,
  uid: null,
  propagationPolicy: null,
  gracePeriodSeconds: 0,
});

/** One writer's operation; the interleaving of several writers' operations is the history. */
const operation: fc.Arbitrary<EventBody> = fc.oneof(
  fc.record({ name: fc.constantFrom(...NODES) }).map(({ name }): EventBody => ({ type: 'ObjectCreated', object: node(name) })),
  fc.record({ name: fc.constantFrom(...PODS), cpu: fc.integer({ min: 100, max: 700 }) }).map(({ name, cpu }): EventBody => ({ type: 'ObjectCreated', object: pod(name, cpu) })),
  fc.record({ name: fc.constantFrom(...PODS), cpu: fc.integer({ min: 100, max: 700 }), label: fc.constantFrom('a', 'b') }).map(
    ({ name, cpu, label }): EventBody => ({ type: 'ObjectUpdated', object: pod(name, cpu, { v: label }), expectedResourceVersion: null, subresource: null }),
  ),
  fc.record({ name: fc.constantFrom(...PODS), to: fc.constantFrom(...NODES) }).map(
    ({ name, to }): EventBody => ({
      type: 'PodBound',
      namespace: 'default',
      name,
      node: to,
      expectedPodVersion: null,
      rationale: { filtered: [], scores: [], feasibleNodes: 1, totalNodes: NODES.length },
    }),
  ),
  fc.constantFrom(...PODS).map((name) => deleted('Pod', name)),
  fc.record({ name: fc.constantFrom(...SERVICES), ip: fc.constantFrom(undefined, '127.96.0.1', '127.96.0.2') }).map(
    ({ name, ip }): EventBody => ({ type: 'ObjectCreated', object: service(name, ip) }),
  ),
  fc.constantFrom(...SERVICES).map((name) => deleted('Service', name)),
);

const namespaceEvent = (): EventEnvelope =>
  makeEvent('Namespace//default', { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' }, status: { phase: 'Active' } } });

/** Several writers' operations, interleaved: each writer's order kept, the merge random. */
const history = fc
  .array(fc.array(operation, { minLength: 1, maxLength: 12 }), { minLength: 2, maxLength: 3 })
  .chain((writers) => {
    const total = writers.reduce((n, ops) => n + ops.length, 0);
    return fc.array(fc.nat({ max: writers.length - 1 }), { minLength: total * 2, maxLength: total * 2 }).map((picks) => {
      const cursors = writers.map(() => 0);
      const merged: EventEnvelope[] = [namespaceEvent()];
      for (const pick of picks) {
        for (let attempt = 0; attempt < writers.length; attempt++) {
          const writer = (pick + attempt) % writers.length;
          const op = writers[writer]![cursors[writer]!];
          if (op === undefined) continue;
          cursors[writer]! += 1;
          merged.push(makeEvent(keyOfBody(op), op));
          break;
        }
      }
      return merged;
    });
  });

/**
 * Folds `events` in the given delivery order, with offsets counted per partition. The fold
 * takes an event's object over (it may freeze it), so each delivery folds copies, as each
 * projection decodes its own.
 */
const foldInOrder = (events: readonly EventEnvelope[], partitions: number) => {
  const state = memoryFoldState(partitions);
  const next = new Map<number, number>();
  const verdicts = new Map<string, string>();
  for (const event of events) {
    const partition = partitionOfKey(event.key, partitions);
    const offset = next.get(partition) ?? 0;
    next.set(partition, offset + 1);
    verdicts.set(event.id, foldEvent(state, structuredClone(event), 'desired', offset).verdict.type);
  }
  return { contents: state.contents(), verdicts };
};

/** Another delivery of the same log: each partition's order kept, partitions merged by `picks`. */
const redeliver = (events: readonly EventEnvelope[], partitions: number, picks: readonly number[]): EventEnvelope[] => {
  const queues = Array.from({ length: partitions }, (_, p) => events.filter((e) => partitionOfKey(e.key, partitions) === p));
  const out: EventEnvelope[] = [];
  let i = 0;
  while (queues.some((q) => q.length > 0)) {
    const start = picks[i++ % picks.length] ?? 0;
    for (let k = 0; k < partitions; k++) {
      const queue = queues[(start + k) % partitions]!;
      if (queue.length > 0) {
        out.push(queue.shift()!);
        break;
      }
    }
  }
  return out;
};

/** Checks that no node is charged past its allocatable and no pod counts twice. */
const assertNoOvercommit = (contents: FoldContents): void => {
  const pods = Object.values(contents.desired).map((r) => r.object).filter((o): o is Pod => o.kind === 'Pod');
  for (const name of NODES) {
    const usage = contents.usage[name];
    if (!usage) continue;
    expect(usage.cpuMilli).toBeLessThanOrEqual(1000);
    expect(usage.pods).toBeLessThanOrEqual(3);
    const bound = pods.filter((p) => p.spec.nodeName === name && !p.metadata.deletionTimestamp);
    // The generated requests are all whole millicores ("250m").
    const requested = bound.reduce((sum, p) => sum + Number(String(p.spec.containers[0]?.resources?.requests?.['cpu'] ?? '0m').slice(0, -1)), 0);
    expect(requested).toBeLessThanOrEqual(1000);
  }
};

describe('fold properties over random histories', () => {
  it.each([1, 3])('with %i partition(s): every delivery that keeps partition order gives the same state, with no pod bound twice and no node overcommitted', (partitions) => {
    fc.assert(
      fc.property(history, fc.array(fc.nat({ max: 2 }), { minLength: 1, maxLength: 40 }), (events, picks) => {
        const first = foldInOrder(events, partitions);
        const second = foldInOrder(redeliver(events, partitions, picks), partitions);
        expect(second.contents).toEqual(first.contents);
        expect(second.verdicts).toEqual(first.verdicts);
        assertNoOvercommit(first.contents);
        // A pod is bound at most once: after an accepted bind, every later bind of it is rejected.
        const boundOnce = new Map<string, number>();
        for (const event of events) {
          if (event.body.type === 'PodBound' && first.verdicts.get(event.id) === 'accepted') boundOnce.set(event.key, (boundOnce.get(event.key) ?? 0) + 1);
          if (event.body.type === 'ObjectDeleted' || event.body.type === 'ObjectCreated') boundOnce.delete(event.key);
          expect(boundOnce.get(event.key) ?? 0).toBeLessThanOrEqual(1);
        }
      }),
      { numRuns: 300, seed: 2402 },
    );
  });

  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('on the embedded log with 3 partitions: the live projection equals a replay from offset 0 and the fold in memory', async () => {
    await fc.assert(
      fc.asyncProperty(history, async (events) => {
        const dir = mkdtempSync(join(tmpdir(), 'fold-properties-'));
        dirs.push(dir);
        const log = await createEmbeddedLog({ dir: join(dir, 'log'), cluster: 'props', partitions: 3, durability: 'committed' });
        const projection = createProjection({ dir: join(dir, 'projection'), log });
        try {
          const topic: FoldedTopic = 'desired';
          for (const event of events) await log.append(topic, [{ key: partitionKeyOf(event.key), value: encodeEvent(event), timestamp: event.time }]);
          await projection.waitFor({ desired: await log.endOffsets('desired'), observed: await log.endOffsets('observed') });
          const replayed = await replayLog({ log, dir: join(dir, 'replay') });
          expect(replayed.stateHash).toBe(projection.stateHash());
          const inMemory = foldInOrder(events, 3).contents;
          const live = projectionContents(projection.store);
          expect(Object.keys(live.desired).sort()).toEqual(Object.keys(inMemory.desired).sort());
          expect(live.usage).toEqual(inMemory.usage);
          expect(live.allocations).toEqual(inMemory.allocations);
          assertNoOvercommit(live);
        } finally {
          await projection.close();
          await log.close();
        }
      }),
      { numRuns: 12, seed: 7 },
    );
  });
});
