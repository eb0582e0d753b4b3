import { describe, expect, it } from 'vitest';
import type { KubeObject } from './api.ts';
import { buildTimeline, filterTimelines, joinTimelines, stateOf, type ObjectTimeline, type ServerMark, type Tone } from './timeline-model.ts';

const user = { type: 'user', name: 'admin' };
const controller = (name: string) => ({ type: 'controller', name });

const object = (kind: string, name: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  kind,
  metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: { app: 'echo' }, ...(extra.metadata ?? {}) },
  ...(extra.spec ? { spec: extra.spec } : {}),
  ...(extra.status ? { status: extra.status } : {}),
});

const base = (time: number, at: string, eventType = 'ObjectUpdated', actor = controller('x')) => ({ at, time, actor, eventType });
const span = (time: number, at: string, state: string, tone: Tone, extra: { versions?: number; generation?: number; actor?: { type: string; name: string } } = {}): ServerMark => ({
  ...base(time, at, 'ObjectUpdated', extra.actor),
  type: 'span',
  state,
  tone,
  versions: extra.versions ?? 1,
  ...(extra.generation === undefined ? {} : { generation: extra.generation }),
});
const deleted = (time: number, at: string): ServerMark => ({ ...base(time, at, 'ObjectDeleted'), type: 'deleted' });
const rejected = (time: number, at: string): ServerMark => ({ ...base(time, at), type: 'rejected', message: 'stale resourceVersion' });
const timeline = (key: string, marks: readonly ServerMark[], extra: Partial<ObjectTimeline> = {}): ObjectTimeline => ({
  key,
  labels: [{ app: 'echo' }],
  actors: [...new Set(marks.map((m) => m.actor.name))],
  marks,
  ...extra,
});

/** A Deployment rolled out: two ReplicaSets, an old pod deleted, a new pod running. */
const rollout: ObjectTimeline[] = [
  timeline('Pod/default/new-1', [span(500, 'desired/0/9', 'Pending', 'progress'), span(600, 'observed/0/1', 'Running', 'ok')], { owner: 'ReplicaSet/default/new' }),
  timeline('ReplicaSet/default/old', [span(110, 'desired/0/2', '0/1 ready', 'progress')], { owner: 'Deployment/default/echo' }),
  timeline('Deployment/default/echo', [span(100, 'desired/0/1', '0/1 ready', 'progress', { actor: user }), span(400, 'desired/0/7', '0/1 ready', 'progress', { actor: user, generation: 2 })]),
  timeline('ReplicaSet/default/new', [span(410, 'desired/0/8', '0/1 ready', 'progress')], { owner: 'Deployment/default/echo' }),
  timeline('Pod/default/old-1', [span(120, 'desired/0/3', 'Pending', 'progress'), span(200, 'observed/0/0', 'Running', 'ok'), rejected(250, 'desired/0/5'), deleted(700, 'desired/0/10')], { owner: 'ReplicaSet/default/old' }),
  timeline('Service/default/echo', [span(130, 'desired/0/4', 'exists', 'neutral')]),
];

