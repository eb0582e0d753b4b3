/**
 * The data of the timeline, from the bulk history's timeline view
 * (`/logplane/v1/history?namespace=NS&view=timeline`: per object its owner and, per run of
 * versions in one state, what a span draws): one lane per object, nested under its
 * controlling owner (Deployment → ReplicaSet → Pod), and on each lane one span per run
 * (named and coloured by the object's phase or condition, as the server states it), with
 * deletions, rejected writes and the object's Kubernetes Events as marks.
 * Pure: no DOM, no requests.
 */
import type { KubeObject } from './api.ts';
import { condition, podStatus } from './columns.ts';

/** One entry of an object's history, as the history API returns it. */
export interface Version {
  readonly position: string;
  readonly time: number;
  readonly actor: { readonly type: string; readonly name: string };
  readonly eventType: string;
  readonly verdict: { readonly type: 'accepted' } | { readonly type: 'rejected'; readonly reason: string; readonly message: string };
  readonly change: 'ADDED' | 'MODIFIED' | 'DELETED' | null;
  readonly object: KubeObject | null;
}

export interface Lane {
  readonly key: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** The lane of the controlling owner, when it is on the timeline too. */
  readonly parent: string | undefined;
  readonly children: readonly string[];
  /** Depth in the owner tree (0 for a root). */
  readonly depth: number;
  /** Position in the lane order: owners before their children, depth first. */
  readonly order: number;
}

/** What a span or mark says about the object. */
export type Tone = 'ok' | 'progress' | 'bad' | 'gone' | 'neutral';

/** The event behind a mark: what its tooltip names, and the moment (its position, `8.3`) clicking it opens. */
export interface MarkEvent {
  /** The event's position: the list resourceVersion just after it (`8.3`). */
  readonly at: string;
  readonly time: number;
  readonly actor: { readonly type: string; readonly name: string };
  readonly eventType: string;
}

/** A mark as the server sends it (one object's, oldest first). */
export type ServerMark =
  | (MarkEvent & { readonly type: 'span'; readonly state: string; readonly tone: Tone; readonly generation?: number; readonly versions: number })
  | (MarkEvent & { readonly type: 'deleted' })
  | (MarkEvent & { readonly type: 'rejected'; readonly message: string })
  | (MarkEvent & { readonly type: 'event'; readonly reason: string; readonly message: string; readonly warning: boolean });

/** One object on the timeline, as the server sends it (an object's marks may continue on the next page). */
export interface ObjectTimeline {
  /** `Kind/namespace/name` (namespace empty for cluster-scoped kinds). */
  readonly key: string;
  /** The lane key of its controlling owner. */
  readonly owner?: string;
  /** An Event's: the lane key of the object it is about. */
  readonly involved?: string;
  readonly labels: readonly Readonly<Record<string, string>>[];
  readonly actors: readonly string[];
  readonly marks: readonly ServerMark[];
}

export type Mark =
  | {
      readonly type: 'span';
      readonly id: string;
      readonly lane: string;
      readonly start: number;
      /** Undefined while it lasts (the object is still in this state now). */
      readonly end: number | undefined;
      readonly state: string;
      readonly tone: Tone;
      /** The first version of the run. */
      readonly event: MarkEvent;
      /** How many versions the span stands for (a run of versions in the same state and generation). */
      readonly versions: number;
    }
  | { readonly type: 'deleted'; readonly id: string; readonly lane: string; readonly at: number; readonly event: MarkEvent }
  | { readonly type: 'rejected'; readonly id: string; readonly lane: string; readonly at: number; readonly event: MarkEvent; readonly message: string }
  | {
      /** A Kubernetes Event about the lane's object (a version of the Event: its first report or a repeat). */
      readonly type: 'event';
      readonly id: string;
      readonly lane: string;
      readonly at: number;
      readonly reason: string;
      readonly message: string;
      readonly warning: boolean;
      readonly event: MarkEvent;
    };

export interface Timeline {
  readonly lanes: readonly Lane[];
  readonly marks: readonly Mark[];
}

/** The kind, namespace and name in a history key. */
export const parseKey = (key: string): { kind: string; namespace: string; name: string } => {
  const [kind = '', namespace = '', ...name] = key.split('/');
  return { kind, namespace, name: name.join('/') };
};

