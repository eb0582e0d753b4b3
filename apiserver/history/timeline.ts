/**
 * `GET /logplane/v1/history?namespace=NS&view=timeline`: the bulk history as the dashboard's
 * timeline draws it, instead of whole objects. Per object: its owner's lane key, the object an
 * Event is about, the label sets and actors its versions had (the timeline's filters); and its
 * versions folded into what is drawn: a span per run of versions in one state (named and toned
 * by phase or condition, as `kubectl get` prints it) and generation, deletions, rejected writes,
 * and an Event's reports. Each names its event by its position (`eventPosition`: the list
 * resourceVersion just after it, the one format every CLI verb, route and page prints and
 * accepts; the object page reads the whole version from it when asked).
 * Paged exactly as the bulk history (the same `limit` counts versions read, the same
 * `continue`); an object's runs may continue on the next page, where a run in the same state
 * carries on.
 */
import { eventPositions, formatVector, historyPageEntries, entryStates, type EventAddress, type PageEntries, type Projection } from '../../projections/index.ts';
import type { Actor, KubeObject, Node, Pod } from '../../schemas/index.ts';
import { nodeStatus, podStatus } from '../tables.ts';
import { encodeToken, parseBulkQuery } from './bulk.ts';

/** What a span says about the object: how the dashboard colours it. */
export type Tone = 'ok' | 'progress' | 'bad' | 'gone' | 'neutral';

interface MarkBase {
  /** The event's position (`eventPosition`, e.g. `8.3`): the list resourceVersion just after it. */
  readonly at: string;
  readonly time: number;
  readonly actor: Actor;
  readonly eventType: string;
}

export type TimelineMark =
  | (MarkBase & {
      readonly type: 'span';
      readonly state: string;
      readonly tone: Tone;
      readonly generation?: number;
      /** How many versions the run stands for in this page. */
      readonly versions: number;
    })
  | (MarkBase & { readonly type: 'deleted' })
  | (MarkBase & { readonly type: 'rejected'; readonly message: string })
  | (MarkBase & { readonly type: 'event'; readonly reason: string; readonly message: string; readonly warning: boolean });

export interface ObjectTimeline {
  /** As the bulk history names it: `Kind[.group]/namespace/name`. */
  readonly key: string;
  /** The lane of the controlling (or first) owner of its latest version that had one: `Kind/namespace/name`. */
  readonly owner?: string;
  /** An Event's: the object it is about, `Kind/namespace/name`. */
  readonly involved?: string;
  /** Every distinct label set its versions had. */
  readonly labels: readonly Readonly<Record<string, string>>[];
  /** Every actor name that wrote a version of it, rejected writes too. */
  readonly actors: readonly string[];
  /** Oldest first. */
  readonly marks: readonly TimelineMark[];
}

export interface ObjectTimelineList {
  readonly kind: 'ObjectTimelineList';
  readonly apiVersion: 'logplane/v1';
  readonly metadata: { readonly resourceVersion: string; readonly continue?: string };
  readonly items: readonly ObjectTimeline[];
}

const condition = (object: KubeObject, type: string): string | undefined => {
  const conditions = ((object as { status?: unknown }).status as { conditions?: readonly { type?: string; status?: string }[] } | undefined)?.conditions;
  return Array.isArray(conditions) ? conditions.find((c) => c.type === type)?.status : undefined;
};

const PROGRESSING_POD = new Set(['Pending', 'ContainerCreating', 'PodInitializing', 'Terminating', 'NotReady']);

/** The state a version is drawn as, and its tone. */
export const stateOf = (object: KubeObject, now: number): { state: string; tone: Tone } => {
  switch (object.kind) {
    case 'Pod': {
      const state = podStatus(object as Pod, now).status;
      if (state === 'Running') return { state, tone: condition(object, 'Ready') === 'False' ? 'progress' : 'ok' };
      if (state === 'Succeeded' || state === 'Completed') return { state, tone: 'neutral' };
      return { state, tone: PROGRESSING_POD.has(state) || state.startsWith('Init:') ? 'progress' : 'bad' };
    }
    case 'Deployment':
    case 'ReplicaSet': {
      const spec = (object.spec ?? {}) as { replicas?: unknown };
      const status = ((object as { status?: unknown }).status ?? {}) as { readyReplicas?: unknown };
      const desired = typeof spec.replicas === 'number' ? spec.replicas : 1;
      const ready = typeof status.readyReplicas === 'number' ? status.readyReplicas : 0;
      return { state: `${ready}/${desired} ready`, tone: desired === 0 ? 'neutral' : ready >= desired ? 'ok' : 'progress' };
    }
    case 'Node': {
      const state = nodeStatus(object as Node);
      return { state, tone: state.startsWith('Ready') ? 'ok' : 'bad' };
    }
    case 'Namespace': {
      const phase = ((object as { status?: unknown }).status as { phase?: unknown } | undefined)?.phase;
      const state = typeof phase === 'string' ? phase : 'Active';
      return { state, tone: state === 'Active' ? 'ok' : 'progress' };
    }
    default:
      return { state: 'exists', tone: 'neutral' };
  }
};

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

