/**
 * What the Kubernetes API document does not say about a kind, taken from kube-apiserver
 * 1.32's own code; `codegen.ts` joins it with what it derives from the document's `paths`.
 * The keys of `KIND_OVERLAY` are the kinds logplane serves: the generator emits exactly
 * these, and fails if one is missing from the document.
 *
 * Sources (kubernetes/kubernetes, release 1.32):
 * - short names, categories: `pkg/registry/<group>/<resource>/storage/storage.go`
 *   (`ShortNames()`, `Categories()`).
 * - name formats: the `ValidateNameFunc` each kind's `pkg/apis/<group>/validation` passes
 *   to `ValidateObjectMeta`.
 * - selectable fields: `GetAttrs` / `…ToSelectableFields` in each `pkg/registry/…/strategy.go`.
 * - printer columns: `AddHandlers` in `pkg/printers/internalversion/printers.go`; kinds it
 *   has no handler for get `rest.NewDefaultTableConvertor` (Name, Created At).
 * - group order and version order: `apiVersionPriorities` in
 *   `cmd/kube-apiserver/app/aggregator.go` (`/apis` lists groups by priority, highest first).
 */
import type { NameFormat, PrinterColumn } from './descriptor.ts';

/**
 * A column description as kube writes it: literal text, or `SwaggerDoc()[property]` of a
 * Go type, which is the `description` of that property in the API document.
 */
export type DescriptionSource = string | { readonly definition: string; readonly property: string };

/** One printer column before its description is resolved against the API document. */
export interface ColumnSource extends Omit<PrinterColumn, 'description' | 'priority'> {
  readonly description: DescriptionSource;
  readonly priority?: number;
}

/** The facts about one kind that the document does not carry. */
export interface KindOverlay {
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
  readonly nameFormat: NameFormat;
  readonly selectableFields?: readonly string[];
  readonly printerColumns: readonly ColumnSource[];
  /** The version kube stores; required when the document serves more than one stable version. */
  readonly storageVersion?: string;
}

/** `GroupPriorityMinimum` of each group (aggregator.go); `/apis` sorts by it, then by name. */
export const GROUP_PRIORITY: Readonly<Record<string, number>> = {
  '': 18000,
  apps: 17800,
  'events.k8s.io': 17750,
  autoscaling: 17500,
  batch: 17400,
  'certificates.k8s.io': 17300,
  'networking.k8s.io': 17200,
  policy: 17100,
  'rbac.authorization.k8s.io': 17000,
  'storage.k8s.io': 16800,
  'admissionregistration.k8s.io': 16700,
  'apiextensions.k8s.io': 16700,
  'scheduling.k8s.io': 16600,
  'coordination.k8s.io': 16500,
  'node.k8s.io': 16300,
  'discovery.k8s.io': 16200,
};

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

function doc(definition: string, property: string): DescriptionSource {
  return { definition, property };
}

const NAME: ColumnSource = { name: 'Name', type: 'string', format: 'name', description: doc(META, 'name') };
const AGE: ColumnSource = { name: 'Age', type: 'string', description: doc(META, 'creationTimestamp') };
/** `rest.NewDefaultTableConvertor`: the columns of a kind without a printer handler. */
const DEFAULT_COLUMNS: readonly ColumnSource[] = [
  NAME,
  { name: 'Created At', type: 'date', description: doc(META, 'creationTimestamp') },
];
const CONTAINERS: ColumnSource = {
  name: 'Containers',
  type: 'string',
  priority: 1,
  description: 'Names of each container in the template.',
};
const IMAGES: ColumnSource = {
  name: 'Images',
  type: 'string',
  priority: 1,
  description: 'Images referenced by each container in the template.',
};

function col(
  name: string,
  type: ColumnSource['type'],
  description: DescriptionSource,
  priority = 0,
): ColumnSource {
  return priority === 0 ? { name, type, description } : { name, type, description, priority };
}

const core = (type: string) => `io.k8s.api.core.v1.${type}`;
const apps = (type: string) => `io.k8s.api.apps.v1.${type}`;

