/**
 * events.k8s.io/v1 Event ⇄ core/v1 Event, as kube's pkg/apis/events/v1/conversion.go:
 * regarding ⇄ involvedObject, note ⇄ message, deprecatedSource ⇄ source,
 * deprecatedFirstTimestamp/LastTimestamp/Count ⇄ firstTimestamp/lastTimestamp/count,
 * reportingController ⇄ reportingComponent; every other field has one name in both.
 */
import { defined, type Conversion, type JsonObject } from './types.ts';

/** served name → stored name, for the fields that differ. */
const RENAMED: ReadonlyArray<readonly [served: string, stored: string]> = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
  ['reportingController', 'reportingComponent'],
];

const SHARED = ['metadata', 'eventTime', 'series', 'reportingInstance', 'action', 'reason', 'related', 'type'] as const;

const rename = (from: JsonObject, pairs: ReadonlyArray<readonly [string, string]>): JsonObject =>
  defined(Object.fromEntries([...SHARED.map((field) => [field, from[field]]), ...pairs.map(([source, target]) => [target, from[source]])]));

export const eventsV1Event: Conversion = {
  group: 'events.k8s.io',
  version: 'v1',
  kind: 'Event',
  definition: 'io.k8s.api.events.v1.Event',
  toStored: (served) => ({ apiVersion: 'v1', kind: 'Event', ...rename(served, RENAMED) }),
  fromStored: (stored) => ({
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    ...rename(
      stored,
      RENAMED.map(([served, storedName]) => [storedName, served] as const),
    ),
  }),
};
