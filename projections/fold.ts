/**
 * The deterministic fold: `(state, event, position) → (state', verdict)`.
 *
 * Preconditions (name already taken, stale resourceVersion, pod already bound, node out of
 * capacity) are judged here, in log order, so every replica of a projection reaches the
 * same verdict (DESIGN invariant 1). The fold reads and writes only through `FoldState`;
 * it never looks at a clock, a random source or anything outside the log.
 *
 * Desired events touch only the desired part of objects and observed events only the
 * status part, so the result does not depend on how the two topics interleave.
 */
import { assertNever, type EventEnvelope, type KubeObject, type Pod } from '../schemas/index.ts';
import { CLUSTER_CONFIGURATION_KEY } from '../schemas/kinds/domains.ts';
import type { FoldedTopic } from './positions.ts';
import { admitDeferred, admitWaitingPods, forgetAdmission, isUncharged } from './node-admission.ts';
import { forgetQuotaRelease, judgeQuotas, releaseTerminatedPod } from './quota-admission.ts';
import { decodeCustomObject, forgetServedKind, hasStatusSubresource, registerSchema, rememberServedKind } from './custom-resources.ts';
import { podUsage, usageFits, addUsage, subtractUsage, type NodeUsage, nodeAllocatable } from './resources.ts';

/** The desired part of an object, as the desired topic made it. */
export interface DesiredRecord {
  readonly object: KubeObject;
  /** 1 + offset of the last desired event that changed it. */
  readonly version: number;
}

/** The status part of an object, as the observed topic made it. */
export interface StatusRecord {
  readonly uid: string | null;
  readonly status: unknown;
  /** 1 + offset of the last observed event that changed it. */
  readonly version: number;
}

/** Read/write access the fold needs; the LMDB store implements it inside one transaction. */
export interface FoldState {
  /** The stored record: shared and possibly frozen, so the fold copies whatever it changes. */
  getDesired(key: string): DesiredRecord | undefined;
  putDesired(key: string, record: DesiredRecord): void;
  deleteDesired(key: string): void;
  getStatus(key: string): StatusRecord | undefined;
  /** Stores a copy of `record` (the fold does not touch it afterwards, so it need not copy it first). */
  putStatus(key: string, record: StatusRecord): void;
  getNodeUsage(node: string): NodeUsage | undefined;
  putNodeUsage(node: string, usage: NodeUsage): void;
  /** Owner of an allocated ClusterIP or NodePort ("ip/127.96.0.10", "nodeport/30001"). */
  getAllocation(resource: string): string | undefined;
  /**
   * Whether two objects' events lie in one partition. The fold may only judge by state
   * in the event's own partition; anything else would depend on how partitions interleave.
   */
  sharesPartition(keyA: string, keyB: string): boolean;
  putAllocation(resource: string, ownerKey: string | undefined): void;
  /** The keys of the current desired objects that start with `prefix`, in key order (quota admission lists a namespace's quotas and pods). */
  desiredKeys(prefix: string): Iterable<string>;
}

export const REJECT_REASONS = {
  AlreadyExists: 'AlreadyExists',
  NotFound: 'NotFound',
  Conflict: 'Conflict',
  Invalid: 'Invalid',
  Unschedulable: 'Unschedulable',
  Forbidden: 'Forbidden',
} as const;

/** The finalizer the namespace controller removes once a deleted namespace is empty (as kube's). */
export const NAMESPACE_FINALIZER = 'kubernetes';
/** The finalizer the CRD controller removes once a deleted CustomResourceDefinition's objects are gone (apiextensions'). */
export const CUSTOM_RESOURCE_DEFINITION_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';
export type RejectReason = (typeof REJECT_REASONS)[keyof typeof REJECT_REASONS];

export type Verdict =
  | { readonly type: 'accepted' }
  | { readonly type: 'rejected'; readonly reason: RejectReason; readonly message: string };

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** What one event did: the verdict and, when state changed, which object and how. */
export interface FoldOutcome {
  readonly verdict: Verdict;
  readonly change?: { readonly type: ChangeType; readonly key: string };
}

/**
 * The configuration the fold's verdicts on Services depend on. It is a fact in the log,
 * the `ClusterConfigured` event (DESIGN invariant 7), never a flag: the fold reads it from
 * its own state, so a replay anywhere, with any flags, reaches the same verdicts.
 */
export interface FoldSettings {
  /** Service CIDR, e.g. "127.96.0.0/16"; ClusterIPs are allocated from it in log order. */
  readonly serviceCIDR: string;
  readonly nodePortRange: readonly [number, number];
}

