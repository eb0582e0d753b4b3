/**
 * Starts the controllers of a cluster, each as its own consumer-group member on the
 * shared projection of this process.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { EventLog } from '../log/port.ts';
import type { Projection } from '../projections/index.ts';
import { createDeploymentController } from './deployment/index.ts';
import { createDisruptionController } from './disruption/index.ts';
import { createEndpointsController } from './endpoints/index.ts';
import { createEndpointSliceController } from './endpointslice/index.ts';
import { createEndpointSliceMirroringController } from './endpointslice-mirroring/index.ts';
import { createGarbageCollector } from './garbage-collector/index.ts';
import { createNamespaceController } from './namespace/index.ts';
import { createNodeLifecycleController, trackHeartbeats, type HeartbeatTracker } from './node-lifecycle/index.ts';
import { type CreateAdmission, withCreateAdmission } from './create-admission.ts';
import { createRuntimeMetrics, startReconciler, type Controller, type ReconcilerRuntime } from './runtime.ts';
import { createReplicaSetController } from './replicaset/index.ts';
import { createRootCACertPublisher } from './root-ca-cert-publisher/index.ts';
import { createServiceAccountController } from './serviceaccount/index.ts';
import { createResourceQuotaController } from './resourcequota/index.ts';
import { createReplicationController } from './replicationcontroller/index.ts';
import { createJobController } from './job/index.ts';
import { createStatefulSetController } from './statefulset/index.ts';
import { createDaemonSetController } from './daemonset/index.ts';
import { createTtlAfterFinishedController } from './ttl-after-finished/index.ts';
import { createCustomResourceDefinitionController } from './customresourcedefinition/index.ts';
import { createPvcProtectionController, createPvProtectionController } from './storage-protection/index.ts';
import { createPersistentVolumeBinder } from './persistentvolume/index.ts';
import { createEphemeralVolumeController } from './ephemeral-volume/index.ts';
import { createLocalPathProvisioner } from './local-path-provisioner/index.ts';
import { createCronJobController } from './cronjob/index.ts';
import { createEventTtlController } from './event-ttl/index.ts';
import { createSchedulerController } from './scheduler/controller.ts';
import { createSchedulerMetrics } from './scheduler/metrics.ts';
import type { ResolvedSchedulerConfig } from './scheduler/config/index.ts';
import { createHpaController, type MetricsSource } from './hpa/index.ts';

import { CONTROLLER_NAMES, type ControllerName } from './controller-names.ts';

export { CONTROLLER_NAMES, type ControllerName };

export interface ControllersOptions {
  readonly log: EventLog;
  readonly projection: Projection;
  readonly logger: Logger;
  /** Where the runtimes' workqueue and consumer-group metrics and the scheduler's metrics go; default nowhere. */
  readonly registry?: Registry;
  /**
   * The apiserver's create path for the objects controllers create (defaults, create-time
   * fields, mutating admission), handed in by the composition root: reconcilers do not depend
   * on the apiserver. Without it, created objects are recorded as the controllers build them.
   */
  readonly admitCreated?: CreateAdmission;
  /** Run only these (default: all). */
  readonly only?: readonly ControllerName[];
  /** Node silence before Ready=Unknown (ms, default 50,000). */
  readonly nodeGracePeriodMs?: number;
  /** Default toleration of the unreachable taint (s, default 300). */
  readonly defaultTolerationSeconds?: number;
  /** The CA bundle `root-ca-cert-publisher` puts in every namespace's `kube-root-ca.crt` (`--root-ca-file`; default none). */
  readonly rootCA?: string;
  /** How long an Event stays in the current view after it was last seen (`--event-ttl`, ms; default 1 h). */
  readonly eventTtlMs?: number;
  /**
   * False: no controller records Events (default true). Not a kube setting: a measurement
   * switch, so `npm run bench` can say what Events cost; `debug reconcile` of a cluster run
   * without them shows the Events a decision would have recorded as differences.
   */
  readonly recordEvents?: boolean;
  /** Where the `hpa` controller reads pod metrics (the metrics.k8s.io API; default none: its metrics fail). */
  readonly metricsSource?: MetricsSource;
  /** The scheduler's profiles (`--scheduler-config`, see `loadSchedulerConfig`; default kube's one `default-scheduler` profile). */
  readonly schedulerConfig?: ResolvedSchedulerConfig;
  /** Replacement controllers by name (tests). */
  readonly factories?: Partial<Record<ControllerName, () => Controller>>;
}

export interface RunningControllers {
  readonly runtimes: readonly ReconcilerRuntime[];
  stop(): Promise<void>;
}

