/**
 * The Kubernetes Events (core/v1) about one object, as its page lists them: which Events
 * are about it (the field selector the Events API is asked with, and the same test applied
 * to a past moment's Events), and the rows, newest first. Pure: no DOM, no requests.
 */
import type { KubeObject } from './api.ts';

/** The object an Event is about, as the page names it. */
export interface Involved {
  readonly kind: string;
  /** '' for a cluster-scoped object. */
  readonly namespace: string;
  readonly name: string;
}

/** One row of the Events table. */
export interface EventRow {
  readonly name: string;
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  /** Who reported it (`source.component`, or `reportingComponent`/`reportingController`). */
  readonly from: string;
  readonly count: number;
  /** When it was last seen (epoch ms), from its timestamps; 0 when it has none. */
  readonly lastSeen: number;
}

/** The `fieldSelector` that lists the Events about `involved` (kubectl describe's). */
export const eventsSelector = (involved: Involved): string =>
  [`involvedObject.kind=${involved.kind}`, `involvedObject.name=${involved.name}`, ...(involved.namespace ? [`involvedObject.namespace=${involved.namespace}`] : [])].join(',');

type Fields = Readonly<Record<string, unknown>>;

const field = (object: Fields | undefined, name: string): unknown => (object && typeof object === 'object' ? object[name] : undefined);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const millis = (value: unknown): number => {
  const parsed = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isNaN(parsed) ? 0 : parsed;
};

/** Whether `event` is about `involved` (the selector's test, for Events read at a past moment). */
export const isAbout = (event: KubeObject, involved: Involved): boolean => {
  const about = field(event, 'involvedObject') as Fields | undefined;
  return text(field(about, 'kind')) === involved.kind && text(field(about, 'name')) === involved.name && text(field(about, 'namespace')) === involved.namespace;
};

/** The table row of an Event. */
export const eventRow = (event: KubeObject): EventRow => {
  const series = field(event, 'series') as Fields | undefined;
  const source = field(event, 'source') as Fields | undefined;
  const lastSeen = Math.max(
    millis(field(series, 'lastObservedTime')),
    millis(field(event, 'lastTimestamp')),
    millis(field(event, 'eventTime')),
    millis(field(event, 'firstTimestamp')),
    millis(event.metadata.creationTimestamp),
  );
  const count = field(series, 'count') ?? field(event, 'count');
  return {
    name: event.metadata.name,
    type: text(field(event, 'type')) || 'Normal',
    reason: text(field(event, 'reason')),
    message: text(field(event, 'message')),
    from: text(field(source, 'component')) || text(field(event, 'reportingComponent')) || text(field(event, 'reportingController')),
    count: typeof count === 'number' && count > 0 ? count : 1,
    lastSeen,
  };
};

/** The rows of the Events about `involved` among `events`, newest first. */
export const eventRows = (events: readonly KubeObject[], involved: Involved): EventRow[] =>
  events
    .filter((event) => isAbout(event, involved))
    .map(eventRow)
    .sort((a, b) => b.lastSeen - a.lastSeen || a.name.localeCompare(b.name));
