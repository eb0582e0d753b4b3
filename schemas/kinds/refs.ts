/**
 * How a kind is named in event and object keys: its kind ref. Keys read
 * `<kindRef>/<namespace>/<name>` (`<kindRef>//<name>` for cluster-scoped kinds).
 *
 * The ref is the bare kind for the core group and for `apps`, and `Kind.group` for every
 * other group: `Pod`, `Deployment`, `Job.batch`, `Event.events.k8s.io`. The bare form for
 * core and apps keeps every key written before groups existed (`Pod/…`, `Deployment/…`,
 * `ReplicaSet/…`) byte for byte, so old logs replay and hash to the same partitions; no two
 * kinds of those two groups share a name. Every other group is qualified, so core/v1 Event
 * and events.k8s.io/v1 Event, and custom resources (whose groups always contain a dot),
 * never collide. Kind names have no dot, so the first dot of a ref ends the kind.
 */

/** The groups whose kinds are named without their group in keys. */
export const UNQUALIFIED_GROUPS: ReadonlySet<string> = new Set(['', 'apps']);

/** The kind ref of `kind` in `group`. */
export const kindRefOf = (group: string, kind: string): string => (UNQUALIFIED_GROUPS.has(group) ? kind : `${kind}.${group}`);

/**
 * The kind and, when the ref carries it, the group of a kind ref; a bare ref names a kind
 * of the core group or of apps, which the registry tells apart.
 */
export const splitKindRef = (ref: string): { kind: string; group: string | null } => {
  const dot = ref.indexOf('.');
  return dot < 0 ? { kind: ref, group: null } : { kind: ref.slice(0, dot), group: ref.slice(dot + 1) };
};

/** The kind ref of an object key (everything before its first `/`). */
export const kindRefOfKey = (objectKey: string): string => {
  const slash = objectKey.indexOf('/');
  return slash < 0 ? objectKey : objectKey.slice(0, slash);
};
