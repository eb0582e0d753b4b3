/**
 * Which nodes a DaemonSet runs on, and its pods, pure (kube's `daemon/util` and
 * `NodeShouldRunDaemonPod`): the template with kube's default DaemonSet tolerations must
 * fit the node's name, node selector and required node affinity, and tolerate its NoSchedule
 * and NoExecute taints (an untolerated NoExecute taint also evicts a running pod). Pods are
 * created unscheduled with a required node affinity `matchFields metadata.name In [node]`,
 * so the scheduler places them (as kube since 1.12).
 */
import type { DaemonSet, Node, NodeAffinity, Pod, PodTemplateSpec, Toleration } from '../../schemas/index.ts';
import { controllerReferenceTo, safeHash } from '../replicaset/objects.ts';
import { nodeAffinityMatcher } from '../scheduler/plugins/node-affinity/index.ts';
import { effectiveTaints, TaintEffect, tolerates } from '../scheduler/plugins/taint-toleration/index.ts';
import { CONTROLLER_REVISION_HASH_LABEL } from '../history/index.ts';

/** The deprecated label with the DaemonSet's generation its pods were made at (`pod-template-generation`). */
export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

/** Update strategies. */
export const DS_UPDATE = { RollingUpdate: 'RollingUpdate', OnDelete: 'OnDelete' } as const;

const exists = (key: string, effect: string): Toleration => ({ key, operator: 'Exists', effect });

/** kube's `AddOrUpdateDaemonPodTolerations`: what every DaemonSet pod tolerates. */
export const DEFAULT_DAEMON_TOLERATIONS: readonly Toleration[] = [
  exists('node.kubernetes.io/not-ready', TaintEffect.NoExecute),
  exists('node.kubernetes.io/unreachable', TaintEffect.NoExecute),
  exists('node.kubernetes.io/disk-pressure', TaintEffect.NoSchedule),
  exists('node.kubernetes.io/memory-pressure', TaintEffect.NoSchedule),
  exists('node.kubernetes.io/pid-pressure', TaintEffect.NoSchedule),
  exists('node.kubernetes.io/unschedulable', TaintEffect.NoSchedule),
];

/** The toleration a hostNetwork DaemonSet pod gets in addition. */
export const HOST_NETWORK_TOLERATION: Toleration = exists('node.kubernetes.io/network-unavailable', TaintEffect.NoSchedule);

const sameToleration = (a: Toleration, b: Toleration): boolean =>
  (a.key ?? '') === (b.key ?? '') && (a.operator ?? 'Equal') === (b.operator ?? 'Equal') && (a.value ?? '') === (b.value ?? '') && (a.effect ?? '') === (b.effect ?? '');

/**
 * The template's tolerations with the defaults added (kube's `AddOrUpdateTolerationInPodSpec`):
 * a toleration of the same key, operator, value and effect is replaced by the default (which
 * has no tolerationSeconds: DaemonSet pods are never evicted for it), any other default is appended.
 */
export const daemonTolerations = (template: PodTemplateSpec): Toleration[] => {
  const defaults = template.spec?.hostNetwork ? [...DEFAULT_DAEMON_TOLERATIONS, HOST_NETWORK_TOLERATION] : DEFAULT_DAEMON_TOLERATIONS;
  const result = [...(template.spec?.tolerations ?? [])];
  for (const toleration of defaults) {
    const index = result.findIndex((t) => sameToleration(t, toleration));
    if (index >= 0) result[index] = { ...toleration };
    else result.push({ ...toleration });
  }
  return result;
};

/** kube's `ReplaceDaemonSetPodNodeNameNodeAffinity`: the required node affinity becomes `metadata.name In [node]`; preferred terms stay. */
export const nodeNameAffinity = (affinity: NodeAffinity | undefined, node: string): NodeAffinity => ({
  ...affinity,
  requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }] },
});