/**
 * What a log that holds no `ClusterConfigured` event is folded with: the values every
 * release before configuration events used by default. Constants of the code, not flags,
 * so the fold stays a function of the log.
 */
export const LEGACY_FOLD_SETTINGS: FoldSettings = {
  serviceCIDR: '127.96.0.0/16',
  nodePortRange: [30000, 32767],
};

/** Where the fold keeps the services configuration, beside the addresses it allocates. */
export const CONFIGURATION_ALLOCATION = 'config/services';

/** The services configuration a fold state holds (the legacy values when none was appended). */
export const foldSettingsOf = (getAllocation: (resource: string) => string | undefined): FoldSettings => {
  const stored = getAllocation(CONFIGURATION_ALLOCATION);
  return stored === undefined ? LEGACY_FOLD_SETTINGS : (JSON.parse(stored) as FoldSettings);
};

const accepted: Verdict = { type: 'accepted' };
const reject = (reason: RejectReason, message: string): FoldOutcome => ({
  verdict: { type: 'rejected', reason, message },
});

/** Deep clone of plain JSON data (objects from the log are plain JSON). */
const clone = <T>(value: T): T => structuredClone(value);

const isoTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const describeKey = (key: string): string => {
  const [kind, namespace, name] = key.split('/');
  return namespace ? `${kind} "${name}" in namespace "${namespace}"` : `${kind} "${name}"`;
};

const versionMismatch = (expected: string | null, current: DesiredRecord): string | undefined => {
  if (expected === null || expected === '') return undefined;
  const desiredPart = expected.split('.')[0];
  if (desiredPart === String(current.version)) return undefined;
  return `the object has been modified; please apply your changes to the latest version and try again (expected resourceVersion ${expected}, current desired version ${current.version})`;
};

/**
 * Applies one event of `topic` at `offset` to `state`. The fold takes the event over: an
 * object in its body may become the stored record, changed and then frozen (the caller
 * decodes each event for the fold and does not use its body afterwards), so it is not
 * copied first (a copy per created or updated object was 3 % of a replay's CPU).
 */
export const foldEvent = (state: FoldState, event: EventEnvelope, topic: FoldedTopic, offset: number): FoldOutcome => {
  const version = offset + 1;
  switch (topic) {
    case 'desired':
      return foldDesired(state, event, version);
    case 'observed':
      return foldObserved(state, event, version);
    default:
      return assertNever(topic);
  }
};

const foldDesired = (state: FoldState, event: EventEnvelope, version: number): FoldOutcome => {
  const body = event.body;
  switch (body.type) {
    case 'ObjectCreated':
      return create(state, event, body.object, version);
    case 'ObjectUpdated':
      // v7: the resourcequota controller gives back a terminated pod's quota charge (quota-admission.ts).
      if (body.quotaRelease === 'Terminated') {
        return releaseTerminatedPod(state, event.key, body.object.metadata.uid) === 'released'
          ? { verdict: accepted }
          : reject('NotFound', `${describeKey(event.key)} not found`);
      }
      return update(state, event.key, body.object, body.expectedResourceVersion, body.subresource, version);
    case 'ObjectDeleted':
      return remove(state, event, version);
    case 'PodBound':
      return bind(state, event.key, body.node, body.expectedPodVersion, version);
    case 'ClusterConfigured':
      return configure(state, event.key, body);
    case 'SchemaRegistered': {
      const registered = registerSchema(state, body);
      return registered.accepted ? { verdict: accepted } : reject('Invalid', registered.message);
    }
    case 'CustomObjectCreated': {
      const decoded = decodeCustomObject(state, body.object, true);
      if (decoded.type === 'rejected') return reject(decoded.reason, decoded.message);
      return create(state, event, decoded.object, version);
    }
    case 'CustomObjectUpdated': {
      const decoded = decodeCustomObject(state, body.object, false);
      if (decoded.type === 'rejected') return reject(decoded.reason, decoded.message);
      if (body.subresource === 'status') return updateCustomStatus(state, event.key, decoded.object, body.expectedResourceVersion, version);
      const keepStatus = hasStatusSubresource(decoded.crd, body.object.apiVersion);
      return update(state, event.key, decoded.object, body.expectedResourceVersion, body.subresource, version, keepStatus);
    }
    case 'CustomObjectDeleted':
      return remove(state, event, version);
    case 'PodStatusChanged':
    case 'NodeStatusChanged':
    case 'NodeHeartbeat':
      return reject('Invalid', `${body.type} belongs on the observed or heartbeats topic, not desired`);
    default:
      return assertNever(body);
  }
};

