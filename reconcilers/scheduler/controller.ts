/**
 * The scheduler as a reconciler: unscheduled pods are keys; a round decides them in
 * order against one snapshot of the nodes, "assuming" each binding it makes so later
 * pods of the round see the capacity taken. Each binding is a `PodBound` event carrying
 * the rationale; the fold still judges it (capacity, still unbound) in log order.
 */
import { sameVector, type AppliedChange, type Projection, type View } from '../../projections/index.ts';
import type { BindingPreemption, EventBody, Node, Pod, PodCondition } from '../../schemas/index.ts';
import type { Controller, Decision, DecideContext } from '../runtime.ts';
import { createNodeInfoCache, type NodeInfoCache } from './cache.ts';
import { NAMESPACE_NAME_LABEL } from './affinity.ts';
import { assumePod, buildNodeInfos, type ClusterLister, createProfile, type NodeInfo, type Profile, type ProfileConfig } from './framework.ts';
import { defaultRegistry } from './plugins/index.ts';
import { bindingPreemption } from './plugins/default-preemption/index.ts';
import { preBindVolumes } from './plugins/volume-binding/index.ts';
import { claimNamesOf } from '../persistentvolume/volumes.ts';
import { defaultResolvedSchedulerConfig, type ResolvedSchedulerConfig } from './config/index.ts';
import { createEventBudget, SCHEDULER_EVENT_PIPELINE, withEvents, type EventSource } from '../events/index.ts';
import { narrateScheduling } from './events.ts';
import { createRoundScheduler } from './round-scheduler.ts';
import { nominate, nominatedAhead, nominatedPodsOf, podPriority, withPods } from './nominated.ts';
import { createPostFilterHandle, runPostFilters } from './post-filter.ts';
import { PREEMPTION_RECORD, preemptionCommands, preemptionNote, preemptionRecord, recordedPreemption } from './preemption.ts';
import { preEnqueue, type ScheduleResult } from './scheduler.ts';
import { countPending, newTally, type ScheduleTally, type SchedulerMetrics } from './metrics.ts';

export interface SchedulerOptions {
  /**
   * The profiles, selected by a pod's `spec.schedulerName` (`--scheduler-config`; default:
   * kube's one `default-scheduler` profile). Pods naming a scheduler no profile serves are left alone.
   */
  readonly config?: ResolvedSchedulerConfig;
  /** Where each round's attempts, latencies and preemptions are counted (`createSchedulerMetrics`); default nowhere. */
  readonly metrics?: SchedulerMetrics;
}

/** kube-scheduler's Event source (its default profile's scheduler name). */
/**
 * Who records a pod's scheduling Events: its profile, as kube-scheduler 1.32 gives each
 * profile a recorder named after its `schedulerName` (the Events' reporting controller and
 * source component).
 */
const schedulerEventSource = (key: string, view: View): EventSource => {
  const pod = view.get(key);
  return { component: (pod?.kind === 'Pod' ? pod.spec.schedulerName : undefined) ?? 'default-scheduler' };
};

const isoTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const podKey = (pod: Pod): string => `Pod/${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;

/** The NodeInfos of `view`, built from every node and bound pod. */
export const nodeInfosOf = (view: View): NodeInfo[] =>
  buildNodeInfos(view.list('Node') as Node[], (view.list('Pod') as Pod[]).filter((p) => p.spec.nodeName));

/**
 * The cluster as plugins read it, from `view` (lists cached for the round: one view is one
 * position of the log). Kinds the view does not hold list as empty.
 */
export const clusterListerOf = (view: View): ClusterLister => {
  const lists = new Map<string, readonly unknown[]>();
  const namespaceLabels = new Map<string, Readonly<Record<string, string>>>();
  const objects = new Map<string, unknown>();
  return {
    namespaceLabels: (name) => {
      let labels = namespaceLabels.get(name);
      if (labels === undefined) {
        const namespace = view.get(`Namespace//${name}`);
        labels = { ...namespace?.metadata.labels, [NAMESPACE_NAME_LABEL]: name };
        namespaceLabels.set(name, labels);
      }
      return labels;
    },
    list: (kind, namespace) => {
      const key = `${kind}/${namespace}`;
      let list = lists.get(key);
      if (list === undefined) {
        try {
          list = view.list(kind as Parameters<View['list']>[0], namespace);
        } catch {
          list = [];
        }
        lists.set(key, list);
      }
      return list;
    },
    get: (kind, namespace, name) => {
      const key = `${kind}/${namespace}/${name}`;
      if (!objects.has(key)) objects.set(key, view.get(key));
      return objects.get(key);
    },
  };
};