/** The state a version is shown as, and its tone. */
export const stateOf = (kind: string, object: KubeObject): { state: string; tone: Tone } => {
  const status = (object.status ?? {}) as Record<string, unknown>;
  const spec = (object.spec ?? {}) as Record<string, unknown>;
  switch (kind) {
    case 'Pod': {
      const state = podStatus(object);
      const tone: Tone =
        state === 'Running' ? (condition(object, 'Ready') === 'False' ? 'progress' : 'ok') : state === 'Succeeded' ? 'neutral' : state === 'Pending' || state === 'ContainerCreating' || state === 'Terminating' ? 'progress' : 'bad';
      return { state, tone };
    }
    case 'Deployment':
    case 'ReplicaSet': {
      const desired = typeof spec['replicas'] === 'number' ? spec['replicas'] : 1;
      const ready = typeof status['readyReplicas'] === 'number' ? status['readyReplicas'] : 0;
      return { state: `${ready}/${desired} ready`, tone: desired === 0 ? 'neutral' : ready >= desired ? 'ok' : 'progress' };
    }
    case 'Node': {
      const ready = condition(object, 'Ready');
      return ready === 'True' ? { state: 'Ready', tone: 'ok' } : { state: ready === undefined ? 'Unknown' : 'NotReady', tone: 'bad' };
    }
    case 'Namespace': {
      const phase = typeof status['phase'] === 'string' ? status['phase'] : 'Active';
      return { state: phase, tone: phase === 'Active' ? 'ok' : 'progress' };
    }
    default:
      return { state: 'exists', tone: 'neutral' };
  }
};

const KIND_ORDER = ['Namespace', 'Node', 'Deployment', 'ReplicaSet', 'Pod', 'Service', 'Endpoints'];
const kindRank = (kind: string): number => {
  const index = KIND_ORDER.indexOf(kind);
  return index < 0 ? KIND_ORDER.length : index;
};
const firstTime = (object: ObjectTimeline): number => object.marks[0]?.time ?? 0;

/** The Events whose object is among `objects` (they become marks on its lane), and the rest. */
const splitEvents = (all: readonly ObjectTimeline[]): { objects: ObjectTimeline[]; events: { object: ObjectTimeline; lane: string }[] } => {
  const keys = new Set(all.map((o) => o.key));
  const objects: ObjectTimeline[] = [];
  const events: { object: ObjectTimeline; lane: string }[] = [];
  for (const object of all) {
    if (object.involved !== undefined && keys.has(object.involved)) events.push({ object, lane: object.involved });
    else objects.push(object);
  }
  return { objects, events };
};

const sameRun = (a: ServerMark | undefined, b: ServerMark | undefined): boolean =>
  a?.type === 'span' && b?.type === 'span' && a.state === b.state && a.tone === b.tone && a.generation === b.generation;

/**
 * The objects of the timeline pages (in the order read), each once: an object whose marks
 * continue on a later page gets them appended, a run that the page boundary split joined
 * into one span; its owner is the latest page's, its labels and actors all of them.
 * `keyOf` names the lane (the log names a kind with its group).
 */
export const joinTimelines = (parts: readonly ObjectTimeline[], keyOf: (key: string) => string = (key) => key): ObjectTimeline[] => {
  const byKey = new Map<string, { key: string; owner?: string; involved?: string; labels: Map<string, Readonly<Record<string, string>>>; actors: Set<string>; marks: ServerMark[]; lastRun?: number }>();
  for (const part of parts) {
    const key = keyOf(part.key);
    let joined = byKey.get(key);
    if (!joined) byKey.set(key, (joined = { key, labels: new Map(), actors: new Set(), marks: [] }));
    if (part.owner !== undefined) joined.owner = part.owner;
    if (part.involved !== undefined) joined.involved = part.involved;
    for (const set of part.labels) joined.labels.set(JSON.stringify(set), set);
    for (const actor of part.actors) joined.actors.add(actor);
    let first = true;
    for (const mark of part.marks) {
      if (mark.type === 'span' || mark.type === 'deleted') {
        const last = joined.lastRun === undefined ? undefined : joined.marks[joined.lastRun];
        if (first && mark.type === 'span' && last?.type === 'span' && sameRun(last, mark)) {
          joined.marks[joined.lastRun!] = { ...last, versions: last.versions + mark.versions };
          first = false;
          continue;
        }
        first = false;
        joined.lastRun = joined.marks.length;
      }
      joined.marks.push(mark);
    }
  }
  return [...byKey.values()].map(({ key, owner, involved, labels, actors, marks }) => ({
    key,
    ...(owner === undefined ? {} : { owner }),
    ...(involved === undefined ? {} : { involved }),
    labels: [...labels.values()],
    actors: [...actors],
    marks,
  }));
};

/**
 * Lanes and marks of `all` (a timeline that starts at each object's first event and runs to
 * now). A span ends where the object's next span or deletion starts; an Event about an
 * object on the timeline is marks on that object's lane rather than a lane of its own.
 */
