/**
 * Pod counts per controller, kept from the change feed (what kube's ReplicaSet and
 * Deployment controllers get from their expectations and informer caches): for every
 * (namespace, controller uid), how many pods it controls, how many are active, ready,
 * not finished, finished but not being deleted, and the label sets of its active pods;
 * and per namespace how many active pods have no controller (orphans to adopt).
 *
 * The ReplicaSet and Deployment decisions walked every pod of a 10,000-replica
 * ReplicaSet in every round to count them; with these counts a round reads only the
 * pods it acts on. Decisions use them only for a view at the projection's cursor (the
 * counts follow the same feed as the informer, so between batches both hold the state at
 * the cursor), and only where the answer is exact: availability with minReadySeconds > 0
 * depends on the decision's time and is still counted pod by pod. Tests compare them with
 * a count from scratch after random changes.
 */
import type { Subscription } from 'rxjs';
import { sameVector, type Projection, type View } from '../../projections/index.ts';
import type { Pod } from '../../schemas/index.ts';
import { controllerRef } from './objects.ts';
import { isPodActive, isPodFinished, isPodReady } from './pods.ts';

/** One distinct label map among the active pods of a controller (interned by content). */
export interface LabelSet {
  readonly labels: Readonly<Record<string, string>>;
  readonly signature: string;
}

/** The pods one controller (uid) controls in one namespace, counted. */
export interface ControlledPodCounts {
  /** Controlled pods in any state. */
  readonly pods: number;
  /** Not terminating and not finished (`isPodActive`). */
  readonly active: number;
  /** Active and Ready=True. */
  readonly ready: number;
  /** Not Succeeded or Failed (terminating ones included). */
  readonly notFinished: number;
  /** Succeeded or Failed and not being deleted (the ReplicaSet deletes them). */
  readonly finishedNotDeleting: number;
  /** Active pods per label set. */
  readonly labelSets: ReadonlyMap<LabelSet, number>;
}

export interface PodCounts {
  /** The counts of the pods in `namespace` controlled by `uid`; undefined when there are none. */
  controlled(namespace: string, uid: string): ControlledPodCounts | undefined;
  /** Active pods without a controller in `namespace`. */
  uncontrolledActive(namespace: string): number;
  /** Active pods of `counts` carrying every label of `labels`. */
  fullyLabeled(counts: ControlledPodCounts, labels: readonly (readonly [string, string])[]): number;
}

export const EMPTY_COUNTS: ControlledPodCounts = { pods: 0, active: 0, ready: 0, notFinished: 0, finishedNotDeleting: 0, labelSets: new Map() };

interface MutableCounts {
  pods: number;
  active: number;
  ready: number;
  notFinished: number;
  finishedNotDeleting: number;
  labelSets: Map<LabelSet, number>;
}

/** What one pod adds to the counts. */
interface Contribution {
  readonly namespace: string;
  /** Controller uid; undefined for a pod without a controller. */
  readonly owner: string | undefined;
  readonly active: boolean;
  readonly ready: boolean;
  readonly finished: boolean;
  readonly deleting: boolean;
  readonly labels: LabelSet;
}

const sameLabels = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>> | undefined): boolean => {
  const other = b ?? {};
  let count = 0;
  for (const key in a) {
    if (a[key] !== other[key]) return false;
    count += 1;
  }
  for (const _ in other) count -= 1;
  return count === 0;
};

const fullyLabeledOf = (counts: ControlledPodCounts, labels: readonly (readonly [string, string])[]): number => {
  let total = 0;
  for (const [set, count] of counts.labelSets) {
    let labeled = true;
    for (const [key, value] of labels) {
      if (set.labels[key] !== value) {
        labeled = false;
        break;
      }
    }
    if (labeled) total += count;
  }
  return total;
};

export interface PodCountsIndex extends PodCounts {
  /** Stops following the change feed. */
  close(): void;
}