const foldObserved = (state: FoldState, event: EventEnvelope, version: number): FoldOutcome => {
  const body = event.body;
  switch (body.type) {
    case 'PodStatusChanged':
      state.putStatus(event.key, { uid: body.uid, status: body.status, version });
      return { verdict: accepted, change: { type: 'MODIFIED', key: event.key } };
    case 'NodeStatusChanged':
      state.putStatus(event.key, { uid: null, status: body.status, version });
      return { verdict: accepted, change: { type: 'MODIFIED', key: event.key } };
    case 'ObjectUpdated': {
      if (body.subresource !== 'status') {
        return reject('Invalid', 'only status updates belong on the observed topic');
      }
      const uid = body.object.metadata.uid ?? null;
      const stored = state.getStatus(event.key);
      // A status left by an earlier object of the same name does not count against a new one.
      const current = stored && (uid === null || stored.uid === null || stored.uid === uid) ? stored : undefined;
      const expected = body.expectedResourceVersion;
      const expectedStatusVersion = expected?.split('.')[1];
      if (expected && expectedStatusVersion !== String(current?.version ?? 0)) {
        return reject(
          'Conflict',
          `the object has been modified; please apply your changes to the latest version and try again (expected resourceVersion ${expected}, current status version ${current?.version ?? 0})`,
        );
      }
      state.putStatus(event.key, { uid, status: (body.object as { status?: unknown }).status ?? {}, version });
      return { verdict: accepted, change: { type: 'MODIFIED', key: event.key } };
    }
    case 'ObjectCreated':
    case 'ObjectDeleted':
    case 'PodBound':
    case 'NodeHeartbeat':
    case 'ClusterConfigured':
    case 'SchemaRegistered':
    case 'CustomObjectCreated':
    case 'CustomObjectUpdated':
    case 'CustomObjectDeleted':
      return reject('Invalid', `${body.type} belongs on the desired topic, not observed`);
    default:
      return assertNever(body);
  }
};

const create = (
  state: FoldState,
  event: EventEnvelope,
  input: KubeObject,
  version: number,
): FoldOutcome => {
  const key = event.key;
  if (state.getDesired(key)) {
    return reject('AlreadyExists', `${describeKey(key)} already exists`);
  }
  const namespace = input.metadata.namespace;
  if (namespace && state.sharesPartition(key, `Namespace//${namespace}`)) {
    const owner = state.getDesired(`Namespace//${namespace}`);
    if (!owner) return reject('NotFound', `namespace "${namespace}" not found`);
    if (owner.object.metadata.deletionTimestamp) {
      return reject('Forbidden', `unable to create new content in namespace ${namespace} because it is being terminated`);
    }
  }
  const object = input;
  object.metadata.uid = object.metadata.uid ?? event.id;
  object.metadata.creationTimestamp = isoTime(event.time);
  object.metadata.generation = 1;
  delete object.metadata.resourceVersion;
  delete object.metadata.deletionTimestamp;

  // v7 creates are judged against the namespace's ResourceQuotas, before anything is allocated.
  if (event.body.type === 'ObjectCreated' && event.body.quotaAdmission === 'Judged') {
    const refused = judgeQuotas(state, object);
    if (refused) return reject('Forbidden', refused);
  }
  if (object.kind === 'Service') {
    const allocated = allocateServiceAddresses(state, key, object, foldSettingsOf(state.getAllocation));
    if (allocated) return allocated;
  }
  if (object.kind === 'Pod' && object.spec?.nodeName) {
    // v6 creates defer to the node as kube does (node-admission.ts); older ones are judged now.
    if (event.body.type === 'ObjectCreated' && event.body.nodeAdmission === 'Deferred') {
      admitDeferred(state, key, object, object.spec.nodeName);
    } else {
      const admitted = admitToNode(state, object, object.spec.nodeName);
      if (admitted) return admitted;
    }
  }
  state.putDesired(key, { object, version });
  if (object.kind === 'Node') admitWaitingPods(state, object);
  rememberServedKind(state, key, undefined, object);
  return { verdict: accepted, change: { type: 'ADDED', key } };
};

