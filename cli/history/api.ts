/**
 * The `/logplane/v1` history API as the CLI calls it: reply types and one function per
 * endpoint. Moments are sent as the user typed them (checked by `momentArgument`); every
 * position in a reply is a list resourceVersion (`42.17`).
 */
import type { ManagerChange } from '../../projections/field-managers.ts';
import type { FieldChange, Verdict, VersionView as Version } from '../../projections/index.ts';
import type { Actor, BindingRationale, EventBody, KubeObject } from '../../schemas/index.ts';
import type { Client, Query } from '../client.ts';

/** The history API's wire types are the projection's own (apiserver/history serves them as JSON). */
export type { FieldChange, Verdict, Version };

export interface HistoryReply {
  readonly versions: readonly Version[];
}

export interface PositionReply {
  readonly resourceVersion: string;
  readonly time: number;
}

export interface AtReply {
  readonly position: string;
  readonly objects: readonly KubeObject[];
}

export interface DiffReply {
  readonly from: string;
  readonly to: string;
  readonly created: readonly KubeObject[];
  readonly deleted: readonly KubeObject[];
  readonly changed: readonly { readonly before: KubeObject; readonly after: KubeObject; readonly diff: readonly FieldChange[] }[];
}

/** An event as the history indexes record it. */
export interface EventRecord {
  readonly id: string;
  /** The list resourceVersion just after the event: the cluster as it was right after it (what `get --at` takes). */
  readonly position: string;
  readonly topic?: string;
  readonly partition?: number;
  readonly offset?: number;
  readonly key: string;
  readonly eventType: string;
  readonly time: number;
  readonly actor: Actor;
  readonly causationId?: string | null;
  readonly correlationId?: string;
  /** For a controller's decision: the position of the view it read (what `debug reconcile --at` takes). */
  readonly decidedAt?: string | null;
  readonly verdict: Verdict;
}

/** One link of a causation chain. */
export interface CauseLink {
  readonly event: EventRecord;
  readonly rationale?: BindingRationale;
  readonly summary: string;
  /** The scheduler's PodScheduled message, for its status write of a pod it could not bind. */
  readonly scheduling?: string;
  /** For a create or update: the field managers whose `managedFields` entries it wrote. */
  readonly managers?: readonly ManagerChange[];
}

export interface WhyReply {
  /** Each chain newest first: from one of the object's latest events back to the user request. */
  readonly chains: readonly (readonly CauseLink[])[];
}

export interface AuditReply {
  readonly events: readonly EventRecord[];
}

/** One line of the replay stream. */
export type ReplayLine =
  | { readonly type: 'progress'; readonly applied: number; readonly total: number }
  | {
      readonly type: 'result';
      readonly events: number;
      readonly seconds: number;
      readonly eventsPerSecond: number;
      readonly stateHash: string;
      readonly liveStateHash: string | null;
      readonly position: string;
    }
  | { readonly type: 'error'; readonly message: string };

export interface ReconcileReply {
  readonly controller: string;
  readonly key: string;
  readonly at: string;
  readonly commands: readonly EventBody[];
  readonly recorded: readonly EventBody[];
  readonly identical: boolean;
}

const BASE = '/logplane/v1';

/** `Kind/ns/name` (or `Kind//name`) as the path of the per-object endpoints. */
const keyPath = (key: string): string => {
  const [kind = '', namespace = '', name = ''] = key.split('/');
  return `${encodeURIComponent(kind)}/${namespace === '' ? '_' : encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
};

/** The history API of one server. */
export const historyApi = (client: Client) => ({
  position: (): Promise<PositionReply> => client.get(`${BASE}/position`),
  history: (key: string): Promise<HistoryReply> => client.get(`${BASE}/history/${keyPath(key)}`),
  at: (moment: string, filter: { kind?: string; namespace?: string; name?: string } = {}): Promise<AtReply> =>
    client.get(`${BASE}/at`, { at: moment, ...filter }),
  diff: (from: string, to: string): Promise<DiffReply> => client.get(`${BASE}/diff`, { from, to }),
  why: (key: string): Promise<WhyReply> => client.get(`${BASE}/why/${keyPath(key)}`),
  audit: (query: { user?: string; since?: string; until?: string; kind?: string; limit?: number; all?: boolean }): Promise<AuditReply> =>
    client.get(`${BASE}/audit`, query as Query),
  replay: (query: { to?: string; into?: string }): AsyncGenerator<ReplayLine> =>
    client.ndjson<ReplayLine>('POST', `${BASE}/replay`, { query }),
  reconcile: (query: { controller: string; key: string; at: string }): Promise<ReconcileReply> =>
    client.get(`${BASE}/debug/reconcile`, query),
});

/** The history API of one server. */
export type HistoryApi = ReturnType<typeof historyApi>;
