/**
 * Defaulting, as kube-apiserver does it before validation: restartPolicy Always, TCP
 * ports, a Service's targetPort, a Deployment's RollingUpdate 25%/25% strategy, and so on.
 * Defaults are part of what gets appended, so every reader sees the same object.
 */
import { randomUUID } from 'node:crypto';
import { KINDS } from '../../schemas/index.ts';
import { defaultCustomResourceDefinition } from '../custom-resources/crd-validation.ts';
import { defaultRequestsFromLimits, normalizeClaimDataSources, recordPodQos } from './strategies.ts';
import { defaultLimitRange } from './limit-range.ts';
import type { Container, JobSpec, Kind, KubeObject, MutatingWebhook, ObjectOfKind, PodSpec, PodTemplateSpec, Probe, ValidatingWebhook } from '../../schemas/index.ts';

const imagePullPolicy = (image: string | undefined): string => {
  if (!image) return 'IfNotPresent';
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  if (lastSegment.includes('@')) return 'IfNotPresent';
  const tag = lastSegment.includes(':') ? lastSegment.slice(lastSegment.lastIndexOf(':') + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
};

const defaultProbe = (probe: Probe | undefined): void => {
  if (!probe) return;
  probe.periodSeconds ??= 10;
  probe.timeoutSeconds ??= 1;
  probe.successThreshold ??= 1;
  probe.failureThreshold ??= 3;
  if (probe.httpGet) {
    probe.httpGet.path ??= '/';
    probe.httpGet.scheme ??= 'HTTP';
  }
};

const defaultContainer = (container: Container): void => {
  container.imagePullPolicy ??= imagePullPolicy(container.image);
  for (const port of container.ports ?? []) port.protocol ??= 'TCP';
  defaultProbe(container.livenessProbe);
  defaultProbe(container.readinessProbe);
  defaultProbe(container.startupProbe);
};

/** Fills a PodSpec's defaults in place. */
export const defaultPodSpec = (spec: PodSpec): void => {
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ??= 'default-scheduler';
  for (const container of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) defaultContainer(container);
};

type Defaulter<K extends Kind> = (object: ObjectOfKind<K>) => void;

const NONE = (): void => undefined;

const defaultTemplate = (template: PodTemplateSpec | undefined): void => {
  if (template?.spec) defaultPodSpec(template.spec);
};

/**
 * Each kind's defaults, as pkg/apis/<group>/v1/defaults.go sets them (SetObjectDefaults_*);
 * kinds whose Go defaulters set nothing have none.
 */
const DEFAULTERS: { readonly [K in Kind]: Defaulter<K> } = {
  // Kinds without their own: none (an inert kind needs no line here).
  ...(Object.fromEntries(KINDS.map((kind) => [kind, NONE])) as unknown as { [K in Kind]: Defaulter<K> }),
  Pod: (pod) => {
    defaultPodSpec(pod.spec);
    defaultRequestsFromLimits(pod.spec);
  },
  LimitRange: defaultLimitRange,
  // apiextensions v1 SetDefaults_CustomResourceDefinition(Spec): singular, listKind, conversion None …
  CustomResourceDefinition: (object) => {
    object.spec = defaultCustomResourceDefinition(object).spec;
  },
  Deployment: (object) => {
    const spec = object.spec;
    spec.replicas ??= 1;
    spec.revisionHistoryLimit ??= 10;
    spec.progressDeadlineSeconds ??= 600;
    spec.strategy ??= {};
    spec.strategy.type ??= 'RollingUpdate';
    if (spec.strategy.type === 'RollingUpdate') {
      spec.strategy.rollingUpdate ??= {};
      spec.strategy.rollingUpdate.maxUnavailable ??= '25%';
      spec.strategy.rollingUpdate.maxSurge ??= '25%';
    }
    defaultPodSpec(spec.template.spec);
  },
  ReplicaSet: (object) => {
    object.spec.replicas ??= 1;
    defaultTemplate(object.spec.template);
  },
  Service: (object) => {
    const spec = object.spec;
    spec.type ??= 'ClusterIP';
    spec.sessionAffinity ??= 'None';
    for (const port of spec.ports ?? []) {
      port.protocol ??= 'TCP';
      port.targetPort ??= port.port;
    }
  },
  Endpoints: (object) => {
    for (const subset of object.subsets ?? []) for (const port of subset.ports ?? []) port.protocol ??= 'TCP';
  },
  // core/v1
  PersistentVolumeClaim: (object) => {
    if (object.spec) object.spec.volumeMode ??= 'Filesystem';
  },
  PersistentVolume: (object) => {
    if (object.spec) {
      object.spec.persistentVolumeReclaimPolicy ??= 'Retain';
      object.spec.volumeMode ??= 'Filesystem';
    }
  },
  PodTemplate: (object) => defaultTemplate(object.template),
  ReplicationController: (object) => {
    const spec = (object.spec ??= {});
    const labels = spec.template?.metadata?.labels;
    if (labels !== undefined) {
      spec.selector ??= { ...labels };
      if (object.metadata.labels === undefined || Object.keys(object.metadata.labels).length === 0) object.metadata.labels = { ...labels };
    }
    spec.replicas ??= 1;
    spec.minReadySeconds ??= 0;
    defaultTemplate(spec.template);
  },
  Secret: (object) => {
    object.type ??= 'Opaque';
    // stringData is write-only: kube merges it into data (base64), over data's keys, and never stores it.
    if (object.stringData !== undefined) {
      const data: Record<string, string> = { ...object.data };
      for (const [key, value] of Object.entries(object.stringData)) data[key] = Buffer.from(value, 'utf8').toString('base64');
      object.data = data;
      delete object.stringData;
    }
  },
  // apps/v1
  DaemonSet: (object) => {
    const spec = object.spec;
    if (!spec) return;
    spec.updateStrategy ??= {};
    spec.updateStrategy.type ??= 'RollingUpdate';
    if (spec.updateStrategy.type === 'RollingUpdate') {
      spec.updateStrategy.rollingUpdate ??= {};
      spec.updateStrategy.rollingUpdate.maxUnavailable ??= 1;
      spec.updateStrategy.rollingUpdate.maxSurge ??= 0;
    }
    spec.revisionHistoryLimit ??= 10;
    defaultTemplate(spec.template);
  },
  StatefulSet: (object) => {
    const spec = object.spec;
    if (!spec) return;
    spec.replicas ??= 1;
    spec.podManagementPolicy ??= 'OrderedReady';
    spec.updateStrategy ??= {};
    spec.updateStrategy.type ??= 'RollingUpdate';
    if (spec.updateStrategy.type === 'RollingUpdate') {
      spec.updateStrategy.rollingUpdate ??= {};
      spec.updateStrategy.rollingUpdate.partition ??= 0;
    }
    spec.revisionHistoryLimit ??= 10;
    spec.persistentVolumeClaimRetentionPolicy ??= {};
    spec.persistentVolumeClaimRetentionPolicy.whenDeleted ??= 'Retain';
    spec.persistentVolumeClaimRetentionPolicy.whenScaled ??= 'Retain';
    for (const claim of spec.volumeClaimTemplates ?? []) {
      if (claim.spec) claim.spec.volumeMode ??= 'Filesystem';
    }
    defaultTemplate(spec.template);
  },
  // autoscaling/v2
  HorizontalPodAutoscaler: (object) => {
    const spec = object.spec;
    if (!spec) return;
    spec.minReplicas ??= 1;
    if (spec.metrics === undefined || spec.metrics.length === 0) {
      spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
    }
  },
  // batch/v1
  CronJob: (object) => {
    const spec = object.spec;
    if (!spec) return;
    spec.concurrencyPolicy ??= 'Allow';
    spec.suspend ??= false;
    spec.successfulJobsHistoryLimit ??= 3;
    spec.failedJobsHistoryLimit ??= 1;
    const job = spec.jobTemplate.spec;
    if (job) defaultJobSpec(job);
  },
  Job: (object) => {
    if (object.spec) defaultJobSpec(object.spec);
  },
  // networking.k8s.io/v1
  NetworkPolicy: (object) => {
    const spec = object.spec;
    if (!spec) return;
    for (const rule of [...(spec.ingress ?? []), ...(spec.egress ?? [])]) for (const port of rule.ports ?? []) port.protocol ??= 'TCP';
    spec.policyTypes ??= ['Ingress', ...(spec.egress !== undefined && spec.egress.length > 0 ? ['Egress'] : [])];
  },
  // storage.k8s.io/v1
  CSIDriver: (object) => {
    const spec = object.spec;
    spec.attachRequired ??= true;
    spec.podInfoOnMount ??= false;
    spec.storageCapacity ??= false;
    spec.requiresRepublish ??= false;
    spec.seLinuxMount ??= false;
    spec.fsGroupPolicy ??= 'ReadWriteOnceWithFSType';
    spec.volumeLifecycleModes ??= ['Persistent'];
  },
  StorageClass: (object) => {
    object.reclaimPolicy ??= 'Delete';
    object.volumeBindingMode ??= 'Immediate';
  },
  // admissionregistration.k8s.io/v1
  MutatingWebhookConfiguration: (object) => {
    for (const webhook of object.webhooks ?? []) {
      defaultWebhook(webhook);
      webhook.reinvocationPolicy ??= 'Never';
    }
  },
  ValidatingWebhookConfiguration: (object) => {
    for (const webhook of object.webhooks ?? []) defaultWebhook(webhook);
  },
  ValidatingAdmissionPolicy: (object) => {
    if (object.spec) object.spec.failurePolicy ??= 'Fail';
  },
  // scheduling.k8s.io/v1
  PriorityClass: (object) => {
    object.preemptionPolicy ??= 'PreemptLowerPriority';
  },
  // discovery.k8s.io/v1
  EndpointSlice: (object) => {
    for (const port of object.ports ?? []) port.protocol ??= 'TCP';
  },
};

/** pkg/apis/admissionregistration/v1/defaults.go: what mutating and validating webhooks share. */
const defaultWebhook = (webhook: MutatingWebhook | ValidatingWebhook): void => {
  webhook.failurePolicy ??= 'Fail';
  webhook.matchPolicy ??= 'Equivalent';
  webhook.namespaceSelector ??= {};
  webhook.objectSelector ??= {};
  webhook.timeoutSeconds ??= 10;
  for (const rule of webhook.rules ?? []) rule.scope ??= '*';
};

/** pkg/apis/batch/v1/defaults.go SetDefaults_Job. */
const defaultJobSpec = (spec: JobSpec): void => {
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  spec.parallelism ??= 1;
  spec.backoffLimit ??= spec.backoffLimitPerIndex !== undefined ? 2147483647 : 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.podReplacementPolicy ??= spec.podFailurePolicy !== undefined ? 'Failed' : 'TerminatingOrFailed';
  // SetDefaults_PodFailurePolicyOnPodConditionsPattern: a pod condition matches when True.
  for (const rule of spec.podFailurePolicy?.rules ?? []) for (const pattern of rule.onPodConditions ?? []) pattern.status ??= 'True';
  defaultTemplate(spec.template);
};

/** Fills an object's defaults in place (the object has passed the schema check). */
export const applyDefaults = (object: KubeObject): void => {
  (DEFAULTERS[object.kind] as Defaulter<Kind>)(object);
};

/**
 * A Job's generated selector (kube's job strategy, generateSelector): unless
 * `manualSelector`, the Job gets its uid now and selects its pods by it; the template
 * carries the uid and the Job's name, in the batch.kubernetes.io labels and the legacy ones.
 */
const generateJobSelector = (job: ObjectOfKind<'Job'>): void => {
  const spec = job.spec;
  if (!spec || spec.manualSelector === true) return;
  const uid = (job.metadata.uid ??= randomUUID());
  const template = (spec.template.metadata ??= {});
  template.labels = {
    ...template.labels,
    'batch.kubernetes.io/controller-uid': uid,
    'batch.kubernetes.io/job-name': job.metadata.name,
    'controller-uid': uid,
    'job-name': job.metadata.name,
  };
  spec.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
};

/** Who asks for a create, as the strategies that record it see them (kube's `user.Info`). */
export interface Requester {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
}

/**
 * A CertificateSigningRequest records who asked for it (kube's csrStrategy.PrepareForCreate):
 * whatever the body says, `spec.username`, `uid` and `groups` are the requester's, and
 * `extra` is cleared (the authenticators here give none).
 */
const recordCsrRequester = (csr: ObjectOfKind<'CertificateSigningRequest'>, requester: Requester | undefined): void => {
  const spec = csr.spec;
  delete spec.username;
  delete spec.uid;
  delete spec.groups;
  delete spec.extra;
  if (!requester) return;
  spec.username = requester.name;
  if (requester.uid !== '') spec.uid = requester.uid;
  if (requester.groups.length > 0) spec.groups = [...requester.groups];
};

interface AffinityTerm {
  labelSelector?: { matchExpressions?: { key: string; operator: string; values?: string[] }[] } | null;
  matchLabelKeys?: string[] | null;
  mismatchLabelKeys?: string[] | null;
}

/**
 * kube's mutatePodAffinity (MatchLabelKeysInPodAffinity, on by default since 1.31): each
 * pod (anti-)affinity term with a labelSelector gets `key In [value]` for its matchLabelKeys
 * and `key NotIn [value]` for its mismatchLabelKeys that the pod's labels carry.
 */
const mergeAffinityLabelKeys = (pod: ObjectOfKind<'Pod'>): void => {
  const labels = pod.metadata.labels ?? {};
  const apply = (term: AffinityTerm | undefined): void => {
    if (!term?.labelSelector) return;
    const selector = term.labelSelector;
    for (const [keys, operator] of [[term.matchLabelKeys, 'In'], [term.mismatchLabelKeys, 'NotIn']] as const) {
      for (const key of keys ?? []) {
        if (!Object.hasOwn(labels, key)) continue;
        (selector.matchExpressions ??= []).push({ key, operator, values: [labels[key]!] });
      }
    }
  };
  const affinity = pod.spec?.affinity as
    | { podAffinity?: PodAffinityLike | null; podAntiAffinity?: PodAffinityLike | null }
    | null
    | undefined;
  for (const group of [affinity?.podAffinity, affinity?.podAntiAffinity]) {
    for (const term of group?.requiredDuringSchedulingIgnoredDuringExecution ?? []) apply(term);
    for (const weighted of group?.preferredDuringSchedulingIgnoredDuringExecution ?? []) apply(weighted.podAffinityTerm);
  }
};

interface PodAffinityLike {
  requiredDuringSchedulingIgnoredDuringExecution?: AffinityTerm[] | null;
  preferredDuringSchedulingIgnoredDuringExecution?: { podAffinityTerm?: AffinityTerm }[] | null;
}

type CreateStrategy<K extends Kind> = (object: ObjectOfKind<K>, requester: Requester | undefined) => void;

/** What a create adds besides the defaults (kube's PrepareForCreate and create-time Validate steps); nothing for most kinds. */
const CREATE_STRATEGIES: { readonly [K in Kind]: CreateStrategy<K> } = {
  ...(Object.fromEntries(KINDS.map((kind) => [kind, () => undefined])) as unknown as { [K in Kind]: CreateStrategy<K> }),
  Job: generateJobSelector,
  Pod: (pod) => {
    recordPodQos(pod);
    mergeAffinityLabelKeys(pod);
  },
  PersistentVolumeClaim: normalizeClaimDataSources,
  CertificateSigningRequest: recordCsrRequester,
};

/** Applies what a create (and only a create) sets, after the defaults; `requester` is the user of the request (none for the server's own writes). */
export const prepareForCreate = (object: KubeObject, requester?: Requester): void => {
  (CREATE_STRATEGIES[object.kind] as CreateStrategy<Kind>)(object, requester);
};