const update = (
  state: FoldState,
  key: string,
  input: KubeObject,
  expectedResourceVersion: string | null,
  subresource: 'status' | 'scale' | null,
  version: number,
  keepStatus = true,
): FoldOutcome => {
  const current = state.getDesired(key);
  if (!current) return reject('NotFound', `${describeKey(key)} not found`);
  if (input.metadata.uid && input.metadata.uid !== current.object.metadata.uid) {
    return reject('Conflict', `${describeKey(key)}: uid precondition failed (object was deleted and recreated)`);
  }
  const mismatch = versionMismatch(expectedResourceVersion, current);
  if (mismatch) return reject('Conflict', `Operation cannot be fulfilled on ${describeKey(key)}: ${mismatch}`);
  if (subresource === 'status') {
    return reject('Invalid', 'status updates belong on the observed topic');
  }

  const previous = current.object;
  const next = input;
  if (subresource === 'scale') {
    const scaled = clone(previous) as KubeObject & { spec?: { replicas?: number } };
    const replicas = (input as { spec?: { replicas?: number } }).spec?.replicas;
    if (scaled.spec) scaled.spec.replicas = replicas ?? 0;
    // The writer's managedFields (its scale entry), computed against exactly this version:
    // taken only from a write that expected it (logs of earlier releases carry none).
    if (expectedResourceVersion !== null && input.metadata.managedFields !== undefined) scaled.metadata.managedFields = input.metadata.managedFields;
    return commitUpdate(state, key, previous, scaled as KubeObject, version);
  }
  // Identity and system fields are the fold's, not the writer's.
  next.metadata.uid = previous.metadata.uid;
  next.metadata.creationTimestamp = previous.metadata.creationTimestamp;
  next.metadata.namespace = previous.metadata.namespace;
  next.metadata.name = previous.metadata.name;
  next.metadata.generation = previous.metadata.generation;
  delete next.metadata.resourceVersion;
  if (previous.metadata.deletionTimestamp) {
    next.metadata.deletionTimestamp = previous.metadata.deletionTimestamp;
    next.metadata.deletionGracePeriodSeconds = previous.metadata.deletionGracePeriodSeconds;
  } else {
    delete next.metadata.deletionTimestamp;
    delete next.metadata.deletionGracePeriodSeconds;
  }
  if (keepStatus) (next as { status?: unknown }).status = (previous as { status?: unknown }).status;
  if (previous.kind === 'Pod' && next.kind === 'Pod') {
    // Binding is only through PodBound; a pod's node never changes by update.
    const nodeName = previous.spec?.nodeName;
    if (nodeName) next.spec = { ...next.spec, nodeName } as typeof next.spec;
    else if (next.spec) delete next.spec.nodeName;
  }
  if (previous.kind === 'Service' && next.kind === 'Service' && previous.spec) {
    const settings = foldSettingsOf(state.getAllocation);
    // The ClusterIP is kept; a service that becomes ExternalName gives it back, and one that
    // stops being ExternalName gets one (kube clears and allocates on those type changes).
    let claimed: string | undefined;
    if (next.spec?.type === 'ExternalName') {
      next.spec = { ...next.spec };
      delete next.spec.clusterIP;
      delete next.spec.clusterIPs;
    } else if (previous.spec.type === 'ExternalName' && !previous.spec.clusterIP) {
      const picked = clusterIPFor(state, next.spec ?? {}, settings);
      if (!('ip' in picked)) return picked;
      claimed = picked.ip;
      next.spec = { ...next.spec, ...(claimed ? { clusterIP: claimed, clusterIPs: [claimed] } : {}) };
    } else {
      next.spec = { ...next.spec, clusterIP: previous.spec.clusterIP, clusterIPs: previous.spec.clusterIPs };
    }
    // NodePorts are allocations like the ClusterIP: kept, claimed or released here, never just written.
    const previousPorts = previous.spec.ports ?? [];
    const nodePorts = planNodePorts(state, key, previousPorts, next, settings);
    if (!Array.isArray(nodePorts)) return nodePorts;
    const released = previous.spec.clusterIP;
    if (next.spec.type === 'ExternalName' && released && released !== 'None' && state.getAllocation(`ip/${released}`) === key) {
      state.putAllocation(`ip/${released}`, undefined);
    }
    if (claimed) state.putAllocation(`ip/${claimed}`, key);
    for (const port of next.spec.ports ?? []) if (!nodePorts.includes(port.nodePort ?? 0)) delete port.nodePort;
    for (const port of previousPorts) {
      if (port.nodePort && !nodePorts.includes(port.nodePort) && state.getAllocation(`nodeport/${port.nodePort}`) === key) {
        state.putAllocation(`nodeport/${port.nodePort}`, undefined);
      }
    }
    for (const port of nodePorts) state.putAllocation(`nodeport/${port}`, key);
  }
  return commitUpdate(state, key, previous, next, version);
};

const specOf = (o: KubeObject): unknown => (o as { spec?: unknown }).spec;

