/**
 * The DaemonSet decision, pure (kube's `DaemonSetsController.syncDaemonSet`): adopt
 * orphans, settle the revision, then `manage` (a pod on every node that should run one,
 * none where it may not keep running, failed pods and duplicates removed), and — when
 * manage had nothing to do, as kube's expectations require — one step of the rolling
 * update (maxUnavailable, or maxSurge); old revisions beyond the limit; the status.
 */
import type { View } from '../../projections/index.ts';
import { labelSelectorToRequirements, matchesLabels, type LabelRequirement } from '../../projections/selectors.ts';
import type { DaemonSet, DaemonSetStatus, EventBody, Node, Pod } from '../../schemas/index.ts';
import { resolveIntOrPercent } from '../deployment/strategy.ts';
import { adoptRevisions, CONTROLLER_REVISION_HASH_LABEL, orphanRevisions, ownedRevisions, truncateHistory } from '../history/index.ts';
import { canonicalJson, controllerRef, controllerReferenceTo, deleteCommand, isBeingDeleted, parseTime, statusCommand, updateCommand } from '../replicaset/objects.ts';
import { isPodActive, isPodAvailable, isPodReady, nextAvailabilityInMs } from '../replicaset/pods.ts';
import type { Decision } from '../runtime.ts';
import { daemonPodName, DS_UPDATE, isPodUpdated, newDaemonPod, nodeShouldRunDaemonPod, targetNodeName, type NodeVerdict } from './nodes.ts';
import { daemonSetRevisions, dsTemplate, type DaemonSetRevisions } from './revisions.ts';

/** The DaemonSet annotation with its template generation (the apiserver's; absent here unless a client set it). */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

const EMPTY: Decision = { commands: [] };

/** The DaemonSet's selector requirements; empty (selects nothing) when absent or invalid. */
export const dsSelector = (ds: DaemonSet): readonly LabelRequirement[] => {
  const selector = ds.spec?.selector;
  if (!selector) return [];
  const parsed = labelSelectorToRequirements(selector);
  return parsed.type === 'ok' ? parsed.requirements : [];
};

/** The template generation kube compares pods' `pod-template-generation` label with (from the annotation). */
const templateGeneration = (ds: DaemonSet): number | undefined => {
  const text = ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
  const value = text === undefined ? Number.NaN : Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
};

/** kube's `podByCreationTimestampAndPhase`: scheduled first, then oldest, then by name. */
const byCreation = (a: Pod, b: Pod): number => {
  const scheduledA = a.spec.nodeName ? 0 : 1;
  const scheduledB = b.spec.nodeName ? 0 : 1;
  if (scheduledA !== scheduledB) return scheduledA - scheduledB;
  const ta = parseTime(a.metadata.creationTimestamp) ?? 0;
  const tb = parseTime(b.metadata.creationTimestamp) ?? 0;
  if (ta !== tb) return ta - tb;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
};

/** One decision's inputs and what it has decided so far. */
interface Sync {
  readonly ds: DaemonSet;
  readonly nodes: readonly Node[];
  readonly verdicts: ReadonlyMap<string, NodeVerdict>;
  /** Node name → the DaemonSet's pods for it (terminal pods being deleted left out, as kube's `getNodesToDaemonPods`). */
  readonly podsByNode: ReadonlyMap<string, readonly Pod[]>;
  readonly revisions: DaemonSetRevisions;
  readonly generation: number | undefined;
  readonly now: number;
  readonly minReady: number;
  readonly taken: Set<string>;
  readonly commands: EventBody[];
  readonly deleted: Set<string>;
}

const remove = (sync: Sync, pod: Pod): void => {
  if (sync.deleted.has(pod.metadata.name) || pod.metadata.deletionTimestamp) return;
  sync.deleted.add(pod.metadata.name);
  sync.commands.push(deleteCommand(pod));
};

