/**
 * The event recorder of one decision (client-go's EventRecorder with its correlator, as
 * commands): `event(object, type, reason, message)` makes kube's core/v1 Event, correlates
 * it against the Events of the view (and those this decision already recorded), and
 * `commands()` gives one ObjectCreated per new Event and one ObjectUpdated per Event seen
 * again (judged against the resourceVersion it was read at, so two writers of one count
 * cannot both win). Pure: the view and `now` are its only inputs. Shared by the controllers
 * (reconcilers/events) and the node agents (kubelet's Events).
 */
import type { Event, EventBody, KubeObject, ObjectReference } from '../schemas/index.ts';
import { kindRef } from '../schemas/keys.ts';
import { correlate, spamKey } from './event-correlator.ts';
import type { View } from './view.ts';

/** Who records (v1.EventSource): kube's component names, e.g. `replicaset-controller`. */
export interface EventSource {
  readonly component: string;
  readonly host?: string;
}

/** Normal or Warning, as core/v1 defines them. */
export type EventType = 'Normal' | 'Warning';

/** The recorder one decision writes its Events through. */
export interface Recorder {
  /** Records an Event about `object` (kube's `Eventf(object, type, reason, message)`). */
  event(object: KubeObject, type: EventType, reason: string, message: string, fieldPath?: string): void;
  /** The commands that write what was recorded, in recording order. */
  commands(): EventBody[];
}

/** reference.GetReference: what an Event's involvedObject says about `object`. */
export const referenceTo = (object: KubeObject, fieldPath?: string): ObjectReference => ({
  apiVersion: object.apiVersion,
  kind: object.kind,
  name: object.metadata.name,
  ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
  ...(object.metadata.uid ? { uid: object.metadata.uid } : {}),
  ...(object.metadata.resourceVersion ? { resourceVersion: object.metadata.resourceVersion } : {}),
  ...(fieldPath ? { fieldPath } : {}),
});

/** FNV-1a of `text` (32 bits), to spread the name suffixes of different sources. */
const fnv1a = (text: string): number => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
};

const time = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const EVENT_REF = kindRef('Event');

/** What an update writes: the next Event without the resourceVersion it was read at (the command carries that) or the view's status. */
const withoutVersion = (event: Event): Event => {
  const copy = structuredClone(event) as Event & { status?: unknown };
  delete copy.status;
  delete copy.metadata.resourceVersion;
  return copy;
};

/** Creates the recorder of one decision on `view` at `now`. */
export const createRecorder = (view: View, now: number, source: EventSource): Recorder => {
  /** Event key → what the view held (undefined: created by this decision) and its next state. */
  const touched = new Map<string, { readonly current: Event | undefined; next: Event }>();
  const keyOfEvent = (namespace: string, name: string): string => `${EVENT_REF}/${namespace}/${name}`;

  // kube names Events `<object>.<hex UnixNano>`; one decision has one `now`, so the
  // nanoseconds below it number the decision's Events (offset by source, so two
  // controllers recording about one object in the same millisecond rarely meet), skipping
  // names the view or this decision already holds.
  let sequence = (fnv1a(source.component) % 1000) * 1000;
  const nextName = (namespace: string, objectName: string): string => {
    for (;;) {
      const name = `${objectName}.${(BigInt(now) * 1_000_000n + BigInt(sequence++ % 1_000_000)).toString(16)}`;
      const key = keyOfEvent(namespace, name);
      if (!touched.has(key) && view.get(key) === undefined) return name;
    }
  };

  /** The Events about the object named `name` in `namespace` (their names start `<name>.`), as this decision left them. */
  const eventsNamedFor = (namespace: string, name: string): Event[] => {
    const prefix = keyOfEvent(namespace, `${name}.`);
    const found: Event[] = [];
    for (const key of view.keys('Event', namespace, prefix)) {
      if (!key.startsWith(prefix)) break;
      if (touched.has(key)) continue;
      const event = view.get(key);
      if (event?.kind === 'Event') found.push(event);
    }
    for (const [key, entry] of touched) if (key.startsWith(prefix)) found.push(entry.next);
    return found;
  };

  /**
   * Spam keys whose bucket this decision found empty: its `now` does not move, so the bucket
   * cannot refill before the decision ends (the 500 creates of one round cost one check each).
   */
  const exhausted = new Set<string>();

  const record = (ref: ObjectReference, type: EventType, reason: string, message: string): void => {
    const namespace = ref.namespace || 'default';
    const objectName = ref.name ?? '';
    const incoming: Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: '', namespace },
      involvedObject: ref,
      reason,
      message,
      firstTimestamp: time(now),
      lastTimestamp: time(now),
      count: 1,
      type,
      source: { component: source.component, ...(source.host ? { host: source.host } : {}) },
      reportingComponent: source.component,
      reportingInstance: source.host ?? '',
    };
    const bucket = spamKey(incoming);
    if (exhausted.has(bucket)) return;
    incoming.metadata.name = nextName(namespace, objectName);
    const correlation = correlate(incoming, eventsNamedFor(namespace, objectName), now, () => nextName(namespace, objectName));
    if (correlation.type === 'skip') {
      exhausted.add(bucket);
      return;
    }
    const key = keyOfEvent(namespace, correlation.event.metadata.name);
    const entry = touched.get(key);
    if (entry) {
      entry.next = correlation.event;
      return;
    }
    const current = correlation.type === 'update' ? view.get(key) : undefined;
    touched.set(key, { current: current?.kind === 'Event' ? current : undefined, next: correlation.event });
  };

  return {
    event: (object, type, reason, message, fieldPath) => record(referenceTo(object, fieldPath), type, reason, message),
    commands: () =>
      [...touched.values()].map(({ current, next }): EventBody =>
        current
          ? { type: 'ObjectUpdated', object: withoutVersion(next), expectedResourceVersion: current.metadata.resourceVersion ?? null, subresource: null }
          : { type: 'ObjectCreated', object: next },
      ),
  };
};
