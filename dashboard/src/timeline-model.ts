/**
 * The data of the timeline, from object histories (`/logplane/v1/history/...`): one lane per
 * object, nested under its controlling owner (Deployment → ReplicaSet → Pod), and on each
 * lane one span per run of versions in one state (named and coloured by the object's phase or
 * condition), with deletions, rejected writes and the object's Kubernetes Events as marks.
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

export interface ObjectHistory {
  /** `Kind/namespace/name` (namespace empty for cluster-scoped kinds). */
  readonly key: string;
  readonly versions: readonly Version[];
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

export type Mark =
  | {
      readonly type: 'span';
      readonly id: string;
      readonly lane: string;
      readonly start: number;
      /** Undefined while it lasts (the object is still at this version now). */
      readonly end: number | undefined;
      readonly state: string;
      readonly tone: Tone;
      /** The first version of the run. */
      readonly version: Version;
      /** How many versions the span stands for (a run of versions in the same state and generation). */
      readonly versions: number;
    }
  | { readonly type: 'deleted' | 'rejected'; readonly id: string; readonly lane: string; readonly at: number; readonly version: Version }
  | {
      /** A Kubernetes Event about the lane's object (a version of the Event: its first report or a repeat). */
      readonly type: 'event';
      readonly id: string;
      readonly lane: string;
      readonly at: number;
      readonly reason: string;
      readonly message: string;
      readonly warning: boolean;
      readonly version: Version;
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

/** The lane key of an object's controlling owner (or first owner). */
const ownerKey = (history: ObjectHistory): string | undefined => {
  const { namespace } = parseKey(history.key);
  for (let i = history.versions.length - 1; i >= 0; i--) {
    const owners = history.versions[i]!.object?.metadata.ownerReferences;
    const owner = owners?.find((o) => o.controller) ?? owners?.[0];
    if (owner) return `${owner.kind}/${namespace}/${owner.name}`;
  }
  return undefined;
};

const KIND_ORDER = ['Namespace', 'Node', 'Deployment', 'ReplicaSet', 'Pod', 'Service', 'Endpoints'];
const kindRank = (kind: string): number => {
  const index = KIND_ORDER.indexOf(kind);
  return index < 0 ? KIND_ORDER.length : index;
};
const firstTime = (history: ObjectHistory): number => history.versions[0]?.time ?? 0;

/** The lane key of the object a Kubernetes Event is about, if `history` is an Event's. */
export const involvedKey = (history: ObjectHistory): string | undefined => {
  if (parseKey(history.key).kind !== 'Event') return undefined;
  for (let i = history.versions.length - 1; i >= 0; i--) {
    const involved = history.versions[i]!.object?.['involvedObject'] as { kind?: unknown; namespace?: unknown; name?: unknown } | undefined;
    if (involved && typeof involved.kind === 'string' && typeof involved.name === 'string') {
      return `${involved.kind}/${typeof involved.namespace === 'string' ? involved.namespace : ''}/${involved.name}`;
    }
  }
  return undefined;
};

/** The histories of Events whose object is among `histories` (they become marks on its lane), and the rest. */
const splitEvents = (histories: readonly ObjectHistory[]): { objects: ObjectHistory[]; events: { history: ObjectHistory; lane: string }[] } => {
  const keys = new Set(histories.map((h) => h.key));
  const objects: ObjectHistory[] = [];
  const events: { history: ObjectHistory; lane: string }[] = [];
  for (const history of histories) {
    const lane = involvedKey(history);
    if (lane !== undefined && keys.has(lane)) events.push({ history, lane });
    else objects.push(history);
  }
  return { objects, events };
};

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * Lanes and marks of `histories` (a timeline that starts at each object's first event and
 * runs to `now`). Consecutive versions in the same state and generation are one span (a
 * pod's status reports while it runs); an Event about an object on the timeline is a mark on
 * that object's lane rather than a lane of its own.
 */
export const buildTimeline = (all: readonly ObjectHistory[]): Timeline => {
  const { objects: histories, events } = splitEvents(all);
  const byKey = new Map(histories.map((h) => [h.key, h]));
  const parents = new Map<string, string>();
  for (const history of histories) {
    const owner = ownerKey(history);
    if (owner !== undefined && owner !== history.key && byKey.has(owner)) parents.set(history.key, owner);
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
  for (const history of histories) {
    const { kind } = parseKey(history.key);
    const accepted = history.versions.filter((v) => v.verdict.type === 'accepted' && v.change !== null);
    let run: { first: Version; index: number; state: string; tone: Tone; generation: number | undefined; count: number } | undefined;
    const endRun = (end: number | undefined): void => {
      if (!run) return;
      marks.push({ type: 'span', id: `${history.key}@${run.first.position}#${run.index}`, lane: history.key, start: run.first.time, end, state: run.state, tone: run.tone, version: run.first, versions: run.count });
      run = undefined;
    };
    accepted.forEach((version, index) => {
      if (version.change === 'DELETED' || version.object === null) {
        endRun(version.time);
        marks.push({ type: 'deleted', id: `${history.key}@${version.position}#${index}`, lane: history.key, at: version.time, version });
        return;
      }
      const { state, tone } = stateOf(kind, version.object);
      const generation = version.object.metadata.generation;
      if (run && run.state === state && run.tone === tone && run.generation === generation) {
        run.count++;
        return;
      }
      endRun(version.time);
      run = { first: version, index, state, tone, generation, count: 1 };
    });
    endRun(undefined);
    history.versions.forEach((version, index) => {
      if (version.verdict.type === 'rejected') marks.push({ type: 'rejected', id: `${history.key}@${version.position}!${index}`, lane: history.key, at: version.time, version });
    });
  }
  for (const { history, lane } of events) {
    history.versions.forEach((version, index) => {
      if (version.verdict.type !== 'accepted' || version.change === null || version.change === 'DELETED' || !version.object) return;
      const event = version.object;
      marks.push({
        type: 'event',
        id: `${history.key}@${version.position}~${index}`,
        lane,
        at: version.time,
        reason: text(event['reason']),
        message: text(event['message']),
        warning: event['type'] === 'Warning',
        version,
      });
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

const hasLabel = (history: ObjectHistory, selector: string): boolean => {
  const [name = '', value] = selector.split('=', 2).map((s) => s.trim());
  return history.versions.some((v) => {
    const labels = v.object?.metadata.labels ?? {};
    return Object.hasOwn(labels, name) && (value === undefined || labels[name] === value);
  });
};

/**
 * The histories `filter` selects; narrowing to one object keeps its owner chain and
 * descendants. An Event about an object is kept with the object (as its mark).
 */
export const filterHistories = (all: readonly ObjectHistory[], filter: TimelineFilter): ObjectHistory[] => {
  const { objects: histories, events } = splitEvents(all);
  let selected = histories.filter(
    (h) =>
      (!filter.kind || parseKey(h.key).kind === filter.kind) &&
      (!filter.label || hasLabel(h, filter.label)) &&
      (!filter.actor || h.versions.some((v) => v.actor.name === filter.actor)),
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
    selected = selected.filter((h) => keep.has(h.key));
  }
  const kept = new Set(selected.map((h) => h.key));
  return [...selected, ...events.filter((e) => kept.has(e.lane)).map((e) => e.history)];
};