const gatedCondition = (pod: Pod, profile: Profile, now: number): Decision | undefined => {
  const verdict = preEnqueue(pod, profile);
  if (verdict.type === 'ready') return undefined;
  const conditions = pod.status?.conditions ?? [];
  const current = conditions.find((c) => c.type === 'PodScheduled');
  if (current?.status === 'False' && current.reason === verdict.reason && current.message === verdict.message) return { commands: [] };
  const condition: PodCondition = {
    type: 'PodScheduled',
    status: 'False',
    reason: verdict.reason,
    message: verdict.message,
    lastTransitionTime: isoTime(now),
  };
  return {
    commands: [
      {
        type: 'ObjectUpdated',
        object: { ...pod, status: { ...pod.status, phase: 'Pending', conditions: [...conditions.filter((c) => c.type !== 'PodScheduled'), condition] } },
        expectedResourceVersion: null,
        subresource: 'status',
      },
    ],
  };
};

/** Scheduler name → the plugins of its profile (a configuration's `profiles`). */
export type SchedulerProfiles = ReadonlyMap<string, ProfileConfig>;

/** The profiles kube-scheduler runs without a configuration: `default-scheduler` with the default plugins. */
export const defaultSchedulerProfiles = (): SchedulerProfiles => defaultResolvedSchedulerConfig().profiles;

/**
 * Decides where each pod of `keys` goes, with the profile its `spec.schedulerName` names
 * (pods naming none of `profiles` get no commands), against one snapshot of the cluster:
 * `nodeInfos` when given (they must be those of `view`, e.g. from the NodeInfo cache), else
 * built from `view`. With a `tally`, each attempt's result, latency and preemption is
 * counted there (the decisions are the same without it).
 */