/** Starts counting on `projection`: counts its current pods, then follows the change feed. */
export const createPodCounts = (projection: Projection): PodCountsIndex => {
  const byOwner = new Map<string, MutableCounts>();
  const orphans = new Map<string, number>();
  const contributions = new Map<string, Contribution>();
  const labelSets = new Map<string, LabelSet>();

  const ownerKey = (namespace: string, uid: string): string => `${namespace}\u0000${uid}`;

  const labelSetOf = (labels: Readonly<Record<string, string>> | undefined, previous: LabelSet | undefined): LabelSet => {
    if (previous && sameLabels(previous.labels, labels)) return previous;
    const entries = Object.entries(labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const signature = JSON.stringify(entries);
    let set = labelSets.get(signature);
    if (set === undefined) {
      set = { labels: Object.fromEntries(entries), signature };
      labelSets.set(signature, set);
    }
    return set;
  };

  const apply = (c: Contribution, sign: 1 | -1): void => {
    if (c.owner === undefined) {
      if (!c.active) return;
      const next = (orphans.get(c.namespace) ?? 0) + sign;
      if (next === 0) orphans.delete(c.namespace);
      else orphans.set(c.namespace, next);
      return;
    }
    const key = ownerKey(c.namespace, c.owner);
    let counts = byOwner.get(key);
    if (counts === undefined) {
      counts = { pods: 0, active: 0, ready: 0, notFinished: 0, finishedNotDeleting: 0, labelSets: new Map() };
      byOwner.set(key, counts);
    }
    counts.pods += sign;
    if (c.active) {
      counts.active += sign;
      if (c.ready) counts.ready += sign;
      const next = (counts.labelSets.get(c.labels) ?? 0) + sign;
      if (next === 0) counts.labelSets.delete(c.labels);
      else counts.labelSets.set(c.labels, next);
    }
    if (!c.finished) counts.notFinished += sign;
    else if (!c.deleting) counts.finishedNotDeleting += sign;
    if (counts.pods === 0) byOwner.delete(key);
  };

  const put = (key: string, pod: Pod): void => {
    const previous = contributions.get(key);
    const finished = isPodFinished(pod);
    const deleting = Boolean(pod.metadata.deletionTimestamp);
    const active = !deleting && !finished;
    const next: Contribution = {
      namespace: pod.metadata.namespace ?? '',
      owner: controllerRef(pod)?.uid,
      active,
      ready: active && isPodReady(pod),
      finished,
      deleting,
      labels: labelSetOf(pod.metadata.labels, previous?.labels),
    };
    if (previous) apply(previous, -1);
    apply(next, 1);
    contributions.set(key, next);
  };

  const drop = (key: string): void => {
    const previous = contributions.get(key);
    if (previous === undefined) return;
    apply(previous, -1);
    contributions.delete(key);
  };

  const subscription: Subscription = projection.changes$.subscribe((change) => {
    if (change.object.kind !== 'Pod') return;
    if (change.type === 'DELETED') drop(change.key);
    else put(change.key, change.object);
  });
  const live = projection.view();
  for (const pod of live.list('Pod') as Pod[]) put(`Pod/${pod.metadata.namespace ?? ''}/${pod.metadata.name}`, pod);

  return {
    controlled: (namespace, uid) => byOwner.get(ownerKey(namespace, uid)),
    uncontrolledActive: (namespace) => orphans.get(namespace) ?? 0,
    fullyLabeled: fullyLabeledOf,
    close: () => subscription.unsubscribe(),
  };
};

/** The counts of `pods` (a controller's pods) from scratch, as {@link PodCounts} keeps them. */
export const countPods = (pods: readonly Pod[]): ControlledPodCounts => {
  const counts: MutableCounts = { pods: 0, active: 0, ready: 0, notFinished: 0, finishedNotDeleting: 0, labelSets: new Map() };
  const sets = new Map<string, LabelSet>();
  for (const pod of pods) {
    counts.pods += 1;
    const active = isPodActive(pod);
    if (active) {
      counts.active += 1;
      if (isPodReady(pod)) counts.ready += 1;
      const entries = Object.entries(pod.metadata.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const signature = JSON.stringify(entries);
      let set = sets.get(signature);
      if (set === undefined) {
        set = { labels: Object.fromEntries(entries), signature };
        sets.set(signature, set);
      }
      counts.labelSets.set(set, (counts.labelSets.get(set) ?? 0) + 1);
    }
    if (!isPodFinished(pod)) counts.notFinished += 1;
    else if (!pod.metadata.deletionTimestamp) counts.finishedNotDeleting += 1;
  }
  return counts;
};

/** The pod counts shared by the controllers on one projection (closed with the last). */
const shared = new WeakMap<Projection, { counts: PodCountsIndex; users: number }>();

/**
 * The pod counts a controller attaches to (shared per projection): `countsFor(view)` gives
 * them for a view at the projection's cursor and undefined for any other view (a past one,
 * for `debug reconcile`, or before `attach`), which the decisions then count from scratch.
 */
export const createPodCountsAttachment = (): {
  attach(projection: Projection): () => void;
  countsFor(view: View): PodCounts | undefined;
} => {
  let attached: { projection: Projection; counts: PodCountsIndex } | undefined;
  return {
    attach: (projection) => {
      const entry = shared.get(projection) ?? { counts: createPodCounts(projection), users: 0 };
      entry.users += 1;
      shared.set(projection, entry);
      const current = { projection, counts: entry.counts };
      attached = current;
      return () => {
        if (attached === current) attached = undefined;
        if (--entry.users > 0) return;
        entry.counts.close();
        shared.delete(projection);
      };
    },
    countsFor: (view) => (attached && sameVector(view.position, attached.projection.cursor()) ? attached.counts : undefined),
  };
};
