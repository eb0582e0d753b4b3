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
  'node-lifecycle',
  'garbage-collector',
  'namespace',
  'root-ca-cert-publisher',
  'serviceaccount',
  'resourcequota',
  'pvc-protection',
  'pv-protection',
] as const;
export type ControllerName = (typeof CONTROLLER_NAMES)[number];
