import { describe, expect, it } from 'vitest';
import type { KubeObject } from './api.ts';
import { buildTimeline, filterHistories, stateOf, type ObjectHistory, type Version } from './timeline-model.ts';

const accepted = { type: 'accepted' } as const;
const user = { type: 'user', name: 'admin' };
const controller = (name: string) => ({ type: 'controller', name });

const object = (kind: string, name: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  kind,
  metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: { app: 'echo' }, ...(extra.metadata ?? {}) },
  ...(extra.spec ? { spec: extra.spec } : {}),
  ...(extra.status ? { status: extra.status } : {}),
});

const version = (time: number, position: string, change: Version['change'], obj: KubeObject | null, extra: Partial<Version> = {}): Version => ({
  position,
  time,
  actor: controller('x'),
  eventType: change === 'ADDED' ? 'ObjectCreated' : change === 'DELETED' ? 'ObjectDeleted' : 'ObjectUpdated',
  verdict: accepted,
  change,
  object: obj,
  ...extra,
});

const owned = (kind: string, name: string, owner: { kind: string; name: string }, extra: Partial<KubeObject> = {}): KubeObject =>
  object(kind, name, { ...extra, metadata: { name, ownerReferences: [{ ...owner, uid: `uid-${owner.name}`, controller: true }] } });

