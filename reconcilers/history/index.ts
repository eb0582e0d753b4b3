/**
 * ControllerRevision history, shared by the StatefulSet and DaemonSet controllers (kube's
 * `pkg/controller/history`): a revision's data is the strategic-merge patch that restores
 * its owner's pod template (`{"spec":{"template":{…,"$patch":"replace"}}}`), its name is
 * `<owner>-<hash>`, and old revisions no pod uses are deleted beyond `revisionHistoryLimit`.
 *
 * The hashes follow kube's algorithms (FNV-32 of the patch bytes and the collision count
 * for a StatefulSet's `HashControllerRevision`, FNV-32a of the template and the collision
 * count for a DaemonSet's `ComputeHash`, both rendered by `SafeEncodeString`) over
 * canonical JSON (sorted keys), so they are stable here but not byte-for-byte kube's (Go
 * serializes fields in declaration order; `ComputeHash` hashes a spew dump of the struct).
 */
import type { View } from '../../projections/index.ts';
import type { ControllerRevision, JsonValue, KubeObject, PodTemplateSpec } from '../../schemas/index.ts';
import { canonicalJson, controllerRef, controllerReferenceTo, deleteCommand, isControlledBy, parseTime, SAFE_ALPHABET, updateCommand } from '../replicaset/objects.ts';
import type { EventBody } from '../../schemas/index.ts';

/** The label a revision (and a DaemonSet's pods) carries its hash in; a StatefulSet's pods carry the revision's name in it. */
export const CONTROLLER_REVISION_HASH_LABEL = 'controller-revision-hash';

/** Longest owner name kept in a revision name (kube's `ControllerRevisionName` truncates to 223). */
const MAX_PREFIX_LENGTH = 223;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1 (multiply, then xor), 32 bits, as Go's `fnv.New32`. */
export const fnv32 = (bytes: Uint8Array, seed = FNV_OFFSET): number => {
  let hash = seed;
  for (const byte of bytes) hash = (Math.imul(hash, FNV_PRIME) ^ byte) >>> 0;
  return hash >>> 0;
};

/** FNV-1a (xor, then multiply), 32 bits, as Go's `fnv.New32a`. */
export const fnv32a = (bytes: Uint8Array, seed = FNV_OFFSET): number => {
  let hash = seed;
  for (const byte of bytes) hash = Math.imul(hash ^ byte, FNV_PRIME) >>> 0;
  return hash >>> 0;
};

/** kube's `rand.SafeEncodeString`: each character mapped into the alphabet without vowels and look-alike digits. */
export const safeEncodeString = (text: string): string =>
  [...Buffer.from(text, 'utf8')].map((byte) => SAFE_ALPHABET[byte % SAFE_ALPHABET.length]).join('');

/** The JSON `value` as canonical UTF-8 bytes (sorted keys, nulls and empty maps dropped). */
const canonicalBytes = (value: unknown): Buffer => Buffer.from(canonicalJson(value), 'utf8');

/** kube's `HashControllerRevision`: FNV-32 of the revision's data, then the probe (collision count) in decimal. */
export const hashControllerRevision = (data: JsonValue | undefined, probe?: number): string => {
  let hash = fnv32(canonicalBytes(data ?? null));
  if (probe !== undefined) hash = fnv32(Buffer.from(String(probe), 'utf8'), hash);
  return safeEncodeString(String(hash));
};

/** kube's `controller.ComputeHash` of a pod template: FNV-32a of the template, then the collision count (4 bytes, little endian). */
export const computeTemplateHash = (template: PodTemplateSpec, collisionCount?: number): string => {
  let hash = fnv32a(canonicalBytes(template));
  if (collisionCount !== undefined) {
    const count = Buffer.alloc(4);
    count.writeUInt32LE(collisionCount >>> 0);
    hash = fnv32a(count, hash);
  }
  return safeEncodeString(String(hash));
};

/** kube's `ControllerRevisionName`: `<prefix>-<hash>`, the prefix cut to 223 characters. */
export const controllerRevisionName = (prefix: string, hash: string): string =>
  `${prefix.length > MAX_PREFIX_LENGTH ? prefix.slice(0, MAX_PREFIX_LENGTH) : prefix}-${hash}`;

