/**
 * The moment the pages show: the present (live, watch-driven) or a past moment `at`, read
 * from the projection's history through `/logplane/v1/at` (no replay).
 */
import { get, type KubeObject } from './api.ts';
import { currentRoute } from './route.ts';

/** The `at` of the page's address, or undefined for the present. */
export const pastMoment = (): string | undefined => {
  const at = currentRoute().query.get('at');
  return at === null || at === '' ? undefined : at;
};

/** The reply of `/logplane/v1/at`. */
export interface ClusterAt {
  /** The moment, resolved to a list resourceVersion. */
  readonly position: string;
  readonly objects: readonly KubeObject[];
}

/** The objects of `kind` (in `namespace`, or all; named `name`, or all) at moment `at`. */
export const objectsAt = (at: string, kind: string, namespace?: string, name?: string): Promise<ClusterAt> => {
  const query = new URLSearchParams({ at, kind });
  if (namespace) query.set('namespace', namespace);
  if (name) query.set('name', name);
  return get<ClusterAt>(`/logplane/v1/at?${query.toString()}`);
};

/** A moment's epoch milliseconds when it is one (the slider's values are), else undefined. */
export const momentMillis = (at: string): number | undefined => (/^\d{10,}$/.test(at) ? Number(at) : undefined);