export const decidePods = (
  keys: readonly string[],
  view: View,
  context: DecideContext,
  profiles: SchedulerProfiles,
  nodeInfos?: readonly NodeInfo[],
  tally?: ScheduleTally,
): Map<string, Decision> => {
  const cluster = clusterListerOf(view);
  /** Each profile's plugins and round scheduler, created when a pod of the round first names it. */
  const rounds = new Map<string, { profile: Profile; schedule: ReturnType<typeof createRoundScheduler> }>();
  const roundOf = (schedulerName: string): { profile: Profile; schedule: ReturnType<typeof createRoundScheduler> } | undefined => {
    let round = rounds.get(schedulerName);
    if (round === undefined) {
      const config = profiles.get(schedulerName);
      if (config === undefined) return undefined;
      const profile = createProfile(config, defaultRegistry);
      round = { profile, schedule: createRoundScheduler(profile, cluster) };
      rounds.set(schedulerName, round);
    }
    return round;
  };
  /** Pending pods nominated to a node, kept up to date as the round binds and preempts. */
  const nominated = nominatedPodsOf(view.unscheduledPods());
  /** Nominations this round cleared for pods it has not decided yet (a higher-priority pod preempted on their node). */
  const nominationOverrides = new Map<string, string | undefined>();
  // One copy per round; each binding replaces its node's entry (assumed for the next pod).
  const infos: NodeInfo[] = nodeInfos ? [...nodeInfos] : nodeInfosOf(view);
  const indexOfNode = new Map<string, number>();
  infos.forEach((info, index) => indexOfNode.set(info.node.metadata.name, index));
  /** Indices of `infos` replaced this round, in order (lets the round scheduler visit only those). */
  const changes: number[] = [];
  const decisions = new Map<string, Decision>();
  /**
   * `schedule`, with the pods nominated to a node that `pod` must leave room for (priority at
   * least its own) counted on that node, as kube filters with nominated pods.
   */
  const scheduleWithNominated = (pod: Pod, schedule: ReturnType<typeof createRoundScheduler>): ScheduleResult => {
    let withNominated: NodeInfo[] | undefined;
    for (const [node, pods] of nominated) {
      const ahead = nominatedAhead(pod, pods);
      const index = indexOfNode.get(node);
      if (ahead.length === 0 || index === undefined) continue;
      withNominated ??= [...infos];
      withNominated[index] = withPods(infos[index] as NodeInfo, ahead);
    }
    return withNominated === undefined ? schedule(pod, infos, changes) : schedule(pod, withNominated);
  };
  // The round's pods in queue order (PrioritySort: higher priority first), the rest in key order;
  // every profile has the same queueSort (the configuration is validated so), as kube's one queue.
  const entries = [...keys].sort().map((key) => ({ key, pod: view.get(key) as Pod | undefined }));
  const [firstProfile] = profiles.keys();
  const queueSort = firstProfile === undefined ? undefined : roundOf(firstProfile)?.profile.queueSort;
  if (queueSort !== undefined) {
    entries.sort((left, right) => {
      const leftPod = left.pod?.kind === 'Pod' ? left.pod : undefined;
      const rightPod = right.pod?.kind === 'Pod' ? right.pod : undefined;
      if (leftPod === undefined || rightPod === undefined) return leftPod === rightPod ? 0 : leftPod === undefined ? 1 : -1;
      return queueSort.compare(leftPod, rightPod);
    });
  }
  for (const { key, pod } of entries) {
    if (!pod || pod.kind !== 'Pod' || pod.spec.nodeName || pod.metadata.deletionTimestamp) {
      decisions.set(key, { commands: [] });
      continue;
    }
    const schedulerName = pod.spec.schedulerName ?? 'default-scheduler';
    const round = roundOf(schedulerName);
    if (round === undefined) {
      decisions.set(key, { commands: [] });
      continue;
    }
    const { profile, schedule } = round;
    // Held back by a PreEnqueue plugin (scheduling gates): say so once, do not schedule.
    const gated = gatedCondition(pod, profile, context.now);
    if (gated !== undefined) {
      decisions.set(key, gated);
      continue;
    }
    const attemptStarted = tally ? performance.now() : 0;
    const result = scheduleWithNominated(pod, schedule);
    switch (result.type) {
      case 'bound': {
        // VolumeBinding's PreBind: claims still to bind get the chosen node; the pod waits for them.
        const volumes = preBindVolumes(pod, result.node, cluster);
        if (volumes.type === 'wait') {
          decisions.set(key, { commands: volumes.commands });
          break;
        }
        // A binding that follows the pod's preemption names it (v9): the record its nomination left on the pod.
        const nomination = nominationOverrides.has(key) ? nominationOverrides.get(key) : pod.status?.nominatedNodeName;
        const preemption = nomination ? recordedPreemption(pod, nomination) : undefined;
        const command: EventBody = {
          type: 'PodBound',
          namespace: pod.metadata.namespace ?? 'default',
          name: pod.metadata.name,
          node: result.node,
          expectedPodVersion: pod.metadata.resourceVersion ?? null,
          // The scheduler builds a fresh rationale per decision (its lists are copies, not its
          // memo's), so the command carries it as is instead of a second copy per binding.
          rationale: preemption === undefined ? result.rationale : { ...result.rationale, preemption },
        };
        const index = indexOfNode.get(result.node) as number;
        infos[index] = assumePod(infos[index] as NodeInfo, pod);
        changes.push(index);
        if (nominated.size > 0) nominate(nominated, pod, undefined);
        decisions.set(key, { commands: [command] });
        tally?.scheduledSeconds.push((performance.now() - attemptStarted) / 1000);
        tally?.scheduledProfiles.push(schedulerName);
        break;
      }
      case 'unschedulable': {
        // PostFilter (DefaultPreemption): evict lower-priority pods to make room in a later cycle.
        let message = result.message;
        let nomination = nominationOverrides.has(key) ? nominationOverrides.get(key) : pod.status?.nominatedNodeName;
        const commands: EventBody[] = [];
        /** The preemption this cycle decided, recorded on the pod for the binding that follows. */
        let preemption: BindingPreemption | undefined;
        if (infos.length > 0 && profile.postFilters.length > 0) {
          const handle = createPostFilterHandle(pod, infos, profile, cluster, nominated, context.now);
          const outcome = runPostFilters(pod, { filtered: result.rationale.filtered, unresolvable: result.unresolvable }, handle, profile);
          if (tally) tally.preemptionAttempts += 1;
          if (outcome.type === 'nominated') {
            tally?.victims.push(outcome.victims.length);
            const displaced = nominated.get(outcome.node) ?? [];
            commands.push(...preemptionCommands(pod, outcome.victims, displaced, context.now));
            for (const other of displaced) {
              if (podPriority(other) >= podPriority(pod)) continue;
              nominationOverrides.set(podKey(other), undefined);
              nominate(nominated, other, undefined);
            }
            preemption = bindingPreemption(outcome.node, result.message, outcome.victims);
            message = `${message} ${preemptionNote(outcome.node, outcome.victims)}`;
            nomination = outcome.node;
            nominate(nominated, pod, outcome.node);
          } else {
            if (outcome.message !== '') message = `${message} ${outcome.message}.`;
            if (outcome.clearNomination && nomination) {
              nomination = undefined;
              nominate(nominated, pod, undefined);
            }
          }
        }
        tally?.unschedulableSeconds.push((performance.now() - attemptStarted) / 1000);
        tally?.unschedulableProfiles.push(schedulerName);
        const conditions = pod.status?.conditions ?? [];
        const current = conditions.find((c) => c.type === 'PodScheduled');
        const sameNomination = (pod.status?.nominatedNodeName ?? undefined) === (nomination ?? undefined);
        // The recorded preemption stays while its nomination does; a new one replaces it.
        const recorded = conditions.find((c) => c.type === PREEMPTION_RECORD);
        const record = preemption !== undefined ? preemptionRecord(preemption, context.now) : nomination && sameNomination ? recorded : undefined;
        if (current?.status === 'False' && current.message === message && sameNomination && recorded?.message === record?.message) {
          decisions.set(key, { commands });
          break;
        }
        const condition: PodCondition = {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message,
          lastTransitionTime: isoTime(context.now),
        };
        const { nominatedNodeName: _previous, ...status } = pod.status ?? {};
        commands.push({
          type: 'ObjectUpdated',
          object: {
            ...pod,
            status: {
              ...status,
              ...(nomination ? { nominatedNodeName: nomination } : {}),
              phase: 'Pending',
              conditions: [...conditions.filter((c) => c.type !== 'PodScheduled' && c.type !== PREEMPTION_RECORD), condition, ...(record ? [record] : [])],
            },
          },
          expectedResourceVersion: null,
          subresource: 'status',
        });
        decisions.set(key, { commands });
        break;
      }
      default: {
        const unreachable: never = result;
        throw new Error(`unexpected schedule result ${JSON.stringify(unreachable)}`);
      }
    }
  }
  return decisions;
};