const create = (sync: Sync, node: string): void => {
  const name = daemonPodName(sync.ds, node, (candidate) => sync.taken.has(candidate));
  sync.taken.add(name);
  sync.commands.push({ type: 'ObjectCreated', object: newDaemonPod(sync.ds, dsTemplate(sync.ds), node, name, sync.revisions.hash, sync.generation) });
};

const allowsSurge = (sync: Sync): boolean => surgeCount(sync, 1) > 0;

const updated = (sync: Sync, pod: Pod): boolean => isPodUpdated(pod, sync.revisions.hash, sync.generation);

/** kube's `manage` / `podsShouldBeOnNode` over every node, and the unscheduled pods of nodes that are gone. */
const manage = (sync: Sync): void => {
  for (const node of sync.nodes) {
    const name = node.metadata.name;
    const verdict = sync.verdicts.get(name) ?? { shouldRun: false, shouldContinueRunning: false };
    const pods = sync.podsByNode.get(name) ?? [];
    if (verdict.shouldRun && pods.length === 0) {
      create(sync, name);
      continue;
    }
    if (!verdict.shouldContinueRunning) {
      for (const pod of pods) remove(sync, pod);
      continue;
    }
    const running: Pod[] = [];
    for (const pod of pods) {
      if (pod.metadata.deletionTimestamp) continue;
      if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') remove(sync, pod);
      else running.push(pod);
    }
    if (running.length <= 1) continue;
    running.sort(byCreation);
    if (!allowsSurge(sync)) {
      for (const pod of running.slice(1)) remove(sync, pod);
      continue;
    }
    // With surge a node may hold one old and one updated pod: the oldest of each stays.
    let keptNew = false;
    let keptOld = false;
    for (const pod of running) {
      if (updated(sync, pod) && !keptNew) keptNew = true;
      else if (!updated(sync, pod) && !keptOld) keptOld = true;
      else remove(sync, pod);
    }
  }
  const known = new Set(sync.nodes.map((node) => node.metadata.name));
  for (const [node, pods] of sync.podsByNode) {
    if (known.has(node)) continue;
    for (const pod of pods) if (!pod.spec.nodeName) remove(sync, pod);
  }
};

const desiredNumber = (sync: Sync): number => [...sync.verdicts.values()].filter((v) => v.shouldRun).length;

const rollingUpdateOf = (ds: DaemonSet) => (ds.spec?.updateStrategy?.type ?? DS_UPDATE.RollingUpdate) === DS_UPDATE.RollingUpdate ? ds.spec?.updateStrategy?.rollingUpdate : undefined;

/** kube's `SurgeCount` (rounded up). */
const surgeCount = (sync: Sync, desired: number): number => {
  const rolling = rollingUpdateOf(sync.ds);
  return rolling?.maxSurge === undefined ? 0 : resolveIntOrPercent(rolling.maxSurge, desired, true);
};

/** kube's `UnavailableCount` (rounded up). */
const unavailableCount = (sync: Sync, desired: number): number => {
  const rolling = rollingUpdateOf(sync.ds);
  return rolling?.maxUnavailable === undefined ? 0 : resolveIntOrPercent(rolling.maxUnavailable, desired, true);
};

/** The updated and the old pod on a node; undefined when there are two of either (kube's `findUpdatedPodsOnNode`). */
const podsOnNode = (sync: Sync, pods: readonly Pod[]): { newPod?: Pod; oldPod?: Pod } | undefined => {
  let newPod: Pod | undefined;
  let oldPod: Pod | undefined;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    if (updated(sync, pod)) {
      if (newPod) return undefined;
      newPod = pod;
    } else {
      if (oldPod) return undefined;
      oldPod = pod;
    }
  }
  return { ...(newPod ? { newPod } : {}), ...(oldPod ? { oldPod } : {}) };
};