export const buildTimeline = (all: readonly ObjectTimeline[]): Timeline => {
  const { objects, events } = splitEvents(all);
  const byKey = new Map(objects.map((o) => [o.key, o]));
  const parents = new Map<string, string>();
  for (const object of objects) {
    if (object.owner !== undefined && object.owner !== object.key && byKey.has(object.owner)) parents.set(object.key, object.owner);
  }
  const children = new Map<string, string[]>();
  for (const [child, parent] of parents) children.set(parent, [...(children.get(parent) ?? []), child]);
  const compare = (a: string, b: string): number => {
    const ka = parseKey(a);
    const kb = parseKey(b);
    return kindRank(ka.kind) - kindRank(kb.kind) || firstTime(byKey.get(a)!) - firstTime(byKey.get(b)!) || a.localeCompare(b);
  };
  const lanes: Lane[] = [];
  const visit = (key: string, depth: number, seen: Set<string>): void => {
    if (seen.has(key)) return;
    seen.add(key);
    const { kind, namespace, name } = parseKey(key);
    const kids = [...(children.get(key) ?? [])].sort(compare);
    lanes.push({ key, kind, namespace, name, parent: parents.get(key), children: kids, depth, order: lanes.length });
    for (const kid of kids) visit(kid, depth + 1, seen);
  };
  const seen = new Set<string>();
  for (const key of [...byKey.keys()].filter((k) => !parents.has(k)).sort(compare)) visit(key, 0, seen);
  // An owner cycle has no root: its objects are lanes of their own.
  for (const key of [...byKey.keys()].sort(compare)) visit(key, 0, seen);

  const marks: Mark[] = [];
  const markOf = (lane: string, mark: ServerMark, index: number, end: number | undefined): Mark => {
    const id = `${lane}@${mark.at}#${index}`;
    const event: MarkEvent = { at: mark.at, time: mark.time, actor: mark.actor, eventType: mark.eventType };
    switch (mark.type) {
      case 'span':
        return { type: 'span', id, lane, start: mark.time, end, state: mark.state, tone: mark.tone, event, versions: mark.versions };
      case 'deleted':
        return { type: 'deleted', id, lane, at: mark.time, event };
      case 'rejected':
        return { type: 'rejected', id, lane, at: mark.time, event, message: mark.message };
      case 'event':
        return { type: 'event', id, lane, at: mark.time, reason: mark.reason, message: mark.message, warning: mark.warning, event };
    }
  };
  for (const object of objects) {
    const ends: (number | undefined)[] = new Array<number | undefined>(object.marks.length);
    let next: number | undefined;
    for (let i = object.marks.length - 1; i >= 0; i--) {
      const mark = object.marks[i]!;
      ends[i] = next;
      if (mark.type === 'span' || mark.type === 'deleted') next = mark.time;
    }
    object.marks.forEach((mark, index) => marks.push(markOf(object.key, mark, index, ends[index])));
  }
  for (const { object, lane } of events) {
    object.marks.forEach((mark, index) => {
      if (mark.type === 'event') marks.push(markOf(lane, mark, index, undefined));
    });
  }
  return { lanes, marks };
};

/** Which objects a timeline shows. */
export interface TimelineFilter {
  readonly kind?: string;
  /** `key=value` or `key` (present). */
  readonly label?: string;
  /** Objects some version of which this actor wrote. */
  readonly actor?: string;
  /** Narrow to one object, with its owners and everything it owns. */
  readonly key?: string;
}

const hasLabel = (object: ObjectTimeline, selector: string): boolean => {
  const [name = '', value] = selector.split('=', 2).map((s) => s.trim());
  return object.labels.some((labels) => Object.hasOwn(labels, name) && (value === undefined || labels[name] === value));
};

/**
 * The objects `filter` selects; narrowing to one object keeps its owner chain and
 * descendants. An Event about an object is kept with the object (as its marks).
 */
export const filterTimelines = (all: readonly ObjectTimeline[], filter: TimelineFilter): ObjectTimeline[] => {
  const { objects, events } = splitEvents(all);
  let selected = objects.filter(
    (o) => (!filter.kind || parseKey(o.key).kind === filter.kind) && (!filter.label || hasLabel(o, filter.label)) && (!filter.actor || o.actors.includes(filter.actor)),
  );
  if (filter.key) {
    const { lanes } = buildTimeline(selected);
    const byKey = new Map(lanes.map((l) => [l.key, l]));
    const keep = new Set<string>();
    for (let lane = byKey.get(filter.key); lane; lane = lane.parent ? byKey.get(lane.parent) : undefined) keep.add(lane.key);
    const descend = (key: string): void => {
      keep.add(key);
      for (const child of byKey.get(key)?.children ?? []) descend(child);
    };
    descend(filter.key);
    selected = selected.filter((o) => keep.has(o.key));
  }
  const kept = new Set(selected.map((o) => o.key));
  return [...selected, ...events.filter((e) => kept.has(e.lane)).map((e) => e.object)];
};