/**
 * The pods waiting for a node, to retry after a change that may make room; gated pods are
 * left out (kube keeps them out of the queue until their own update removes the gates).
 */
const retryKeys = (view: View, profile: Profile): string[] =>
  view
    .unscheduledPods()
    .filter((pod) => preEnqueue(pod, profile).type === 'ready')
    .map(podKey);

/** Every pod waiting for a node, gated ones included (so each gets its PodScheduled condition). */
const unscheduledKeys = (view: View): string[] => view.unscheduledPods().map(podKey);

/** The waiting pods of `namespace` that name claim `claim` (a claim's binding may let them be placed). */
const claimantKeys = (view: View, namespace: string, claim: string): string[] =>
  view
    .unscheduledPods()
    .filter((pod) => (pod.metadata.namespace ?? 'default') === namespace && claimNamesOf(pod).includes(claim))
    .map(podKey);

/** Keys to retry when the cluster changed in a way that may make room. */
const keysFor = (change: AppliedChange, view: View, profile: Profile): readonly string[] => {
  if (change.key.startsWith('Node/')) return retryKeys(view, profile);
  if (change.object.kind === 'PersistentVolumeClaim') return claimantKeys(view, change.object.metadata.namespace ?? '', change.object.metadata.name);
  if (!change.key.startsWith('Pod/')) return [];
  const pod = change.object as Pod;
  if (!pod.spec.nodeName) return [change.key];
  // A bound pod that went away (or finished) may have freed room for the waiting ones.
  const phase = pod.status?.phase;
  if (change.type === 'DELETED' || phase === 'Succeeded' || phase === 'Failed') return retryKeys(view, profile);
  return [];
};