const ownerOf = (object: KubeObject): string | undefined => {
  const owners = object.metadata.ownerReferences;
  const owner = owners?.find((o) => o.controller) ?? owners?.[0];
  return owner ? `${owner.kind}/${object.metadata.namespace ?? ''}/${owner.name}` : undefined;
};

const involvedOf = (object: KubeObject): string | undefined => {
  const involved = (object as { involvedObject?: { kind?: unknown; namespace?: unknown; name?: unknown } }).involvedObject;
  return involved && typeof involved.kind === 'string' && typeof involved.name === 'string'
    ? `${involved.kind}/${typeof involved.namespace === 'string' ? involved.namespace : ''}/${involved.name}`
    : undefined;
};

/** The timeline of one object's part of a page. */
export const objectTimeline = (part: PageEntries, now: number, positionOf: (event: EventAddress) => string): ObjectTimeline => {
  const isEvent = part.key.startsWith('Event/') || part.key.startsWith('Event.');
  const marks: TimelineMark[] = [];
  const labels = new Map<string, Readonly<Record<string, string>>>();
  const actors = new Set<string>();
  let owner: string | undefined;
  let involved: string | undefined;
  let seenObject = false;
  let run: { -readonly [K in keyof Extract<TimelineMark, { type: 'span' }>]: Extract<TimelineMark, { type: 'span' }>[K] } | undefined;
  for (const { entry, object } of entryStates(part)) {
    actors.add(entry.actor.name);
    const base: MarkBase = { at: positionOf(entry), time: entry.time, actor: entry.actor, eventType: entry.eventType };
    if (entry.verdict.type === 'rejected') {
      marks.push({ ...base, type: 'rejected', message: entry.verdict.message });
      continue;
    }
    if (entry.change === null) continue;
    if (entry.change === 'DELETED' || object === null) {
      run = undefined;
      marks.push({ ...base, type: 'deleted' });
      continue;
    }
    // The desired part (labels, owners, the Event's subject) changes only with desired events.
    if (entry.topic === 'desired' || !seenObject) {
      seenObject = true;
      const set = object.metadata.labels ?? {};
      const id = JSON.stringify(set);
      if (!labels.has(id)) labels.set(id, set);
      owner = ownerOf(object) ?? owner;
      if (isEvent) involved = involvedOf(object) ?? involved;
    }
    if (isEvent) {
      const event = object as Record<string, unknown>;
      marks.push({ ...base, type: 'event', reason: text(event['reason']), message: text(event['message']), warning: event['type'] === 'Warning' });
      continue;
    }
    const { state, tone } = stateOf(object, now);
    const generation = object.metadata.generation;
    if (run && run.state === state && run.tone === tone && run.generation === generation) {
      run.versions++;
      continue;
    }
    run = { ...base, type: 'span', state, tone, ...(generation === undefined ? {} : { generation }), versions: 1 };
    marks.push(run);
  }
  return {
    key: part.key,
    ...(owner !== undefined && owner !== part.key ? { owner } : {}),
    ...(involved !== undefined ? { involved } : {}),
    labels: [...labels.values()],
    actors: [...actors],
    marks,
  };
};

/** The timeline view of the bulk history reply to `query`; bad parameters are 400s naming them (as `bulkHistory`). */
export const bulkTimeline = (projection: Projection, query: URLSearchParams, now = Date.now()): ObjectTimelineList => {
  const { namespace, upTo, pageQuery } = parseBulkQuery(projection, query);
  const page = historyPageEntries(projection.store, pageQuery);
  const resourceVersion = formatVector(upTo);
  const positionOf = eventPositions(projection.store, projection.partitions);
  return {
    kind: 'ObjectTimelineList',
    apiVersion: 'logplane/v1',
    metadata: {
      resourceVersion,
      ...(page.next ? { continue: encodeToken({ rv: resourceVersion, ns: namespace, ...page.next }) } : {}),
    },
    items: page.items.map((part) => objectTimeline(part, now, positionOf)),
  };
};