describe('buildTimeline', () => {
  it('nests lanes under their controlling owners, owners first, older siblings first', () => {
    const { lanes } = buildTimeline(rollout);
    expect(lanes.map((l) => [l.key, l.depth])).toEqual([
      ['Deployment/default/echo', 0],
      ['ReplicaSet/default/old', 1],
      ['Pod/default/old-1', 2],
      ['ReplicaSet/default/new', 1],
      ['Pod/default/new-1', 2],
      ['Service/default/echo', 0],
    ]);
    expect(lanes.map((l) => l.order)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(lanes[0]!.children).toEqual(['ReplicaSet/default/old', 'ReplicaSet/default/new']);
    expect(lanes.find((l) => l.key === 'Pod/default/new-1')!.parent).toBe('ReplicaSet/default/new');
  });

  it('ends a span where the next span or the deletion starts (not at a rejected write), and keeps the last one open', () => {
    const { marks } = buildTimeline(rollout);
    const old = marks.filter((m) => m.lane === 'Pod/default/old-1');
    expect(old.map((m) => (m.type === 'span' ? [m.type, m.start, m.end, m.state, m.tone] : [m.type, m.at]))).toEqual([
      ['span', 120, 200, 'Pending', 'progress'],
      ['span', 200, 700, 'Running', 'ok'],
      ['rejected', 250],
      ['deleted', 700],
    ]);
    expect(old.map((m) => m.event.at)).toEqual(['desired/0/3', 'observed/0/0', 'desired/0/5', 'desired/0/10']);
    const running = marks.find((m) => m.lane === 'Pod/default/new-1' && m.type === 'span' && m.state === 'Running');
    expect(running && running.type === 'span' && running.end).toBeUndefined();
    expect(new Set(marks.map((m) => m.id)).size).toBe(marks.length);
  });

  it("marks an object's Kubernetes Events on its lane (not lanes of their own), Warnings apart", () => {
    const event = (name: string, involved: string, warning: boolean, reason: string): ObjectTimeline =>
      timeline(
        `Event/default/${name}`,
        [450, 460].map((time) => ({ ...base(time, `desired/0/${time}`), type: 'event', reason, message: `${reason} happened`, warning })),
        { involved },
      );
    const all = [...rollout, event('e1', 'Deployment/default/echo', false, 'ScalingReplicaSet'), event('e2', 'Pod/default/new-1', true, 'BackOff'), event('e3', 'Pod/default/gone', false, 'Pulled')];
    const { lanes, marks } = buildTimeline(all);
    expect(lanes.map((l) => l.key)).not.toContain('Event/default/e1');
    // An Event about an object not on the timeline keeps a lane of its own, its reports marked on it.
    expect(lanes.map((l) => l.key)).toContain('Event/default/e3');
    const events = marks.filter((m) => m.type === 'event').map((m) => m.type === 'event' && [m.lane, m.at, m.reason, m.warning]);
    expect(events).toEqual([
      ['Event/default/e3', 450, 'Pulled', false],
      ['Event/default/e3', 460, 'Pulled', false],
      ['Deployment/default/echo', 450, 'ScalingReplicaSet', false],
      ['Deployment/default/echo', 460, 'ScalingReplicaSet', false],
      ['Pod/default/new-1', 450, 'BackOff', true],
      ['Pod/default/new-1', 460, 'BackOff', true],
    ]);
    // Narrowed to the new ReplicaSet, the pod's Event stays with the pod and the Deployment's with it.
    const narrowed = filterTimelines(all, { key: 'ReplicaSet/default/new' }).map((o) => o.key);
    expect(narrowed).toEqual(expect.arrayContaining(['Event/default/e1', 'Event/default/e2']));
    expect(narrowed).not.toContain('Event/default/e3');
    expect(filterTimelines(all, { key: 'ReplicaSet/default/old' }).map((o) => o.key)).not.toContain('Event/default/e2');
  });

  it('keeps an owner whose timeline is not loaded out: the child is a root lane', () => {
    const { lanes } = buildTimeline(rollout.filter((o) => o.key !== 'ReplicaSet/default/new'));
    expect(lanes.find((l) => l.key === 'Pod/default/new-1')).toMatchObject({ parent: undefined, depth: 0 });
  });

  it('gives every object of an owner cycle a lane', () => {
    const a = timeline('ReplicaSet/default/a', [span(1, 'desired/0/1', 'exists', 'neutral')], { owner: 'ReplicaSet/default/b' });
    const b = timeline('ReplicaSet/default/b', [span(2, 'desired/0/2', 'exists', 'neutral')], { owner: 'ReplicaSet/default/a' });
    expect(buildTimeline([a, b]).lanes.map((l) => l.key).sort()).toEqual(['ReplicaSet/default/a', 'ReplicaSet/default/b']);
  });
});

describe('joinTimelines', () => {
  it("joins an object's marks split across pages, a run the page boundary split into one span, each object once, keyed by lane", () => {
    const joined = joinTimelines(
      [
        timeline('Pod/default/a', [span(10, 'desired/0/1', 'Pending', 'progress'), span(20, 'observed/0/1', 'Running', 'ok', { versions: 2 })]),
        timeline('Pod/default/a', [span(40, 'observed/0/3', 'Running', 'ok', { versions: 3 }), rejected(45, 'desired/0/4'), deleted(50, 'desired/0/5')], { labels: [{ app: 'other' }], actors: ['admin'], owner: 'ReplicaSet/default/r' }),
        timeline('Job.batch/default/j', [span(5, 'desired/0/0', 'exists', 'neutral')]),
      ],
      (key) => key.replace('Job.batch', 'Job'),
    );
    expect(joined.map((o) => o.key)).toEqual(['Pod/default/a', 'Job/default/j']);
    const a = joined[0]!;
    expect(a.marks.map((m) => [m.type, m.time, m.type === 'span' ? m.versions : undefined])).toEqual([
      ['span', 10, 1],
      ['span', 20, 5],
      ['rejected', 45, undefined],
      ['deleted', 50, undefined],
    ]);
    expect(a.labels).toEqual([{ app: 'echo' }, { app: 'other' }]);
    expect(a.actors).toEqual(['x', 'admin']);
    expect(a.owner).toBe('ReplicaSet/default/r');
  });

  it('keeps runs apart when their state, tone or generation differ, or a deletion came between', () => {
    const joined = joinTimelines([
      timeline('Pod/default/a', [span(10, 'desired/0/1', 'Running', 'ok', { generation: 1 })]),
      timeline('Pod/default/a', [span(20, 'desired/0/2', 'Running', 'ok', { generation: 2 })]),
      timeline('Pod/default/a', [deleted(30, 'desired/0/3')]),
      timeline('Pod/default/a', [span(40, 'desired/0/4', 'Running', 'ok', { generation: 2 })]),
    ]);
    expect(joined[0]!.marks.map((m) => m.time)).toEqual([10, 20, 30, 40]);
  });
});

describe('stateOf', () => {
  it.each([
    ['Pod', object('Pod', 'p', { status: { phase: 'Running' } }), 'Running', 'ok'],
    ['Pod', object('Pod', 'p', { status: { phase: 'Running', containerStatuses: [{ state: { waiting: { reason: 'CrashLoopBackOff' } } }] } }), 'CrashLoopBackOff', 'bad'],
    ['Pod', object('Pod', 'p', { status: { phase: 'Failed' } }), 'Failed', 'bad'],
    ['Pod', object('Pod', 'p', { status: { phase: 'Succeeded' } }), 'Succeeded', 'neutral'],
    ['Deployment', object('Deployment', 'd', { spec: { replicas: 3 }, status: { readyReplicas: 1 } }), '1/3 ready', 'progress'],
    ['ReplicaSet', object('ReplicaSet', 'r', { spec: { replicas: 0 } }), '0/0 ready', 'neutral'],
    ['Node', object('Node', 'n', { status: { conditions: [{ type: 'Ready', status: 'True' }] } }), 'Ready', 'ok'],
    ['Node', object('Node', 'n', { status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } }), 'NotReady', 'bad'],
    ['Service', object('Service', 's'), 'exists', 'neutral'],
  ])('%s → %s', (kind, obj, state, tone) => {
    expect(stateOf(kind, obj)).toEqual({ state, tone });
  });
});