/*
 * printers.go describes some columns with the SwaggerDoc of a version that 1.32 no longer
 * serves (extensions/v1beta1, apps/v1beta1, batch/v1beta1, autoscaling/v2beta1,
 * rbac/v1beta1, certificates/v1beta1, discovery/v1beta1); those texts are not in the
 * document, so the same property of the served version stands in (marked "served text").
 */

/** Every kind logplane serves, keyed `group/kind` (`''` is core: `/Pod`). */
export const KIND_OVERLAY = {
  // core/v1 — pkg/registry/core/*/storage/storage.go, pkg/apis/core/validation/validation.go
  '/Namespace': {
    shortNames: ['ns'],
    nameFormat: 'label',
    // "name": kube's legacy alias of metadata.name ("a bug … kept for backward compatibility").
    selectableFields: ['status.phase', 'name'],
    printerColumns: [NAME, col('Status', 'string', 'The status of the namespace'), AGE],
  },
  '/Node': {
    shortNames: ['no'],
    nameFormat: 'subdomain',
    selectableFields: ['spec.unschedulable'],
    printerColumns: [
      NAME,
      col('Status', 'string', 'The status of the node'),
      col('Roles', 'string', 'The roles of the node'),
      AGE,
      col('Version', 'string', doc(core('NodeSystemInfo'), 'kubeletVersion')),
      col('Internal-IP', 'string', doc(core('NodeStatus'), 'addresses'), 1),
      col('External-IP', 'string', doc(core('NodeStatus'), 'addresses'), 1),
      col('OS-Image', 'string', doc(core('NodeSystemInfo'), 'osImage'), 1),
      col('Kernel-Version', 'string', doc(core('NodeSystemInfo'), 'kernelVersion'), 1),
      col('Container-Runtime', 'string', doc(core('NodeSystemInfo'), 'containerRuntimeVersion'), 1),
    ],
  },
  '/Pod': {
    shortNames: ['po'],
    categories: ['all'],
    nameFormat: 'subdomain',
    selectableFields: [
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ],
    printerColumns: [
      NAME,
      col('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
      col('Status', 'string', 'The aggregate status of the containers in this pod.'),
      col(
        'Restarts',
        'string',
        'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
      ),
      AGE,
      col('IP', 'string', doc(core('PodStatus'), 'podIP'), 1),
      col('Node', 'string', doc(core('PodSpec'), 'nodeName'), 1),
      col('Nominated Node', 'string', doc(core('PodStatus'), 'nominatedNodeName'), 1),
      col('Readiness Gates', 'string', doc(core('PodSpec'), 'readinessGates'), 1),
    ],
  },
  '/Service': {
    shortNames: ['svc'],
    categories: ['all'],
    // kube: ValidateServiceName = NameIsDNS1035Label (a label that starts with a letter).
    nameFormat: 'dns1035Label',
    // pkg/registry/core/service/strategy.go ServiceSelectableFields (since 1.30, for kube-proxy).
    selectableFields: ['spec.clusterIP', 'spec.type'],
    printerColumns: [
      NAME,
      col('Type', 'string', doc(core('ServiceSpec'), 'type')),
      col('Cluster-IP', 'string', doc(core('ServiceSpec'), 'clusterIP')),
      col('External-IP', 'string', doc(core('ServiceSpec'), 'externalIPs')),
      col('Port(s)', 'string', doc(core('ServiceSpec'), 'ports')),
      AGE,
      col('Selector', 'string', doc(core('ServiceSpec'), 'selector'), 1),
    ],
  },
  '/Endpoints': {
    shortNames: ['ep'],
    nameFormat: 'subdomain',
    printerColumns: [NAME, col('Endpoints', 'string', doc(core('Endpoints'), 'subsets')), AGE],
  },
  '/ConfigMap': {
    shortNames: ['cm'],
    nameFormat: 'subdomain',
    printerColumns: [NAME, col('Data', 'string', doc(core('ConfigMap'), 'data')), AGE],
  },
  '/Secret': {
    nameFormat: 'subdomain',
    selectableFields: ['type'],
    printerColumns: [
      NAME,
      col('Type', 'string', doc(core('Secret'), 'type')),
      col('Data', 'string', doc(core('Secret'), 'data')),
      AGE,
    ],
  },
  '/ServiceAccount': {
    shortNames: ['sa'],
    nameFormat: 'subdomain',
    printerColumns: [NAME, col('Secrets', 'string', doc(core('ServiceAccount'), 'secrets')), AGE],
  },
  '/Event': {
    shortNames: ['ev'],
    nameFormat: 'subdomain',
    selectableFields: EVENT_FIELDS(),
    printerColumns: EVENT_COLUMNS(),
  },
  '/LimitRange': {
    shortNames: ['limits'],
    nameFormat: 'subdomain',
    printerColumns: DEFAULT_COLUMNS,
  },
  '/ResourceQuota': {
    shortNames: ['quota'],
    nameFormat: 'subdomain',
    // Copies of printers.go in the index disagree (Name, Request, Limit, Age in one);
    // this is the order `kubectl get quota` shows.
    printerColumns: [
      NAME,
      AGE,
      col('Request', 'string', 'Request represents a minimum amount of cpu/memory that a container may consume.'),
      col(
        'Limit',
        'string',
        'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.',
      ),
    ],
  },
  '/PersistentVolume': {
    shortNames: ['pv'],
    nameFormat: 'subdomain',
    selectableFields: ['name'],
    printerColumns: [
      NAME,
      col('Capacity', 'string', doc(core('PersistentVolumeSpec'), 'capacity')),
      col('Access Modes', 'string', doc(core('PersistentVolumeSpec'), 'accessModes')),
      col('Reclaim Policy', 'string', doc(core('PersistentVolumeSpec'), 'persistentVolumeReclaimPolicy')),
      col('Status', 'string', doc(core('PersistentVolumeStatus'), 'phase')),
      col('Claim', 'string', doc(core('PersistentVolumeSpec'), 'claimRef')),
      col('StorageClass', 'string', 'StorageClass of the pv'),
      col('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pv'),
      col('Reason', 'string', doc(core('PersistentVolumeStatus'), 'reason')),
      AGE,
      col('VolumeMode', 'string', doc(core('PersistentVolumeSpec'), 'volumeMode'), 1),
    ],
  },
  '/PersistentVolumeClaim': {
    shortNames: ['pvc'],
    nameFormat: 'subdomain',
    selectableFields: ['name'],
    printerColumns: [
      NAME,
      col('Status', 'string', doc(core('PersistentVolumeClaimStatus'), 'phase')),
      col('Volume', 'string', doc(core('PersistentVolumeClaimSpec'), 'volumeName')),
      col('Capacity', 'string', doc(core('PersistentVolumeClaimStatus'), 'capacity')),
      col('Access Modes', 'string', doc(core('PersistentVolumeClaimStatus'), 'accessModes')),
      col('StorageClass', 'string', 'StorageClass of the pvc'),
      col('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pvc'),
      AGE,
      col('VolumeMode', 'string', doc(core('PersistentVolumeClaimSpec'), 'volumeMode'), 1),
    ],
  },
  '/ReplicationController': {
    shortNames: ['rc'],
    categories: ['all'],
    nameFormat: 'subdomain',
    selectableFields: ['status.replicas'],
    printerColumns: [
      NAME,
      col('Desired', 'integer', doc(core('ReplicationControllerSpec'), 'replicas')),
      col('Current', 'integer', doc(core('ReplicationControllerStatus'), 'replicas')),
      col('Ready', 'integer', doc(core('ReplicationControllerStatus'), 'readyReplicas')),
      AGE,
      CONTAINERS,
      IMAGES,
      col('Selector', 'string', doc(core('ReplicationControllerSpec'), 'selector'), 1),
    ],
  },
  '/PodTemplate': {
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('Containers', 'string', 'Names of each container in the template.'),
      col('Images', 'string', 'Images referenced by each container in the template.'),
      col('Pod Labels', 'string', 'The labels for the pod template.'),
    ],
  },

  // apps/v1 — pkg/registry/apps/*/storage/storage.go, pkg/apis/apps/validation/validation.go
  // (served text: extensions/v1beta1 and apps/v1beta1 → apps/v1)
  'apps/Deployment': {
    shortNames: ['deploy'],
    categories: ['all'],
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('Ready', 'string', 'Number of the pod with ready state'),
      col('Up-to-date', 'string', doc(apps('DeploymentStatus'), 'updatedReplicas')),
      col('Available', 'string', doc(apps('DeploymentStatus'), 'availableReplicas')),
      AGE,
      CONTAINERS,
      IMAGES,
      col('Selector', 'string', doc(apps('DeploymentSpec'), 'selector'), 1),
    ],
  },
  'apps/ReplicaSet': {
    shortNames: ['rs'],
    categories: ['all'],
    nameFormat: 'subdomain',
    selectableFields: ['status.replicas'],
    printerColumns: [
      NAME,
      col('Desired', 'integer', doc(apps('ReplicaSetSpec'), 'replicas')),
      col('Current', 'integer', doc(apps('ReplicaSetStatus'), 'replicas')),
      col('Ready', 'integer', doc(apps('ReplicaSetStatus'), 'readyReplicas')),
      AGE,
      CONTAINERS,
      IMAGES,
      col('Selector', 'string', doc(apps('ReplicaSetSpec'), 'selector'), 1),
    ],
  },
  'apps/DaemonSet': {
    shortNames: ['ds'],
    categories: ['all'],
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('Desired', 'integer', doc(apps('DaemonSetStatus'), 'desiredNumberScheduled')),
      col('Current', 'integer', doc(apps('DaemonSetStatus'), 'currentNumberScheduled')),
      col('Ready', 'integer', doc(apps('DaemonSetStatus'), 'numberReady')),
      col('Up-to-date', 'integer', doc(apps('DaemonSetStatus'), 'updatedNumberScheduled')),
      col('Available', 'integer', doc(apps('DaemonSetStatus'), 'numberAvailable')),
      col('Node Selector', 'string', doc(core('PodSpec'), 'nodeSelector')),
      AGE,
      CONTAINERS,
      IMAGES,
      col('Selector', 'string', doc(apps('DaemonSetSpec'), 'selector'), 1),
    ],
  },
  'apps/StatefulSet': {
    shortNames: ['sts'],
    categories: ['all'],
    nameFormat: 'subdomain',
    printerColumns: [NAME, col('Ready', 'string', 'Number of the pod with ready state'), AGE, CONTAINERS, IMAGES],
  },
  'apps/ControllerRevision': {
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('Controller', 'string', 'Controller of the object'),
      col('Revision', 'string', doc(apps('ControllerRevision'), 'revision')),
      AGE,
    ],
  },

  // events.k8s.io/v1 — served by the core event storage (pkg/registry/core/event), so its
  // table, selectable fields and validation are core Event's.
  'events.k8s.io/Event': {
    shortNames: ['ev'],
    nameFormat: 'subdomain',
    selectableFields: EVENT_FIELDS(),
    printerColumns: EVENT_COLUMNS(),
  },

  // autoscaling — pkg/registry/autoscaling/horizontalpodautoscaler (served text: v2beta1 → v2)
  'autoscaling/HorizontalPodAutoscaler': {
    shortNames: ['hpa'],
    categories: ['all'],
    nameFormat: 'subdomain',
    storageVersion: 'v2',
    printerColumns: [
      NAME,
      col('Reference', 'string', doc('io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec', 'scaleTargetRef')),
      col('Targets', 'string', doc('io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec', 'metrics')),
      col('MinPods', 'string', doc('io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec', 'minReplicas')),
      col('MaxPods', 'string', doc('io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec', 'maxReplicas')),
      col('Replicas', 'string', doc('io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus', 'currentReplicas')),
      AGE,
    ],
  },

  // batch/v1 — pkg/registry/batch/{job,cronjob} (served text: batch/v1beta1 → batch/v1)
  'batch/Job': {
    categories: ['all'],
    nameFormat: 'subdomain',
    selectableFields: ['status.successful'],
    printerColumns: [
      NAME,
      col('Status', 'string', 'Status of the job.'),
      col('Completions', 'string', doc('io.k8s.api.batch.v1.JobStatus', 'succeeded')),
      col('Duration', 'string', 'Time required to complete the job.'),
      AGE,
      CONTAINERS,
      IMAGES,
      col('Selector', 'string', doc('io.k8s.api.batch.v1.JobSpec', 'selector'), 1),
    ],
  },
  'batch/CronJob': {
    shortNames: ['cj'],
    categories: ['all'],
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('Schedule', 'string', doc('io.k8s.api.batch.v1.CronJobSpec', 'schedule')),
      col('Timezone', 'string', doc('io.k8s.api.batch.v1.CronJobSpec', 'timeZone')),
      col('Suspend', 'boolean', doc('io.k8s.api.batch.v1.CronJobSpec', 'suspend')),
      col('Active', 'integer', doc('io.k8s.api.batch.v1.CronJobStatus', 'active')),
      col('Last Schedule', 'string', doc('io.k8s.api.batch.v1.CronJobStatus', 'lastScheduleTime')),
      AGE,
      CONTAINERS,
      IMAGES,
      col('Selector', 'string', doc('io.k8s.api.batch.v1.JobSpec', 'selector'), 1),
    ],
  },

  // certificates.k8s.io/v1 — ValidateCertificateRequestName accepts any name ("We don't care
  // what you call your certificate requests"): only the apiserver's path-segment check applies.
  // (served text: certificates/v1beta1 → v1)
  'certificates.k8s.io/CertificateSigningRequest': {
    shortNames: ['csr'],
    nameFormat: 'pathSegment',
    selectableFields: ['spec.signerName'],
    printerColumns: [
      NAME,
      AGE,
      col('SignerName', 'string', doc('io.k8s.api.certificates.v1.CertificateSigningRequestSpec', 'signerName')),
      col('Requestor', 'string', doc('io.k8s.api.certificates.v1.CertificateSigningRequestSpec', 'request')),
      col(
        'RequestedDuration',
        'string',
        doc('io.k8s.api.certificates.v1.CertificateSigningRequestSpec', 'expirationSeconds'),
      ),
      col('Condition', 'string', doc('io.k8s.api.certificates.v1.CertificateSigningRequestStatus', 'conditions')),
    ],
  },

  // networking.k8s.io/v1 — pkg/registry/networking/* (served text: extensions/v1beta1 → v1)
  'networking.k8s.io/Ingress': {
    shortNames: ['ing'],
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('Class', 'string', 'The name of the IngressClass resource that should be used for additional configuration'),
      col('Hosts', 'string', 'Hosts that incoming requests are matched against before the ingress rule'),
      col('Address', 'string', 'Address is a list containing ingress points for the load-balancer'),
      col('Ports', 'string', 'Ports of TLS configurations that open'),
      AGE,
    ],
  },
  'networking.k8s.io/IngressClass': {
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('Controller', 'string', 'Controller that is responsible for handling this class'),
      col('Parameters', 'string', 'A reference to a resource with additional parameters'),
      AGE,
    ],
  },
  'networking.k8s.io/NetworkPolicy': {
    shortNames: ['netpol'],
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('Pod-Selector', 'string', doc('io.k8s.api.networking.v1.NetworkPolicySpec', 'podSelector')),
      AGE,
    ],
  },

  // policy/v1 — pkg/registry/policy/poddisruptionbudget
  'policy/PodDisruptionBudget': {
    shortNames: ['pdb'],
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('Min Available', 'string', 'The minimum number of pods that must be available.'),
      col('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable.'),
      col('Allowed Disruptions', 'integer', 'Calculated number of pods that may be disrupted at this time.'),
      AGE,
    ],
  },

  // rbac.authorization.k8s.io/v1 — ValidateRBACName = path.IsValidPathSegmentName; roles have
  // no printer handler (default table). (served text: rbac/v1beta1 → v1)
  'rbac.authorization.k8s.io/Role': { nameFormat: 'pathSegment', printerColumns: DEFAULT_COLUMNS },
  'rbac.authorization.k8s.io/ClusterRole': { nameFormat: 'pathSegment', printerColumns: DEFAULT_COLUMNS },
  'rbac.authorization.k8s.io/RoleBinding': {
    nameFormat: 'pathSegment',
    printerColumns: BINDING_COLUMNS('RoleBinding', 'roleBinding'),
  },
  'rbac.authorization.k8s.io/ClusterRoleBinding': {
    nameFormat: 'pathSegment',
    printerColumns: BINDING_COLUMNS('ClusterRoleBinding', 'clusterRoleBinding'),
  },

  // storage.k8s.io/v1 — pkg/registry/storage/*; StorageClass and VolumeAttachment use
  // ValidateClassName, CSINode ValidateNodeName (subdomains). CSIDriver uses
  // ValidateCSIDriverName (a 63-character qualified name), nearest here: subdomain.
  'storage.k8s.io/StorageClass': {
    shortNames: ['sc'],
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('Provisioner', 'string', doc('io.k8s.api.storage.v1.StorageClass', 'provisioner')),
      col('ReclaimPolicy', 'string', doc('io.k8s.api.storage.v1.StorageClass', 'reclaimPolicy')),
      col('VolumeBindingMode', 'string', doc('io.k8s.api.storage.v1.StorageClass', 'volumeBindingMode')),
      col('AllowVolumeExpansion', 'string', doc('io.k8s.api.storage.v1.StorageClass', 'allowVolumeExpansion')),
      AGE,
    ],
  },
  'storage.k8s.io/CSIDriver': {
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('AttachRequired', 'boolean', doc('io.k8s.api.storage.v1.CSIDriverSpec', 'attachRequired')),
      col('PodInfoOnMount', 'boolean', doc('io.k8s.api.storage.v1.CSIDriverSpec', 'podInfoOnMount')),
      col('StorageCapacity', 'boolean', doc('io.k8s.api.storage.v1.CSIDriverSpec', 'storageCapacity')),
      col('TokenRequests', 'string', doc('io.k8s.api.storage.v1.CSIDriverSpec', 'tokenRequests')),
      col('RequiresRepublish', 'boolean', doc('io.k8s.api.storage.v1.CSIDriverSpec', 'requiresRepublish')),
      col('Modes', 'string', doc('io.k8s.api.storage.v1.CSIDriverSpec', 'volumeLifecycleModes')),
      AGE,
    ],
  },
  'storage.k8s.io/CSINode': {
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('Drivers', 'integer', 'Drivers indicates the number of CSI drivers registered on the node'),
      AGE,
    ],
  },
  'storage.k8s.io/VolumeAttachment': {
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      { name: 'Attacher', type: 'string', format: 'name', description: doc('io.k8s.api.storage.v1.VolumeAttachmentSpec', 'attacher') },
      col('PV', 'string', doc('io.k8s.api.storage.v1.VolumeAttachmentSource', 'persistentVolumeName')),
      col('Node', 'string', doc('io.k8s.api.storage.v1.VolumeAttachmentSpec', 'nodeName')),
      col('Attached', 'boolean', doc('io.k8s.api.storage.v1.VolumeAttachmentStatus', 'attached')),
      AGE,
    ],
  },

  // admissionregistration.k8s.io/v1 — storage.go: Categories() = api-extensions
  'admissionregistration.k8s.io/MutatingWebhookConfiguration': {
    categories: ['api-extensions'],
    nameFormat: 'subdomain',
    printerColumns: WEBHOOK_COLUMNS(),
  },
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration': {
    categories: ['api-extensions'],
    nameFormat: 'subdomain',
    printerColumns: WEBHOOK_COLUMNS(),
  },
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy': {
    categories: ['api-extensions'],
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('Validations', 'integer', 'Validations indicates the number of validation rules defined in this configuration'),
      col('ParamKind', 'string', 'ParamKind specifies the kind of resources used to parameterize this policy'),
      AGE,
    ],
  },
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding': {
    categories: ['api-extensions'],
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('PolicyName', 'string', 'PolicyName indicates the policy definition which the policy binding binded to'),
      col('ParamRef', 'string', 'ParamRef indicates the param resource which sets the configration param'),
      AGE,
    ],
  },

  // apiextensions.k8s.io/v1 — apiextensions-apiserver pkg/registry/customresourcedefinition
  // (ShortNames crd, crds; Categories api-extensions; no printer handler: the default table;
  // names are DNS subdomains, and must be `<plural>.<group>`, which validation checks).
  'apiextensions.k8s.io/CustomResourceDefinition': {
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    nameFormat: 'subdomain',
    printerColumns: DEFAULT_COLUMNS,
  },

  // scheduling.k8s.io/v1 — ValidatePriorityClassName (subdomain)
  'scheduling.k8s.io/PriorityClass': {
    shortNames: ['pc'],
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('Value', 'integer', doc('io.k8s.api.scheduling.v1.PriorityClass', 'value')),
      col('Global-Default', 'boolean', doc('io.k8s.api.scheduling.v1.PriorityClass', 'globalDefault')),
      AGE,
      col('PreemptionPolicy', 'string', doc('io.k8s.api.scheduling.v1.PriorityClass', 'preemptionPolicy')),
    ],
  },

  // coordination.k8s.io/v1 — pkg/registry/coordination/lease
  'coordination.k8s.io/Lease': {
    nameFormat: 'subdomain',
    printerColumns: [NAME, col('Holder', 'string', doc('io.k8s.api.coordination.v1.LeaseSpec', 'holderIdentity')), AGE],
  },

  // node.k8s.io/v1 — ValidateRuntimeClassName (subdomain). kube describes Handler with
  // metav1.ObjectMeta{}.SwaggerDoc()["handler"], a key ObjectMeta does not have: ''.
  'node.k8s.io/RuntimeClass': {
    nameFormat: 'subdomain',
    printerColumns: [NAME, col('Handler', 'string', ''), AGE],
  },

  // discovery.k8s.io/v1 — pkg/registry/discovery/endpointslice (served text: v1beta1 → v1)
  'discovery.k8s.io/EndpointSlice': {
    nameFormat: 'subdomain',
    printerColumns: [
      NAME,
      col('AddressType', 'string', doc('io.k8s.api.discovery.v1.EndpointSlice', 'addressType')),
      col('Ports', 'string', doc('io.k8s.api.discovery.v1.EndpointSlice', 'ports')),
      col('Endpoints', 'string', doc('io.k8s.api.discovery.v1.EndpointSlice', 'endpoints')),
      AGE,
    ],
  },
} as const satisfies Record<string, KindOverlay>;

