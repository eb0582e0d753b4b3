/**
 * Revision bookkeeping of a Deployment's current ReplicaSet, as kube's
 * `SetNewReplicaSetAnnotations` (pkg/controller/deployment/util, 1.32): the Deployment's
 * own annotations (`kubernetes.io/change-cause` …) are copied onto it on every sync, its
 * revision only ever grows (to max(old revisions) + 1 when an old ReplicaSet becomes
 * current again, as after `rollout undo`), and the revisions it had before are kept in
 * `deployment.kubernetes.io/revision-history`, at most 2,000 characters, oldest dropped.
 */
import type { Deployment, ReplicaSet } from '../../schemas/index.ts';
import { NOT_COPIED_ANNOTATIONS, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION } from './template.ts';

/** kube-controller-manager's `maxRevHistoryLengthInChars`. */
export const MAX_REVISION_HISTORY_CHARS = 2000;

/** `history` (a comma-separated list) with `previous` appended, oldest entries dropped to stay within `limit` characters. */
export const appendRevisionHistory = (history: string | undefined, previous: string, limit = MAX_REVISION_HISTORY_CHARS): string => {
  if (!history) return previous;
  const revisions = history.split(',');
  let total = history.length + previous.length + 1;
  let start = 0;
  while (total > limit && start < revisions.length) {
    total -= (revisions[start] ?? '').length + 1;
    start++;
  }
  // kube leaves the annotation as it was when even the newest entry alone is too long.
  return total <= limit ? [...revisions.slice(start), previous].join(',') : history;
};

/** The revision text of `rs` as a number: 0 when absent, undefined when present but not an integer. */
const parsedRevision = (rs: ReplicaSet): number | undefined => {
  const text = rs.metadata.annotations?.[REVISION_ANNOTATION];
  if (text === undefined || text === '') return 0;
  return /^\d+$/.test(text) ? Number(text) : undefined;
};

/**
 * The annotations the current ReplicaSet `rs` of `d` should carry when the next revision
 * would be `newRevision`; undefined when they are already right. The Deployment's
 * annotations (but the ones kube never copies) overwrite the ReplicaSet's; none are removed.
 */
export const currentReplicaSetAnnotations = (d: Deployment, rs: ReplicaSet, newRevision: number): Record<string, string> | undefined => {
  const annotations: Record<string, string> = { ...rs.metadata.annotations };
  let changed = false;
  for (const [key, value] of Object.entries(d.metadata.annotations ?? {})) {
    if (NOT_COPIED_ANNOTATIONS.has(key) || annotations[key] === value) continue;
    annotations[key] = value;
    changed = true;
  }
  const previous = parsedRevision(rs);
  if (previous !== undefined && previous < newRevision) {
    annotations[REVISION_ANNOTATION] = String(newRevision);
    changed = true;
    if (previous > 0) {
      annotations[REVISION_HISTORY_ANNOTATION] = appendRevisionHistory(annotations[REVISION_HISTORY_ANNOTATION], String(previous));
    }
  }
  return changed ? annotations : undefined;
};