/** A Deployment rolled out: two ReplicaSets, an old pod deleted, a new pod running. */
const rollout: ObjectHistory[] = [
  { key: 'Pod/default/new-1', versions: [version(500, '9.0', 'ADDED', owned('Pod', 'new-1', { kind: 'ReplicaSet', name: 'new' })), version(600, '9.1', 'MODIFIED', owned('Pod', 'new-1', { kind: 'ReplicaSet', name: 'new' }, { status: { phase: 'Running' } }))] },
  { key: 'ReplicaSet/default/old', versions: [version(110, '2.0', 'ADDED', owned('ReplicaSet', 'old', { kind: 'Deployment', name: 'echo' }, { spec: { replicas: 1 } }))] },
  { key: 'Deployment/default/echo', versions: [version(100, '1.0', 'ADDED', object('Deployment', 'echo', { spec: { replicas: 1 } }), { actor: user }), version(400, '7.0', 'MODIFIED', object('Deployment', 'echo', { spec: { replicas: 1 } }), { actor: user })] },
  { key: 'ReplicaSet/default/new', versions: [version(410, '8.0', 'ADDED', owned('ReplicaSet', 'new', { kind: 'Deployment', name: 'echo' }, { spec: { replicas: 1 } }))] },
  {
    key: 'Pod/default/old-1',
    versions: [
      version(120, '3.0', 'ADDED', owned('Pod', 'old-1', { kind: 'ReplicaSet', name: 'old' })),
      version(200, '4.1', 'MODIFIED', owned('Pod', 'old-1', { kind: 'ReplicaSet', name: 'old' }, { status: { phase: 'Running' } })),
      version(250, '5.1', null, null, { verdict: { type: 'rejected', reason: 'Conflict', message: 'stale resourceVersion' } }),
      version(700, '10.1', 'DELETED', null),
    ],
  },
  { key: 'Service/default/echo', versions: [version(130, '3.5', 'ADDED', object('Service', 'echo'))] },
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

  it('makes one span per accepted version in a new state, ending at the next, and marks deletions and rejected writes', () => {
    const { marks } = buildTimeline(rollout);
    const old = marks.filter((m) => m.lane === 'Pod/default/old-1');
    expect(old.map((m) => (m.type === 'span' ? [m.type, m.start, m.end, m.state, m.tone] : [m.type, m.at]))).toEqual([
      ['span', 120, 200, 'Pending', 'progress'],
      ['span', 200, 700, 'Running', 'ok'],
      ['deleted', 700],
      ['rejected', 250],
    ]);
    const running = marks.find((m) => m.lane === 'Pod/default/new-1' && m.type === 'span' && m.state === 'Running');
    expect(running && running.type === 'span' && running.end).toBeUndefined();
    expect(new Set(marks.map((m) => m.id)).size).toBe(marks.length);
  });

  it('makes one span of consecutive versions in the same state and generation, a new one when the generation changes', () => {
    const pod = (phase: string, generation = 1) => object('Pod', 'p', { metadata: { name: 'p', generation }, status: { phase } } as Partial<KubeObject>);
    const history: ObjectHistory = {
      key: 'Pod/default/p',
      versions: [
        version(10, '1.0', 'ADDED', pod('Pending')),
        version(20, '1.1', 'MODIFIED', pod('Running')),
        version(30, '1.2', 'MODIFIED', pod('Running')),
        version(40, '1.3', 'MODIFIED', pod('Running')),
        version(50, '2.3', 'MODIFIED', pod('Running', 2)),
        version(60, '3.3', 'DELETED', null),
      ],
    };
    const spans = buildTimeline([history]).marks.map((m) => (m.type === 'span' ? [m.state, m.start, m.end, m.versions, m.version.position] : [m.type, m.at]));
    expect(spans).toEqual([
      ['Pending', 10, 20, 1, '1.0'],
      ['Running', 20, 50, 3, '1.1'],
      ['Running', 50, 60, 1, '2.3'],
      ['deleted', 60],
    ]);
  });

  it("marks an object's Kubernetes Events on its lane (not lanes of their own), Warnings apart", () => {
    const event = (name: string, involved: { kind: string; name: string }, type: string, reason: string): ObjectHistory => ({
      key: `Event/default/${name}`,
      versions: [
        version(450, '8.5', 'ADDED', { kind: 'Event', metadata: { name, namespace: 'default' }, involvedObject: { ...involved, namespace: 'default' }, type, reason, message: `${reason} happened` }),
        version(460, '8.6', 'MODIFIED', { kind: 'Event', metadata: { name, namespace: 'default' }, involvedObject: { ...involved, namespace: 'default' }, type, reason, message: `${reason} happened`, count: 2 }),
      ],
    });
    const histories = [...rollout, event('e1', { kind: 'Deployment', name: 'echo' }, 'Normal', 'ScalingReplicaSet'), event('e2', { kind: 'Pod', name: 'new-1' }, 'Warning', 'BackOff'), event('e3', { kind: 'Pod', name: 'gone' }, 'Normal', 'Pulled')];
    const { lanes, marks } = buildTimeline(histories);
    expect(lanes.map((l) => l.key)).not.toContain('Event/default/e1');
    // An Event about an object not on the timeline keeps a lane of its own.
    expect(lanes.map((l) => l.key)).toContain('Event/default/e3');
    const events = marks.filter((m) => m.type === 'event').map((m) => m.type === 'event' && [m.lane, m.at, m.reason, m.warning]);
    expect(events).toEqual([
      ['Deployment/default/echo', 450, 'ScalingReplicaSet', false],
      ['Deployment/default/echo', 460, 'ScalingReplicaSet', false],
      ['Pod/default/new-1', 450, 'BackOff', true],
      ['Pod/default/new-1', 460, 'BackOff', true],
    ]);
    // Narrowed to the new ReplicaSet, the pod's Event stays with the pod and the Deployment's with it.
    const narrowed = filterHistories(histories, { key: 'ReplicaSet/default/new' }).map((h) => h.key);
    expect(narrowed).toEqual(expect.arrayContaining(['Event/default/e1', 'Event/default/e2']));
    expect(narrowed).not.toContain('Event/default/e3');
    expect(filterHistories(histories, { key: 'ReplicaSet/default/old' }).map((h) => h.key)).not.toContain('Event/default/e2');
  });

  it('keeps an owner whose history is not loaded out: the child is a root lane', () => {
    const { lanes } = buildTimeline(rollout.filter((h) => h.key !== 'ReplicaSet/default/new'));
    expect(lanes.find((l) => l.key === 'Pod/default/new-1')).toMatchObject({ parent: undefined, depth: 0 });
  });

  it('gives every object of an owner cycle a lane', () => {
    const a = { key: 'ReplicaSet/default/a', versions: [version(1, '1.0', 'ADDED', owned('ReplicaSet', 'a', { kind: 'ReplicaSet', name: 'b' }))] };
    const b = { key: 'ReplicaSet/default/b', versions: [version(2, '2.0', 'ADDED', owned('ReplicaSet', 'b', { kind: 'ReplicaSet', name: 'a' }))] };
    expect(buildTimeline([a, b]).lanes.map((l) => l.key).sort()).toEqual(['ReplicaSet/default/a', 'ReplicaSet/default/b']);
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

describe('filterHistories', () => {
  const keys = (histories: readonly ObjectHistory[]): string[] => histories.map((h) => h.key).sort();

  it('narrows to one object with its owner chain and everything it owns', () => {
    expect(keys(filterHistories(rollout, { key: 'ReplicaSet/default/new' }))).toEqual(['Deployment/default/echo', 'Pod/default/new-1', 'ReplicaSet/default/new']);
    expect(keys(filterHistories(rollout, { key: 'Pod/default/old-1' }))).toEqual(['Deployment/default/echo', 'Pod/default/old-1', 'ReplicaSet/default/old']);
  });

  it('filters by kind, label and actor', () => {
    expect(keys(filterHistories(rollout, { kind: 'ReplicaSet' }))).toEqual(['ReplicaSet/default/new', 'ReplicaSet/default/old']);
    expect(keys(filterHistories(rollout, { actor: 'admin' }))).toEqual(['Deployment/default/echo']);
    expect(filterHistories(rollout, { label: 'app=echo' })).toHaveLength(rollout.length);
    expect(filterHistories(rollout, { label: 'app=other' })).toHaveLength(0);
    expect(filterHistories(rollout, { label: 'app' })).toHaveLength(rollout.length);
    expect(filterHistories(rollout, { label: '__proto__' })).toHaveLength(0);
  });
});