/** kube's `rollingUpdate`: one step of replacing old pods, within maxUnavailable or maxSurge. */
const rollingUpdate = (sync: Sync): void => {
  const desired = desiredNumber(sync);
  let maxUnavailable = unavailableCount(sync, desired);
  const maxSurge = surgeCount(sync, desired);
  if (desired > 0 && maxUnavailable === 0 && maxSurge === 0) maxUnavailable = 1;
  const available = (pod: Pod): boolean => isPodAvailable(pod, sync.minReady, sync.now);
  // Every node with pods, and every node that should run one (kube adds those with no pods).
  const nodeNames = [...new Set([...sync.podsByNode.keys(), ...[...sync.verdicts].filter(([, v]) => v.shouldRun).map(([name]) => name)])].sort();
  const podsOf = (name: string): readonly Pod[] => sync.podsByNode.get(name) ?? [];
  const byName = new Map(sync.nodes.map((node) => [node.metadata.name, node]));
  if (maxSurge === 0) {
    let unavailable = 0;
    const replacements: Pod[] = [];
    const candidates: Pod[] = [];
    for (const name of nodeNames) {
      const found = podsOnNode(sync, podsOf(name));
      if (!found || (!found.newPod && !found.oldPod) || (found.newPod && found.oldPod)) {
        unavailable += 1;
      } else if (found.newPod) {
        if (!available(found.newPod)) unavailable += 1;
      } else if (found.oldPod) {
        if (!available(found.oldPod)) replacements.push(found.oldPod);
        else if (unavailable < maxUnavailable) candidates.push(found.oldPod);
      }
    }
    const remaining = Math.min(Math.max(0, maxUnavailable - unavailable), candidates.length);
    for (const pod of [...replacements, ...candidates.slice(0, remaining)]) remove(sync, pod);
    return;
  }
  let surged = 0;
  let availableNodes = 0;
  const allowedNew: string[] = [];
  const candidateNew: string[] = [];
  const sunset: Pod[] = [];
  for (const name of nodeNames) {
    const found = podsOnNode(sync, podsOf(name));
    if (!found) {
      surged += 1;
      continue;
    }
    const { newPod, oldPod } = found;
    if (oldPod ? available(oldPod) : newPod ? available(newPod) : false) availableNodes += 1;
    if (!oldPod) continue;
    const node = byName.get(name);
    const shouldRun = node !== undefined && nodeShouldRunDaemonPod(sync.ds, node).shouldRun;
    if (!newPod) {
      if (!available(oldPod)) {
        if (!shouldRun) remove(sync, oldPod);
        else allowedNew.push(name);
      } else if (!shouldRun) {
        sunset.push(oldPod);
      } else if (surged < maxSurge) {
        candidateNew.push(name);
      }
    } else if (!available(newPod)) {
      surged += 1;
    } else {
      remove(sync, oldPod);
    }
  }
  // With surge the owner expects full availability: a pod on a node it no longer fits goes only once another is available.
  for (const pod of sunset.slice(0, Math.max(0, availableNodes - desired))) remove(sync, pod);
  const remaining = Math.min(Math.max(0, maxSurge - surged), candidateNew.length);
  for (const name of [...allowedNew, ...candidateNew.slice(0, remaining)]) create(sync, name);
};

/** kube's `updateDaemonSetStatus`, counted on the view before this round acts. */
const daemonSetStatus = (sync: Sync): DaemonSetStatus => {
  let desired = 0;
  let current = 0;
  let misscheduled = 0;
  let ready = 0;
  let available = 0;
  let upToDate = 0;
  for (const node of sync.nodes) {
    const pods = [...(sync.podsByNode.get(node.metadata.name) ?? [])];
    const shouldRun = sync.verdicts.get(node.metadata.name)?.shouldRun ?? false;
    if (!shouldRun) {
      if (pods.length > 0) misscheduled += 1;
      continue;
    }
    desired += 1;
    const pod = pods.sort(byCreation)[0];
    if (!pod) continue;
    current += 1;
    if (isPodReady(pod)) {
      ready += 1;
      if (isPodAvailable(pod, sync.minReady, sync.now)) available += 1;
    }
    if (updated(sync, pod)) upToDate += 1;
  }
  const { ds } = sync;
  const collisionCount = sync.revisions.collisionCount;
  return {
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    desiredNumberScheduled: desired,
    numberReady: ready,
    ...(ds.metadata.generation !== undefined ? { observedGeneration: ds.metadata.generation } : {}),
    ...(upToDate > 0 ? { updatedNumberScheduled: upToDate } : {}),
    ...(available > 0 ? { numberAvailable: available } : {}),
    ...(desired - available > 0 ? { numberUnavailable: desired - available } : {}),
    ...(collisionCount !== undefined ? { collisionCount } : {}),
    ...(ds.status?.conditions ? { conditions: ds.status.conditions } : {}),
  };
};