/** Pure controllers by name, for `debug reconcile` (node-lifecycle needs live heartbeats, so it is not here). */
export const CONTROLLER_FACTORIES: Readonly<Record<string, () => Controller>> = {
  scheduler: () => createSchedulerController(),
  replicaset: () => createReplicaSetController(),
  replicationcontroller: () => createReplicationController(),
  deployment: () => createDeploymentController(),
  job: () => createJobController(),
  statefulset: () => createStatefulSetController(),
  daemonset: () => createDaemonSetController(),
  disruption: () => createDisruptionController(),
  'ttl-after-finished': () => createTtlAfterFinishedController(),
  cronjob: () => createCronJobController(),
  hpa: () => createHpaController(),
  'event-ttl': () => createEventTtlController(),
  'garbage-collector': () => createGarbageCollector(),
  namespace: () => createNamespaceController(),
  endpoints: () => createEndpointsController(),
  endpointslice: () => createEndpointSliceController(),
  serviceaccount: () => createServiceAccountController(),
  resourcequota: () => createResourceQuotaController(),
  'pvc-protection': () => createPvcProtectionController(),
  'pv-protection': () => createPvProtectionController(),
  'persistentvolume-binder': () => createPersistentVolumeBinder(),
  'local-path-provisioner': () => createLocalPathProvisioner(),
  'ephemeral-volume': () => createEphemeralVolumeController(),
  customresourcedefinition: () => createCustomResourceDefinitionController(),
};

/** `controller` deciding with `recordEvents: false` in its context. */
const withoutEvents = (controller: Controller): Controller => {
  const { decide, decideAll } = controller;
  return {
    ...controller,
    decide: (key, view, context) => decide(key, view, { ...context, recordEvents: false }),
    ...(decideAll ? { decideAll: (keys, view, context) => decideAll(keys, view, { ...context, recordEvents: false }) } : {}),
  };
};

/** Starts the selected controllers; the ones without a factory are reported and skipped. */
export const startControllers = async (options: ControllersOptions): Promise<RunningControllers> => {
  const names = options.only ?? CONTROLLER_NAMES;
  const metrics = options.registry ? createRuntimeMetrics(options.registry) : undefined;
  let heartbeats: HeartbeatTracker | undefined;
  const gracePeriodMs = options.nodeGracePeriodMs ?? 50_000;
  const builtIn: Partial<Record<ControllerName, () => Promise<Controller> | Controller>> = {
    scheduler: () =>
      createSchedulerController({
        ...(options.registry ? { metrics: createSchedulerMetrics(options.registry) } : {}),
        ...(options.schedulerConfig ? { config: options.schedulerConfig } : {}),
      }),
    replicaset: () => createReplicaSetController(),
    replicationcontroller: () => createReplicationController(),
    deployment: () => createDeploymentController(),
    job: () => createJobController(),
    statefulset: () => createStatefulSetController(),
    daemonset: () => createDaemonSetController(),
    disruption: () => createDisruptionController(),
    'ttl-after-finished': () => createTtlAfterFinishedController(),
    cronjob: () => createCronJobController(),
    hpa: () => createHpaController(options.metricsSource ? { metrics: options.metricsSource } : {}),
    'event-ttl': () => createEventTtlController(options.eventTtlMs !== undefined ? { ttlMs: options.eventTtlMs } : {}),
    'garbage-collector': () => createGarbageCollector(),
    namespace: () => createNamespaceController(),
    endpoints: () => createEndpointsController(),
    endpointslice: () => createEndpointSliceController(),
    'endpointslice-mirroring': () => createEndpointSliceMirroringController(),
    'root-ca-cert-publisher': () => createRootCACertPublisher({ rootCA: options.rootCA ?? '' }),
    serviceaccount: () => createServiceAccountController(),
    resourcequota: () => createResourceQuotaController(),
    'pvc-protection': () => createPvcProtectionController(),
    'pv-protection': () => createPvProtectionController(),
    'persistentvolume-binder': () => createPersistentVolumeBinder(),
    'local-path-provisioner': () => createLocalPathProvisioner(),
    'ephemeral-volume': () => createEphemeralVolumeController(),
    customresourcedefinition: () => createCustomResourceDefinitionController(),
    'node-lifecycle': async () => {
      heartbeats = await trackHeartbeats(options.log, Date.now, gracePeriodMs * 2);
      return createNodeLifecycleController({
        heartbeats,
        gracePeriodMs,
        defaultTolerationSeconds: options.defaultTolerationSeconds ?? 300,
      });
    },
    ...options.factories,
  };
  const runtimes: ReconcilerRuntime[] = [];
  for (const name of names) {
    const factory = builtIn[name];
    if (!factory) {
      options.logger.warn({ controller: name }, 'controller not available in this build; skipped');
      continue;
    }
    const built = await factory();
    const admitted = options.admitCreated ? withCreateAdmission(built, options.admitCreated) : built;
    const controller = options.recordEvents === false ? withoutEvents(admitted) : admitted;
    runtimes.push(
      await startReconciler({ controller, log: options.log, projection: options.projection, logger: options.logger, metrics }),
    );
  }
  return {
    runtimes,
    stop: async () => {
      await Promise.all(runtimes.map((r) => r.stop()));
      heartbeats?.close();
    },
  };
};