/**
 * Whether two plain JSON values serialize to the same JSON text (`JSON.stringify(a) ===
 * JSON.stringify(b)`, key order included) without building the texts. Fields whose value
 * is undefined are skipped, as JSON.stringify skips them.
 */
export const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  // A number that is not finite is written as null.
  if (typeof a === 'number' && !Number.isFinite(a)) return b === null || (typeof b === 'number' && !Number.isFinite(b));
  if (typeof b === 'number' && !Number.isFinite(b)) return a === null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      const x = a[i] === undefined ? null : a[i];
      const y = b[i] === undefined ? null : b[i];
      if (!sameJson(x, y)) return false;
    }
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const xs = Object.keys(x);
  const ys = Object.keys(y);
  let i = 0;
  let j = 0;
  for (;;) {
    while (i < xs.length && x[xs[i]!] === undefined) i++;
    while (j < ys.length && y[ys[j]!] === undefined) j++;
    if (i === xs.length || j === ys.length) return i === xs.length && j === ys.length;
    const k = xs[i]!;
    if (k !== ys[j] || !sameJson(x[k], y[k])) return false;
    i++;
    j++;
  }
};

const commitUpdate = (
  state: FoldState,
  key: string,
  previous: KubeObject,
  next: KubeObject,
  version: number,
): FoldOutcome => {
  if (!sameJson(specOf(previous), specOf(next))) {
    next.metadata.generation = (previous.metadata.generation ?? 1) + 1;
  }
  const awaitingNode =
    next.kind === 'Pod' && Boolean(next.spec?.nodeName) && (next.metadata.deletionGracePeriodSeconds ?? 0) > 0;
  if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0 && !awaitingNode) {
    // The last finalizer is gone: the deletion completes now (a bound pod still waits for its node to stop it).
    if (next.kind === 'Service') releaseServiceAddresses(state, key, next);
    return finishDeletion(state, key, previous);
  }
  state.putDesired(key, { object: next, version });
  rememberServedKind(state, key, previous, next);
  return { verdict: accepted, change: { type: 'MODIFIED', key } };
};

/**
 * A custom object's status subresource (kept on the desired topic, see `topicOfBody`): only
 * its status changes, under the same preconditions as an update; its generation does not.
 */
const updateCustomStatus = (state: FoldState, key: string, input: KubeObject, expectedResourceVersion: string | null, version: number): FoldOutcome => {
  const current = state.getDesired(key);
  if (!current) return reject('NotFound', `${describeKey(key)} not found`);
  if (input.metadata.uid && input.metadata.uid !== current.object.metadata.uid) {
    return reject('Conflict', `${describeKey(key)}: uid precondition failed (object was deleted and recreated)`);
  }
  const mismatch = versionMismatch(expectedResourceVersion, current);
  if (mismatch) return reject('Conflict', `Operation cannot be fulfilled on ${describeKey(key)}: ${mismatch}`);
  const next = { ...current.object, metadata: { ...current.object.metadata } } as KubeObject & { status?: unknown };
  const status = (input as { status?: unknown }).status;
  if (status === undefined) delete next.status;
  else next.status = status;
  // The writer's managedFields entry for the status subresource, computed against exactly this version.
  if (expectedResourceVersion !== null && input.metadata.managedFields !== undefined) next.metadata.managedFields = input.metadata.managedFields;
  state.putDesired(key, { object: next, version });
  return { verdict: accepted, change: { type: 'MODIFIED', key } };
};