/** The patch a revision stores: the template, to be restored whole (`$patch: replace`). */
export const templatePatch = (template: PodTemplateSpec): JsonValue => {
  const plain = JSON.parse(canonicalJson(template) || '{}') as Record<string, JsonValue> | null;
  return { spec: { template: { ...(plain ?? {}), $patch: 'replace' } } };
};

/** The template a revision restores (its patch without the `$patch` directive); undefined when it holds none. */
export const templateOfRevision = (revision: ControllerRevision): PodTemplateSpec | undefined => {
  const data = revision.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const spec = data['spec'];
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return undefined;
  const template = spec['template'];
  if (template === null || typeof template !== 'object' || Array.isArray(template)) return undefined;
  const copy = structuredClone(template) as Record<string, JsonValue>;
  delete copy['$patch'];
  return copy as unknown as PodTemplateSpec;
};

/** kube's `EqualRevision`: the same data. */
export const equalRevision = (a: ControllerRevision, b: ControllerRevision): boolean => canonicalJson(a.data) === canonicalJson(b.data);

/** kube's `SortControllerRevisions` order: by revision, then creation time, then name. */
export const byRevision = (a: ControllerRevision, b: ControllerRevision): number => {
  if (a.revision !== b.revision) return a.revision - b.revision;
  const ta = parseTime(a.metadata.creationTimestamp) ?? 0;
  const tb = parseTime(b.metadata.creationTimestamp) ?? 0;
  if (ta !== tb) return ta - tb;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
};

/** The revisions `owner` controls (by uid), sorted {@link byRevision}. */
export const ownedRevisions = (owner: KubeObject, view: View): ControllerRevision[] =>
  view
    .ownedBy(owner.metadata.uid ?? '')
    .filter((o): o is ControllerRevision => o.kind === 'ControllerRevision' && isControlledBy(o, owner.metadata.uid))
    .sort(byRevision);

/** Revisions in `owner`'s namespace without a controller whose labels `selects` (kube's `AdoptControllerRevision` candidates). */
export const orphanRevisions = (owner: KubeObject, view: View, selects: (labels: Readonly<Record<string, string>> | undefined) => boolean): ControllerRevision[] =>
  (view.list('ControllerRevision', owner.metadata.namespace) as ControllerRevision[]).filter((r) => controllerRef(r) === undefined && selects(r.metadata.labels));

/** The commands that adopt `revisions` for `owner` (a controller reference added to each). */
export const adoptRevisions = (owner: KubeObject, revisions: readonly ControllerRevision[]): EventBody[] =>
  revisions.map((r) => updateCommand(r, { ...r, metadata: { ...r.metadata, ownerReferences: [...(r.metadata.ownerReferences ?? []), controllerReferenceTo(owner)] } }));

/** kube's `nextRevision`: one more than the highest revision of `revisions` (sorted), 1 for none. */
export const nextRevision = (revisions: readonly ControllerRevision[]): number => (revisions.at(-1)?.revision ?? 0) + 1;

export interface NewRevisionInput {
  readonly owner: KubeObject;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly data: JsonValue;
  readonly revision: number;
}

/** A ControllerRevision of `owner` (controlled by it, its annotations copied, as kube's controllers make them). */
export const newControllerRevision = (input: NewRevisionInput): ControllerRevision => {
  const annotations = input.owner.metadata.annotations;
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: input.name,
      namespace: input.owner.metadata.namespace ?? 'default',
      labels: { ...input.labels },
      ...(annotations && Object.keys(annotations).length > 0 ? { annotations: { ...annotations } } : {}),
      ownerReferences: [controllerReferenceTo(input.owner)],
    },
    data: input.data,
    revision: input.revision,
  };
};

/** A revision given a new revision number (a rollback to it: kube's `UpdateControllerRevision`). */
export const renumberCommand = (revision: ControllerRevision, number: number): EventBody => updateCommand(revision, { ...revision, revision: number });

/**
 * kube's `truncateHistory` / `cleanupHistory`: the deletes of the oldest revisions that are
 * not `live` (current, update, or used by a pod) beyond `limit` of them; none for a negative limit.
 */
export const truncateHistory = (revisions: readonly ControllerRevision[], live: ReadonlySet<string>, limit: number): EventBody[] => {
  const history = revisions.filter((r) => !live.has(r.metadata.name));
  if (limit < 0 || history.length <= limit) return [];
  return history.slice(0, history.length - limit).map((r) => deleteCommand(r));
};
