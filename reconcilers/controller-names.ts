/**
 * The names of logplane's controllers (`logplane controllers --only`), apart from the
 * controllers themselves so that the CLI can parse its flags without loading them.
 */
/** Every controller logplane has, by name. */
export const CONTROLLER_NAMES = [
  'scheduler',
  'replicaset',
  'replicationcontroller',
  'deployment',
  'job',
  'statefulset',
  'daemonset',
  'disruption',
  'ttl-after-finished',
  'cronjob',
  'hpa',
  'event-ttl',
  'endpoints',
  'endpointslice',
  'endpointslice-mirroring',
  'node-lifecycle',
  'garbage-collector',
  'namespace',
  'root-ca-cert-publisher',
  'serviceaccount',
  'resourcequota',
  'pvc-protection',
  'pv-protection',
  'persistentvolume-binder',
  'local-path-provisioner',
  'ephemeral-volume',
  'customresourcedefinition',
] as const;
export type ControllerName = (typeof CONTROLLER_NAMES)[number];

/**
 * The `name` label of each controller's workqueue metrics: the name kube-controller-manager
 * 1.32 gives the controller's (main) workqueue, so dashboards and alerts written for kube
 * match. Controllers kube has no workqueue for keep logplane's name (`scheduler`, `event-ttl`).
 */
export const WORKQUEUE_NAMES: Readonly<Record<ControllerName, string>> = {
  scheduler: 'scheduler',
  replicaset: 'replicaset',
  replicationcontroller: 'replicationmanager',
  deployment: 'deployment',
  job: 'job',
  statefulset: 'statefulset',
  daemonset: 'daemonset',
  disruption: 'disruption',
  'ttl-after-finished': 'ttl_jobs_to_delete',
  cronjob: 'cronjob',
  hpa: 'horizontalpodautoscaler',
  'event-ttl': 'event-ttl',
  endpoints: 'endpoint',
  endpointslice: 'endpoint_slice',
  'endpointslice-mirroring': 'endpoint_slice_mirroring',
  'node-lifecycle': 'node_lifecycle_controller',
  'garbage-collector': 'garbage_collector_attempt_to_delete',
  namespace: 'namespace',
  'root-ca-cert-publisher': 'root_ca_cert_publisher',
  serviceaccount: 'serviceaccount',
  resourcequota: 'resourcequota_primary',
  'pvc-protection': 'pvcprotection',
  'pv-protection': 'pvprotection',
  // kube's PV controller has two queues, `volumes` and `claims`; logplane's one queue holds both.
  'persistentvolume-binder': 'volumes',
  'local-path-provisioner': 'local-path-provisioner',
  'ephemeral-volume': 'ephemeral_volume',
  // apiextensions-apiserver's naming controller (the establishing and finalizing parts share this reconciler).
  customresourcedefinition: 'crd_naming_condition_controller',
};

/** The workqueue `name` of controller `name` (its own name for a controller logplane does not know). */
export const workqueueName = (name: string): string =>
  Object.hasOwn(WORKQUEUE_NAMES, name) ? WORKQUEUE_NAMES[name as ControllerName] : name;