const remove = (state: FoldState, event: EventEnvelope, version: number): FoldOutcome => {
  const body = event.body;
  if (body.type !== 'ObjectDeleted' && body.type !== 'CustomObjectDeleted') return reject('Invalid', 'not a delete');
  const key = event.key;
  const current = state.getDesired(key);
  if (!current) return reject('NotFound', `${describeKey(key)} not found`);
  if (body.uid && body.uid !== current.object.metadata.uid) {
    return reject('Conflict', `${describeKey(key)}: uid precondition failed (object was deleted and recreated)`);
  }
  const mismatch = versionMismatch(body.expectedResourceVersion, current);
  if (mismatch) return reject('Conflict', `Operation cannot be fulfilled on ${describeKey(key)}: ${mismatch}`);

  // Only the top level, metadata and status change below: copies of those over the stored record.
  const object = { ...current.object, metadata: { ...current.object.metadata } } as KubeObject;
  const finalizers = [...(object.metadata.finalizers ?? [])];
  const policy = body.propagationPolicy;
  if (policy === 'Foreground' && !finalizers.includes('foregroundDeletion')) finalizers.push('foregroundDeletion');
  if (policy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
  // A namespace goes Terminating; the namespace controller empties it, then drops the finalizer.
  if (object.kind === 'Namespace' && !object.metadata.deletionTimestamp && !finalizers.includes(NAMESPACE_FINALIZER)) {
    finalizers.push(NAMESPACE_FINALIZER);
    object.status = { ...object.status, phase: 'Terminating' };
  }

  // A CRD is held until its objects are deleted (apiextensions-apiserver's crdFinalizer).
  if (object.kind === 'CustomResourceDefinition' && !object.metadata.deletionTimestamp && !finalizers.includes(CUSTOM_RESOURCE_DEFINITION_FINALIZER)) {
    finalizers.push(CUSTOM_RESOURCE_DEFINITION_FINALIZER);
  }

  // A pod no node admitted (waiting for its node, or rejected by it) runs nowhere: it goes at once.
  const uncharged = object.kind === 'Pod' && Boolean(object.spec?.nodeName) && isUncharged(state, key);
  const grace = uncharged ? 0 : gracePeriod(object, body.gracePeriodSeconds);
  const alreadyDeleting = Boolean(object.metadata.deletionTimestamp);
  if (finalizers.length === 0 && grace === 0) return finishDeletion(state, key, current.object);
  if (alreadyDeleting && grace === 0 && object.kind === 'Pod' && finalizers.length === 0) {
    return finishDeletion(state, key, current.object);
  }
  if (alreadyDeleting) {
    // A shorter grace period (the node confirming the stop with 0) shortens the deletion, as in
    // Kubernetes; a pod still held by finalizers then goes as soon as they are removed.
    const previousGrace = object.metadata.deletionGracePeriodSeconds ?? 0;
    if (object.kind !== 'Pod' || body.gracePeriodSeconds === null || grace >= previousGrace) return { verdict: accepted };
    const previousDeadline = Date.parse(object.metadata.deletionTimestamp ?? '');
    const deadline = event.time + grace * 1000;
    object.metadata.deletionTimestamp = isoTime(Number.isNaN(previousDeadline) ? deadline : Math.min(previousDeadline, deadline));
    object.metadata.deletionGracePeriodSeconds = grace;
    state.putDesired(key, { object, version });
    return { verdict: accepted, change: { type: 'MODIFIED', key } };
  }
  object.metadata.finalizers = finalizers.length > 0 ? finalizers : undefined;
  if (object.metadata.finalizers === undefined) delete object.metadata.finalizers;
  object.metadata.deletionTimestamp = isoTime(event.time + grace * 1000);
  object.metadata.deletionGracePeriodSeconds = grace;
  state.putDesired(key, { object, version });
  return { verdict: accepted, change: { type: 'MODIFIED', key } };
};

/** Pods bound to a node terminate gracefully; everything else goes at once. */
const gracePeriod = (object: KubeObject, requested: number | null): number => {
  if (object.kind !== 'Pod' || !object.spec?.nodeName) return 0;
  if (requested !== null) return Math.max(0, requested);
  return object.spec.terminationGracePeriodSeconds ?? 30;
};

const finishDeletion = (state: FoldState, key: string, object: KubeObject): FoldOutcome => {
  if (object.kind === 'Pod' && object.spec?.nodeName && !forgetAdmission(state, key)) {
    const usage = state.getNodeUsage(object.spec.nodeName);
    if (usage) state.putNodeUsage(object.spec.nodeName, subtractUsage(usage, podUsage(object)));
  }
  if (object.kind === 'Service') releaseServiceAddresses(state, key, object);
  if (object.kind === 'Pod') forgetQuotaRelease(state, key);
  forgetServedKind(state, key, object);
  state.deleteDesired(key);
  return { verdict: accepted, change: { type: 'DELETED', key } };
};

const bind = (
  state: FoldState,
  key: string,
  node: string,
  expectedPodVersion: string | null,
  version: number,
): FoldOutcome => {
  const current = state.getDesired(key);
  if (!current || current.object.kind !== 'Pod') return reject('NotFound', `${describeKey(key)} not found`);
  const pod = current.object;
  if (pod.spec?.nodeName) {
    return reject('Conflict', `pod ${pod.metadata.name} is already assigned to node "${pod.spec.nodeName}"`);
  }
  if (pod.metadata.deletionTimestamp) return reject('Conflict', `pod ${pod.metadata.name} is being deleted`);
  const mismatch = versionMismatch(expectedPodVersion, current);
  if (mismatch) return reject('Conflict', `Operation cannot be fulfilled on ${describeKey(key)}: ${mismatch}`);
  const admitted = admitToNode(state, pod, node);
  if (admitted) return admitted;
  // A new top level and spec over the stored (frozen, shared) record: nothing else changes.
  const bound = { ...pod, spec: { ...pod.spec, nodeName: node } as Pod['spec'] };
  state.putDesired(key, { object: bound, version });
  return { verdict: accepted, change: { type: 'MODIFIED', key } };
};

/** Charges `pod` to `node` if it fits; returns a rejection otherwise. */
const admitToNode = (state: FoldState, pod: Pod, node: string): FoldOutcome | undefined => {
  const nodeRecord = state.getDesired(`Node//${node}`);
  if (!nodeRecord || nodeRecord.object.kind !== 'Node') return reject('NotFound', `node "${node}" not found`);
  const usage = state.getNodeUsage(node) ?? { cpuMilli: 0, memoryBytes: 0, pods: 0 };
  const next = addUsage(usage, podUsage(pod));
  const misfit = usageFits(next, nodeAllocatable(nodeRecord.object));
  if (misfit) return reject('Unschedulable', `node "${node}" cannot admit pod ${pod.metadata.name}: ${misfit}`);
  state.putNodeUsage(node, next);
  return undefined;
};

const ipv4ToNumber = (ip: string): number =>
  ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
const numberToIpv4 = (n: number): string =>
  [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');

const IPV4_CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

/** Why `cidr` cannot be a service CIDR (an IPv4 network of /8 to /30), or undefined. */
const cidrProblem = (cidr: string): string | undefined => {
  const match = IPV4_CIDR.exec(cidr);
  if (!match || match.slice(1, 5).some((octet) => Number(octet) > 255)) return 'not an IPv4 CIDR such as 10.96.0.0/12';
  const bits = Number(match[5]);
  if (bits < 8 || bits > 30) return 'the prefix length must be between /8 and /30';
  if (ipv4ToNumber(`${match[1]}.${match[2]}.${match[3]}.${match[4]}`) % 2 ** (32 - bits) !== 0) return 'the address has bits set beyond the prefix length';
  return undefined;
};

/**
 * `ClusterConfigured`: the services configuration, set once. The same configuration again
 * is accepted and changes nothing (several apiservers starting on an empty log each append
 * one); a different one is rejected, as a service CIDR of a cluster does not change.
 */
const configure = (state: FoldState, key: string, body: Extract<EventEnvelope['body'], { type: 'ClusterConfigured' }>): FoldOutcome => {
  if (key !== CLUSTER_CONFIGURATION_KEY) return reject('Invalid', `ClusterConfigured belongs to the key ${CLUSTER_CONFIGURATION_KEY}, not ${key}`);
  const problem = cidrProblem(body.serviceCIDR);
  if (problem) return reject('Invalid', `serviceCIDR: Invalid value: "${body.serviceCIDR}": ${problem}`);
  const { nodePortLow: low, nodePortHigh: high } = body;
  if (!(Number.isInteger(low) && Number.isInteger(high) && low >= 1 && low <= high && high <= 65535)) {
    return reject('Invalid', `nodePortRange: Invalid value: "${low}-${high}": must be a range of ports within 1-65535`);
  }
  const next: FoldSettings = { serviceCIDR: body.serviceCIDR, nodePortRange: [low, high] };
  const stored = state.getAllocation(CONFIGURATION_ALLOCATION);
  if (stored !== undefined) {
    const current = JSON.parse(stored) as FoldSettings;
    if (sameJson(current, next)) return { verdict: accepted };
    return reject(
      'Conflict',
      `the cluster is configured with service CIDR ${current.serviceCIDR} and NodePorts ${current.nodePortRange.join('-')}; they cannot change to ${next.serviceCIDR} and ${next.nodePortRange.join('-')}`,
    );
  }
  state.putAllocation(CONFIGURATION_ALLOCATION, JSON.stringify(next));
  return { verdict: accepted };
};

/** Allocates the ClusterIP (and NodePorts) of a new Service in log order; undefined when all went well. */
/**
 * The ClusterIP `spec` gets: none for a headless (`None`) or ExternalName service (kube
 * allocates none for either), the requested one if it is free and in the range, else the
 * lowest free one; a rejection when there is none to give.
 */
const clusterIPFor = (state: FoldState, spec: NonNullable<Extract<KubeObject, { kind: 'Service' }>['spec']>, settings: FoldSettings): { ip: string | undefined } | FoldOutcome => {
  if (spec.clusterIP === 'None' || spec.type === 'ExternalName') return { ip: undefined };
  const [base, bitsText] = settings.serviceCIDR.split('/');
  const size = 2 ** (32 - Number(bitsText));
  const start = ipv4ToNumber(base ?? '127.96.0.0');
  if (spec.clusterIP) {
    // As kube's allocator: only an address of the range, not its network or broadcast address.
    const requested = ipv4ToNumber(spec.clusterIP);
    if (!(requested > start && requested < start + size - 1)) {
      return reject(
        'Invalid',
        `spec.clusterIP: Invalid value: "${spec.clusterIP}": the provided IP (${spec.clusterIP}) is not in the valid range. The range of valid IPs is ${settings.serviceCIDR}`,
      );
    }
    if (state.getAllocation(`ip/${spec.clusterIP}`)) {
      return reject('Invalid', `spec.clusterIP: Invalid value: "${spec.clusterIP}": provided IP is already allocated`);
    }
    return { ip: spec.clusterIP };
  }
  for (let i = 1; i < size - 1; i++) {
    const candidate = numberToIpv4(start + i);
    if (!state.getAllocation(`ip/${candidate}`)) return { ip: candidate };
  }
  return reject('Invalid', `spec.clusterIP: no free address left in ${settings.serviceCIDR}`);
};

const allocateServiceAddresses = (
  state: FoldState,
  key: string,
  service: Extract<KubeObject, { kind: 'Service' }>,
  settings: FoldSettings,
): FoldOutcome | undefined => {
  const spec = (service.spec ??= {});
  const picked = clusterIPFor(state, spec, settings);
  if (!('ip' in picked)) return picked;
  const clusterIP = picked.ip;
  // Judge every address before claiming any, so a rejected create leaves nothing allocated.
  const nodePorts = planNodePorts(state, key, [], service, settings);
  if (!Array.isArray(nodePorts)) return nodePorts;
  if (clusterIP) {
    spec.clusterIP = clusterIP;
    spec.clusterIPs = [clusterIP];
    state.putAllocation(`ip/${clusterIP}`, key);
  }
  for (const port of nodePorts) state.putAllocation(`nodeport/${port}`, key);
  return undefined;
};

type ServicePort = NonNullable<Extract<KubeObject, { kind: 'Service' }>['spec']['ports']>[number];

/**
 * The NodePorts `service` holds after a create or update: a port that names none keeps
 * the one `previousPorts` gave the same port/protocol, or gets the lowest free one; a
 * named one must be free or already this service's. Fills them into `service` and
 * returns them without claiming anything; a rejection when one is taken or none is left.
 */
const planNodePorts = (
  state: FoldState,
  key: string,
  previousPorts: readonly ServicePort[],
  service: Extract<KubeObject, { kind: 'Service' }>,
  settings: FoldSettings,
): number[] | FoldOutcome => {
  const spec = service.spec;
  if (spec.type !== 'NodePort' && spec.type !== 'LoadBalancer') return [];
  const ports = spec.ports ?? [];
  const chosen = new Set<number>();
  for (const [index, port] of ports.entries()) {
    if (!port.nodePort) {
      const kept = previousPorts.find(
        (p) => p.nodePort && p.port === port.port && (p.protocol ?? 'TCP') === (port.protocol ?? 'TCP') && !chosen.has(p.nodePort),
      );
      if (kept?.nodePort) port.nodePort = kept.nodePort;
    }
    if (!port.nodePort) continue;
    const owner = state.getAllocation(`nodeport/${port.nodePort}`);
    if ((owner && owner !== key) || chosen.has(port.nodePort)) {
      return reject('Invalid', `spec.ports[${index}].nodePort: Invalid value: ${port.nodePort}: provided port is already allocated`);
    }
    chosen.add(port.nodePort);
  }
  const [low, high] = settings.nodePortRange;
  for (const port of ports) {
    if (port.nodePort) continue;
    for (let candidate = low; candidate <= high; candidate++) {
      if (!chosen.has(candidate) && !state.getAllocation(`nodeport/${candidate}`)) {
        port.nodePort = candidate;
        break;
      }
    }
    if (!port.nodePort) return reject('Invalid', 'spec.ports.nodePort: no free node port left');
    chosen.add(port.nodePort);
  }
  return [...chosen];
};

const releaseServiceAddresses = (state: FoldState, key: string, service: KubeObject): void => {
  if (service.kind !== 'Service') return;
  const spec = service.spec;
  const release = (resource: string): void => {
    if (state.getAllocation(resource) === key) state.putAllocation(resource, undefined);
  };
  if (spec?.clusterIP && spec.clusterIP !== 'None') release(`ip/${spec.clusterIP}`);
  for (const port of spec?.ports ?? []) {
    if (port.nodePort) release(`nodeport/${port.nodePort}`);
  }
};