/** A kind logplane serves, as `group/kind`. */
export type KindKey = keyof typeof KIND_OVERLAY;

/** pkg/registry/core/event/strategy.go ToSelectableFields (shared by events.k8s.io). */
function EVENT_FIELDS(): readonly string[] {
  return [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ];
}

function EVENT_COLUMNS(): readonly ColumnSource[] {
  const event = core('Event');
  return [
    col('Last Seen', 'string', doc(event, 'lastTimestamp')),
    col('Type', 'string', doc(event, 'type')),
    col('Reason', 'string', doc(event, 'reason')),
    col('Object', 'string', doc(event, 'involvedObject')),
    col('Subobject', 'string', doc(core('ObjectReference'), 'fieldPath'), 1),
    col('Source', 'string', doc(event, 'source'), 1),
    col('Message', 'string', doc(event, 'message')),
    col('First Seen', 'string', doc(event, 'firstTimestamp'), 1),
    col('Count', 'string', doc(event, 'count'), 1),
    { ...NAME, priority: 1 },
  ];
}

function BINDING_COLUMNS(kind: string, noun: string): readonly ColumnSource[] {
  return [
    NAME,
    col('Role', 'string', doc(`io.k8s.api.rbac.v1.${kind}`, 'roleRef')),
    AGE,
    col('Users', 'string', `Users in the ${noun}`, 1),
    col('Groups', 'string', `Groups in the ${noun}`, 1),
    col('ServiceAccounts', 'string', `ServiceAccounts in the ${noun}`, 1),
  ];
}

function WEBHOOK_COLUMNS(): readonly ColumnSource[] {
  return [
    NAME,
    col('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration'),
    AGE,
  ];
}
