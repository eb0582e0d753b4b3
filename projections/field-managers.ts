/**
 * Which field managers a version's change was written by: the `managedFields` entries that
 * are new or different (time or owned fields) from the version before, as kube-apiserver
 * updates them on every create, update, patch and apply (the request's `fieldManager`).
 * `logplane history` and `why` say it beside the diff, which makes field ownership auditable
 * version by version from the log.
 */
import type { KubeObject } from '../schemas/index.ts';

/** A manager whose entry a version's change wrote. */
export interface ManagerChange {
  readonly manager: string;
  /** `Apply` or `Update`. */
  readonly operation: string;
  /** `status`, `scale` … when the entry is a subresource's. */
  readonly subresource?: string;
}

type Entry = NonNullable<KubeObject['metadata']['managedFields']>[number];

const entryKey = (entry: Entry): string => `${entry.manager ?? ''}\u0000${entry.operation ?? ''}\u0000${entry.subresource ?? ''}`;

const sameEntry = (a: Entry, b: Entry): boolean => a.time === b.time && JSON.stringify(a.fieldsV1 ?? null) === JSON.stringify(b.fieldsV1 ?? null);

/** The managers whose entries `current` has new or changed against `previous` (none when neither has managed fields). */
export const managersChanged = (previous: KubeObject | null, current: KubeObject | null): ManagerChange[] => {
  const before = new Map((previous?.metadata.managedFields ?? []).map((entry) => [entryKey(entry), entry]));
  const changed: ManagerChange[] = [];
  for (const entry of current?.metadata.managedFields ?? []) {
    const old = before.get(entryKey(entry));
    if (old && sameEntry(old, entry)) continue;
    changed.push({ manager: entry.manager ?? '', operation: entry.operation ?? '', ...(entry.subresource ? { subresource: entry.subresource } : {}) });
  }
  return changed;
};

/** `kubectl-edit (Update)`, `kubectl (Apply, status)`. */
export const formatManager = (change: ManagerChange): string =>
  `${change.manager || '(no manager)'} (${[change.operation, change.subresource].filter(Boolean).join(', ')})`;