/** Orphan pods of the namespace `ds` adopts: no controller, selected, active. */
const orphanPods = (pods: readonly Pod[], selector: readonly LabelRequirement[]): Pod[] =>
  selector.length === 0 ? [] : pods.filter((pod) => controllerRef(pod) === undefined && isPodActive(pod) && matchesLabels(selector, pod.metadata.labels));

/** Decides DaemonSet `key` at `now`. */
export const decideDaemonSet = (key: string, view: View, now: number): Decision => {
  const ds = view.get(key);
  if (ds?.kind !== 'DaemonSet' || !ds.spec || ds.metadata.uid === undefined || isBeingDeleted(ds)) return EMPTY;
  const uid = ds.metadata.uid;
  const selector = dsSelector(ds);
  const inNamespace = view.list('Pod', ds.metadata.namespace) as Pod[];
  const orphans = orphanPods(inNamespace, selector);
  const revisionOrphans = selector.length === 0 ? [] : orphanRevisions(ds, view, (labels) => matchesLabels(selector, labels));
  if (orphans.length > 0 || revisionOrphans.length > 0) {
    const adoptions = orphans.map((pod) =>
      updateCommand(pod, { ...pod, metadata: { ...pod.metadata, ownerReferences: [...(pod.metadata.ownerReferences ?? []), controllerReferenceTo(ds)] } }),
    );
    return { commands: [...adoptions, ...adoptRevisions(ds, revisionOrphans)] };
  }
  const owned = inNamespace.filter((pod) => controllerRef(pod)?.uid === uid);
  const podsByNode = new Map<string, Pod[]>();
  for (const pod of owned) {
    const terminal = pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';
    if (terminal && pod.metadata.deletionTimestamp) continue;
    const node = targetNodeName(pod);
    if (node === undefined) continue;
    podsByNode.set(node, [...(podsByNode.get(node) ?? []), pod]);
  }
  const nodes = (view.list('Node') as Node[]).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  const revisionList = ownedRevisions(ds, view);
  const revisions = daemonSetRevisions(ds, revisionList, view);
  const minReady = ds.spec.minReadySeconds ?? 0;
  const sync: Sync = {
    ds,
    nodes,
    verdicts: new Map(nodes.map((node) => [node.metadata.name, nodeShouldRunDaemonPod(ds, node)])),
    podsByNode,
    revisions,
    generation: templateGeneration(ds),
    now,
    minReady,
    taken: new Set(inNamespace.map((pod) => pod.metadata.name)),
    commands: [],
    deleted: new Set(),
  };
  manage(sync);
  if (sync.commands.length === 0 && rollingUpdateOf(ds) !== undefined) rollingUpdate(sync);
  const liveHashes = new Set([revisions.hash, ...owned.map((pod) => pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '')]);
  const live = new Set(revisions.old.filter((r) => liveHashes.has(r.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '')).map((r) => r.metadata.name));
  live.add(revisions.current.metadata.name);
  const truncations = truncateHistory(revisions.old, live, ds.spec.revisionHistoryLimit ?? 10);
  const status = daemonSetStatus(sync);
  const statusCommands = canonicalJson(status) === canonicalJson(ds.status) ? [] : [statusCommand(ds, status)];
  const waitMs = nextAvailabilityInMs(owned, minReady, now);
  return { commands: [...revisions.commands, ...sync.commands, ...truncations, ...statusCommands], ...(waitMs === undefined ? {} : { requeueAfterMs: waitMs }) };
};