/**
 * Creates the scheduler controller. Attached to a projection (by the runtime), it keeps
 * NodeInfos across rounds from the change feed and uses them for views at the
 * projection's cursor; any other view (a past one, for `debug reconcile`) is rebuilt.
 */
export const createSchedulerController = (options: SchedulerOptions = {}): Controller => {
  const profiles = (options.config ?? defaultResolvedSchedulerConfig()).profiles;
  const [, firstConfig] = [...profiles][0] ?? [];
  const { metrics } = options;
  /**
   * For the PreEnqueue check of retries: the first profile's (plugins are stateless; each
   * round creates its own profiles). Every built-in profile gates on SchedulingGates.
   */
  const retryProfile = createProfile(firstConfig ?? { filters: [], scores: [] }, defaultRegistry);
  let attached: { projection: Projection; cache: NodeInfoCache } | undefined;
  const nodeInfosFor = (view: View): readonly NodeInfo[] | undefined =>
    attached && sameVector(view.position, attached.projection.cursor()) ? attached.cache.nodeInfos() : undefined;
  /** Decides a round, counting it in the metrics: when the round throws, its undecided pods are errors. */
  const decideCounted = (keys: readonly string[], view: View, context: DecideContext): Map<string, Decision> => {
    if (!metrics) return decidePods(keys, view, context, profiles, nodeInfosFor(view));
    const tally = newTally();
    try {
      return decidePods(keys, view, context, profiles, nodeInfosFor(view), tally);
    } catch (error) {
      tally.errors = Math.max(0, keys.length - tally.scheduledSeconds.length - tally.unschedulableSeconds.length);
      throw error;
    } finally {
      metrics.record(tally);
    }
  };
  return withEvents({
    name: 'scheduler',
    keysFor: (change, view) => keysFor(change, view, retryProfile),
    initialKeys: unscheduledKeys,
    // A refused binding (a node filled by a decision this one did not see, a pod changed since)
    // goes back to the queue with backoff however often it happens, as in kube: dropping the
    // pod would leave it Pending until some node changed.
    retriesRejectedForever: true,
    decide: (key, view, context) => decideCounted([key], view, context).get(key) ?? { commands: [] },
    decideAll: decideCounted,
    attach: (projection) => {
      // The change feed is emitted synchronously after each committed batch, so from here on
      // the cache holds the state at the projection's cursor whenever a round can run.
      const cache = createNodeInfoCache();
      const subscription = projection.changes$.subscribe((change) => cache.apply(change));
      cache.reset(projection.view());
      const current = { projection, cache };
      attached = current;
      const stopCounting = metrics?.countPendingWith(() => countPending(projection.view(), retryProfile, new Set(profiles.keys())));
      return () => {
        stopCounting?.();
        subscription.unsubscribe();
        if (attached === current) attached = undefined;
      };
    },
  }, schedulerEventSource, narrateScheduling, createEventBudget(new Set(profiles.keys()), SCHEDULER_EVENT_PIPELINE));
};
