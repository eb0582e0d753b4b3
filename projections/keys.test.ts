/**
 * `View.keys`: paging through the keys of a kind in key order without materializing the
 * objects, on the live view and on views of the past (which must name exactly the objects
 * that existed at their position, across snapshot boundaries and partitions).
 */
import { describe, expect, it } from 'vitest';
import { objectKey, type EventEnvelope, type KubeObject, type Pod } from '../schemas/index.ts';
import type { PositionVector } from './positions.ts';
import { createProjection, type Projection } from './projection.ts';
import { SNAPSHOT_INTERVAL } from './store.ts';
import { makeEvent, toBatches } from './testing.ts';
import type { View } from './view.ts';
import { tempProjections } from './temp-projections.ts';

const temp = tempProjections('logplane-keys-');

const PARTITIONS = 2;
/** 'a' and 'ab': a namespace filter must not take one for a prefix of the other. */
const NAMESPACES = ['a', 'ab', 'b'] as const;
const PODS = 150;
const ROUNDS = 26;

const pod = (namespace: string, i: number, round: number): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `p${String(i).padStart(3, '0')}`, namespace, labels: { round: String(round) } },
  spec: { containers: [{ name: 'main', image: 'echo' }] },
});
const podKey = (namespace: string, i: number) => `Pod/${namespace}/p${String(i).padStart(3, '0')}`;

/** Round by round: pods appear over the first rounds, get updated, some are deleted and re-created. */
const rounds = (): EventEnvelope[][] => {
  const result: EventEnvelope[][] = [];
  const exists = new Set<string>();
  for (let round = 0; round < ROUNDS; round++) {
    const events: EventEnvelope[] = [];
    if (round === 0) {
      for (const name of NAMESPACES) {
        events.push(makeEvent(`Namespace//${name}`, { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } }));
      }
    }
    for (const namespace of NAMESPACES) {
      // Pods appear in a shuffled order (not key order) over the first five rounds.
      for (let j = 0; j < PODS; j++) {
        const i = (j * 37) % PODS;
        const key = podKey(namespace, i);
        if (!exists.has(key)) {
          if (i % 5 <= round) {
            events.push(makeEvent(key, { type: 'ObjectCreated', object: pod(namespace, i, round) }));
            exists.add(key);
          }
        } else if (round % 6 === 3 && (i + round) % 9 === 0) {
          events.push(
            makeEvent(key, {
              type: 'ObjectDeleted', kind: 'Pod', namespace, name: pod(namespace, i, round).metadata.name,
              expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null,
            }),
          );
          exists.delete(key);
        } else {
          events.push(makeEvent(key, { type: 'ObjectUpdated', object: pod(namespace, i, round), expectedResourceVersion: null, subresource: null }));
        }
      }
    }
    result.push(events);
  }
  return result;
};

const listedKeys = (view: View, kind: 'Pod' | 'Namespace', namespace?: string): string[] => view.list(kind, namespace).map(objectKey);

/** Checks `keys` against `list` and `get` on one view, for every namespace and a sample of `after` values. */
const checkView = (view: View, expected: { all: string[]; byNamespace: Map<string, string[]>; namespaces: string[] }): void => {
  expect([...view.keys('Pod')]).toEqual(expected.all);
  expect([...view.keys('Namespace')]).toEqual(expected.namespaces);
  for (const namespace of [...NAMESPACES, 'none']) {
    expect([...view.keys('Pod', namespace)]).toEqual(expected.byNamespace.get(namespace) ?? []);
  }
  for (const key of expected.all) expect(view.get(key)).toBeDefined();
  const all = expected.all;
  // `after` on an existing key, between keys, before and past the range, and across a namespace boundary.
  for (let i = 0; i < all.length; i += 17) {
    expect([...view.keys('Pod', undefined, all[i])]).toEqual(all.slice(i + 1));
    for (const after of [`${all[i]}~`, all[i]!.slice(0, -1)]) {
      expect([...view.keys('Pod', undefined, after)]).toEqual(all.filter((k) => k > after));
    }
  }
  expect([...view.keys('Pod', undefined, '')]).toEqual(all);
  expect([...view.keys('Pod', undefined, 'A')]).toEqual(all);
  expect([...view.keys('Pod', undefined, 'Pod/zzz')]).toEqual([]);
  const inA = expected.byNamespace.get('a') ?? [];
  expect([...view.keys('Pod', 'a', inA[inA.length - 1])]).toEqual([]);
  expect([...view.keys('Pod', 'ab', 'Pod/a/p999')]).toEqual(expected.byNamespace.get('ab'));
  // Pages of 50 rebuild the whole list.
  const paged: string[] = [];
  for (;;) {
    const page: string[] = [];
    for (const key of view.keys('Pod', undefined, paged[paged.length - 1])) {
      page.push(key);
      if (page.length === 50) break;
    }
    if (page.length === 0) break;
    paged.push(...page);
  }
  expect(paged).toEqual(all);
};

