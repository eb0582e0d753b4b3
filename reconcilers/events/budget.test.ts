/**
 * The Event budget: what kube's lossy Event pipeline writes, as a function of the view.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EventBody, Pod } from '../../schemas/index.ts';
import { createRecorder } from '../../projections/event-recorder.ts';
import { createSchedulerController } from '../scheduler/controller.ts';
import { createTestCluster, nodeObject, type TestCluster } from '../testing.ts';
import { createEventBudget, SCHEDULER_EVENT_PIPELINE } from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const T0 = Date.UTC(2030, 0, 1, 12);

const setup = (): TestCluster => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  return cluster;
};

const pod = (name: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'sleeper', resources: { requests: { cpu: '1m' } } }] },
});

let recorded = 0;
/** Records one new Event (a message of its own, so none is aggregated) about `about` as `component` at `now` and folds it. */
const recordEvent = (cluster: TestCluster, component: string, about: Pod, now: number): void => {
  const recorder = createRecorder(cluster.view(), now, { component });
  recorder.event(about, 'Normal', 'Test', `event ${recorded++}`);
  for (const record of cluster.apply(...recorder.commands())) expect(record.verdict.type).toBe('accepted');
};

const scheduledEvents = (commands: readonly EventBody[]): number =>
  commands.filter((c) => c.type === 'ObjectCreated' && c.object.kind === 'Event' && c.object.reason === 'Scheduled').length;

describe('the Event budget', () => {
  it('counts the sources’ Events of the window, the same from the change feed as from the view', () => {
    const cluster = setup();
    const about = cluster.create(pod('a'));
    // burst 1 + queue 2 = 3 Events in any window of ceil(3 / 1) = 3 s.
    const budget = createEventBudget(new Set(['me']), { qps: 1, burst: 1, queue: 2 });
    const detached = createEventBudget(new Set(['me']), { qps: 1, burst: 1, queue: 2 });
    const detach = budget.attach(cluster.projection);
    const both = (now: number): [number, number] => [budget.allowance(cluster.view(), now).left, detached.allowance(cluster.view(), now).left];

    expect(both(T0)).toEqual([3, 3]);
    recordEvent(cluster, 'me', about, T0);
    recordEvent(cluster, 'someone-else', about, T0);
    recordEvent(cluster, 'me', about, T0 + 1000);
    expect(both(T0 + 1000)).toEqual([1, 1]);
    // The first one leaves the window 3 s after it, the second 3 s after that.
    expect(both(T0 + 2999)).toEqual([1, 1]);
    expect(both(T0 + 3000)).toEqual([2, 2]);
    expect(both(T0 + 4000)).toEqual([3, 3]);
    recordEvent(cluster, 'me', about, T0 + 1500);
    recordEvent(cluster, 'me', about, T0 + 1500);
    expect(both(T0 + 1500)).toEqual([0, 0]);

    // 4 of 3 used; a deleted Event (the TTL controller's) no longer counts.
    const mine = cluster.view().list('Event').filter((e) => e.kind === 'Event' && e.source?.component === 'me');
    expect(mine).toHaveLength(4);
    for (const event of mine.slice(0, 2)) {
      cluster.apply({ type: 'ObjectDeleted', kind: 'Event', namespace: 'default', name: event.metadata.name, expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null });
    }
    expect(both(T0 + 1500)).toEqual([1, 1]);
    detach();
  });

  it('lets the scheduler write kube-scheduler’s burst of Events, then drops them until the window moves on, with or without its cache', () => {
    const cluster = setup();
    for (const name of ['n1', 'n2', 'n3']) cluster.create(nodeObject(name));
    const limit = SCHEDULER_EVENT_PIPELINE.burst + SCHEDULER_EVENT_PIPELINE.queue;
    const keys = Array.from({ length: limit + 100 }, (_, i) => {
      cluster.create(pod(`p${String(i).padStart(4, '0')}`));
      return `Pod/default/p${String(i).padStart(4, '0')}`;
    });
    const attached = createSchedulerController();
    const detach = attached.attach!(cluster.projection);
    const fresh = createSchedulerController();

    const round = (roundKeys: readonly string[], now: number): EventBody[] => {
      const commands = [...attached.decideAll!(roundKeys, cluster.view(), { now }).values()].flatMap((d) => d.commands);
      const uncached = [...fresh.decideAll!(roundKeys, cluster.view(), { now }).values()].flatMap((d) => d.commands);
      expect(uncached).toEqual(commands);
      for (const record of cluster.apply(...commands)) expect(record.verdict.type).toBe('accepted');
      return commands;
    };

    const first = round(keys, T0);
    expect(first.filter((c) => c.type === 'PodBound')).toHaveLength(limit + 100);
    expect(scheduledEvents(first)).toBe(limit);

    const more = Array.from({ length: 20 }, (_, i) => cluster.create(pod(`q${i}`))).map((p) => `Pod/default/${p.metadata.name}`);
    const second = round(more.slice(0, 10), T0 + 21_000);
    expect(second.filter((c) => c.type === 'PodBound')).toHaveLength(10);
    expect(scheduledEvents(second)).toBe(0);

    const third = round(more.slice(10), T0 + 22_000);
    expect(scheduledEvents(third)).toBe(10);
    detach();
  });
});