describe('filterTimelines', () => {
  const keys = (objects: readonly ObjectTimeline[]): string[] => objects.map((o) => o.key).sort();

  it('narrows to one object with its owner chain and everything it owns', () => {
    expect(keys(filterTimelines(rollout, { key: 'ReplicaSet/default/new' }))).toEqual(['Deployment/default/echo', 'Pod/default/new-1', 'ReplicaSet/default/new']);
    expect(keys(filterTimelines(rollout, { key: 'Pod/default/old-1' }))).toEqual(['Deployment/default/echo', 'Pod/default/old-1', 'ReplicaSet/default/old']);
  });

  it('filters by kind, label and actor', () => {
    expect(keys(filterTimelines(rollout, { kind: 'ReplicaSet' }))).toEqual(['ReplicaSet/default/new', 'ReplicaSet/default/old']);
    expect(keys(filterTimelines(rollout, { actor: 'admin' }))).toEqual(['Deployment/default/echo']);
    expect(filterTimelines(rollout, { label: 'app=echo' })).toHaveLength(rollout.length);
    expect(filterTimelines(rollout, { label: 'app=other' })).toHaveLength(0);
    expect(filterTimelines(rollout, { label: 'app' })).toHaveLength(rollout.length);
    expect(filterTimelines(rollout, { label: '__proto__' })).toHaveLength(0);
  });
});