/** The node a DaemonSet pod is for: its `nodeName`, or the node its `metadata.name` node affinity names (kube's `GetTargetNodeName`). */
export const targetNodeName = (pod: Pod): string | undefined => {
  if (pod.spec.nodeName) return pod.spec.nodeName;
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const term of terms) {
    for (const field of term.matchFields ?? []) {
      if (field.key === 'metadata.name' && field.operator === 'In' && field.values?.length === 1) return field.values[0];
    }
  }
  return undefined;
};

/** Whether the DaemonSet should run a pod on `node`, and whether a pod already there may keep running. */
export interface NodeVerdict {
  readonly shouldRun: boolean;
  readonly shouldContinueRunning: boolean;
}

/** kube's `NodeShouldRunDaemonPod` for the DaemonSet's template (its tolerations completed with the defaults). */
export const nodeShouldRunDaemonPod = (ds: DaemonSet, node: Node): NodeVerdict => {
  const template = ds.spec?.template;
  if (!template) return { shouldRun: false, shouldContinueRunning: false };
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: ds.metadata.name },
    spec: { ...template.spec, nodeName: node.metadata.name, tolerations: daemonTolerations(template) },
  };
  const wanted = template.spec?.nodeName;
  if ((wanted && wanted !== node.metadata.name) || !nodeAffinityMatcher(pod)(node)) return { shouldRun: false, shouldContinueRunning: false };
  const untolerated = effectiveTaints(node).filter(
    (taint) => (taint.effect === TaintEffect.NoSchedule || taint.effect === TaintEffect.NoExecute) && !tolerates(pod.spec.tolerations, taint),
  );
  if (untolerated.length === 0) return { shouldRun: true, shouldContinueRunning: true };
  return { shouldRun: false, shouldContinueRunning: !untolerated.some((taint) => taint.effect === TaintEffect.NoExecute) };
};

/** Length of the generated part of a DaemonSet pod's name (as kube's generateName suffix). */
const SUFFIX_LENGTH = 5;

/** The name of a new pod of `ds` for `node`: `<ds>-<5 chars>`, the lowest slot whose name `isTaken` does not report. */
export const daemonPodName = (ds: DaemonSet, node: string, isTaken: (name: string) => boolean): string => {
  for (let slot = 0; ; slot++) {
    const name = `${ds.metadata.name}-${safeHash(`${ds.metadata.uid ?? ds.metadata.name}/${node}/${slot}`, SUFFIX_LENGTH)}`;
    if (!isTaken(name)) return name;
  }
};

/**
 * A new pod of `ds` for `node` (kube's `CreatePodTemplate` + `ReplaceDaemonSetPodNodeNameNodeAffinity`):
 * the template with the default tolerations, the revision `hash` and template `generation` labels,
 * the node-name affinity, owned by `ds`, unscheduled.
 */
export const newDaemonPod = (ds: DaemonSet, template: PodTemplateSpec, node: string, name: string, hash: string, generation: number | undefined): Pod => {
  const spec = structuredClone(template.spec ?? { containers: [] });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ds.metadata.namespace ?? 'default',
      labels: {
        ...template.metadata?.labels,
        [CONTROLLER_REVISION_HASH_LABEL]: hash,
        ...(generation !== undefined ? { [TEMPLATE_GENERATION_LABEL]: String(generation) } : {}),
      },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ...(template.metadata?.finalizers ? { finalizers: [...template.metadata.finalizers] } : {}),
      ownerReferences: [controllerReferenceTo(ds)],
    },
    spec: {
      ...spec,
      tolerations: daemonTolerations(template),
      affinity: { ...spec.affinity, nodeAffinity: nodeNameAffinity(spec.affinity?.nodeAffinity, node) },
    },
  };
};

/** kube's `IsPodUpdated`: made from the revision `hash`, or at the DaemonSet's current generation. */
export const isPodUpdated = (pod: Pod, hash: string, generation: number | undefined): boolean =>
  (hash.length > 0 && pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] === hash) ||
  (generation !== undefined && pod.metadata.labels?.[TEMPLATE_GENERATION_LABEL] === String(generation));