const expectedOf = (view: View) => ({
  all: listedKeys(view, 'Pod'),
  byNamespace: new Map(NAMESPACES.map((n) => [n, listedKeys(view, 'Pod', n)])),
  namespaces: listedKeys(view, 'Namespace'),
});

describe('View.keys', () => {
  it('pages keys in ascending order, strictly after `after`, per namespace, on the live view and at past positions', () => {
    const dir = temp.dir();
    const projection = createProjection({ dir, partitions: PARTITIONS });
    temp.track(projection);
    const next = [0, 0];
    const samples: { position: PositionVector; expected: ReturnType<typeof expectedOf> }[] = [];
    rounds().forEach((events, round) => {
      for (const batch of toBatches('desired', events, PARTITIONS, next)) projection.applyBatch(batch);
      const live = projection.view();
      const expected = expectedOf(live);
      // The list really is sorted and spans both partitions' keys.
      expect(expected.all).toEqual([...expected.all].sort());
      if (round % 3 === 0 || round === ROUNDS - 1) {
        checkView(live, expected);
        samples.push({ position: projection.cursor(), expected });
      }
    });
    expect(Math.max(...projection.cursor().desired)).toBeGreaterThan(SNAPSHOT_INTERVAL);
    // The past: exactly the keys the live view had, none created later or deleted before.
    const final = new Set(samples[samples.length - 1]!.expected.all);
    let absentThenPresentNow = 0;
    for (const { position, expected } of samples) {
      const past = projection.viewAt(position);
      checkView(past, expected);
      const then = new Set(expected.all);
      for (const key of final) if (!then.has(key)) absentThenPresentNow++;
    }
    expect(absentThenPresentNow).toBeGreaterThan(0);
    // The empty past.
    expect([...projection.viewAt({ desired: [0, 0], observed: [0, 0] }).keys('Pod')]).toEqual([]);
  });

  it('is lazy: stopping early reads no further', () => {
    const dir = temp.dir();
    const projection = createProjection({ dir, partitions: 1 });
    temp.track(projection);
    const events: EventEnvelope[] = [makeEvent('Namespace//a', { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } } as KubeObject })];
    for (let i = 0; i < 10; i++) events.push(makeEvent(podKey('a', i), { type: 'ObjectCreated', object: pod('a', i, 0) }));
    for (const batch of toBatches('desired', events)) projection.applyBatch(batch);
    const iterator = projection.view().keys('Pod')[Symbol.iterator]();
    expect(iterator.next().value).toBe(podKey('a', 0));
    // An object created while paging shows up in a later page.
    for (const batch of toBatches('desired', [makeEvent('Pod/a/p000x', { type: 'ObjectCreated', object: { ...pod('a', 0, 0), metadata: { name: 'p000x', namespace: 'a' } } })], 1, [11])) {
      projection.applyBatch(batch);
    }
    expect([...projection.view().keys('Pod', 'a', podKey('a', 0))].slice(0, 2)).toEqual(['Pod/a/p000x', podKey('a', 1)]);
  });
});
