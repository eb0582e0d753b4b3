/**
 * What both real runtimes (process, cri) need before a container starts, as kubelet's
 * `GenerateRunContainerOptions`: the pod's volumes set up (volumes/manager.ts), the
 * container's environment (env.ts) and its mounts. A container that cannot be configured
 * waits, retried after the crash-loop's initial delay (kubelet's pod worker backoff, 10 s):
 * `ContainerCreating` while a volume cannot be set up (kubelet's `FailedMount`),
 * `CreateContainerConfigError` while its environment cannot be made.
 */
import type { Logger } from 'pino';
import type { Container, Pod } from '../../schemas/index.ts';
import { type PodAddresses, containerEnvironment } from './env.ts';
import type { PodObjectSource } from './pod-objects.ts';
import { type ContainerMount, createVolumeManager } from './volumes/manager.ts';

/** Waiting reasons of a container that cannot be configured yet. */
export const CONFIG_REASONS = {
  /** A volume cannot be set up (kubelet keeps the container `ContainerCreating` and records `FailedMount`). */
  volume: 'ContainerCreating',
  /** The environment refers to a missing ConfigMap, Secret or key. */
  env: 'CreateContainerConfigError',
} as const;

/** A container's configuration, or why it cannot start yet. */
export type ContainerConfigResult =
  | { readonly type: 'ok'; readonly env: readonly [string, string][]; readonly mounts: readonly ContainerMount[] }
  | { readonly type: 'refused'; readonly reason: string; readonly message: string }
  /** A service-account token is being fetched: prepare again once `ready` resolves (the container stays creating). */
  | { readonly type: 'pending'; readonly ready: Promise<void> };

export interface PodConfigurator {
  /** Sets up the pod's volumes (idempotent), then resolves `container`'s environment and mounts. */
  prepare(pod: Pod, container: Container, addresses: PodAddresses, base?: ReadonlyMap<string, string>): ContainerConfigResult;
  /** The newest spec of a running pod (labels and annotations feed its downwardAPI volumes). */
  refresh(pod: Pod): void;
  /**
   * A pod whose containers an earlier agent run started: its volumes are set up again
   * (rewritten where their objects changed meanwhile) and kept up to date from now on.
   */
  adopt(pod: Pod): void;
  /** The pod is gone: its volumes are removed. */
  release(uid: string): void;
  close(): void;
}

/** Creates the configurator of one runtime; volumes live under `volumeRoot`. */
export function createPodConfigurator(options: { readonly volumeRoot: string; readonly node: string; readonly objects: PodObjectSource; readonly logger: Logger }): PodConfigurator {
  const { objects } = options;
  const volumes = createVolumeManager({ root: options.volumeRoot, node: options.node, objects, logger: options.logger });
  return {
    prepare(pod, container, addresses, base) {
      const setUp = volumes.setUp(pod);
      if (setUp.type === 'error') return { type: 'refused', reason: CONFIG_REASONS.volume, message: setUp.message };
      if (setUp.type === 'pending') return setUp;
      const env = containerEnvironment({ pod, container, addresses, objects, ...(base === undefined ? {} : { base }) });
      if (env.type === 'error') return { type: 'refused', reason: CONFIG_REASONS.env, message: env.message };
      // kubelet's GenerateRunContainerOptions: the mounts after the variables (a subPathExpr expands them).
      const mounts = volumes.mounts(pod, container, new Map(env.value));
      if (mounts.type === 'error') return { type: 'refused', reason: CONFIG_REASONS.env, message: mounts.message };
      return { type: 'ok', env: env.value, mounts: mounts.value };
    },
    refresh: (pod) => volumes.refreshPod(pod),
    adopt(pod) {
      const setUp = volumes.setUp(pod);
      if (setUp.type === 'error') options.logger.warn({ pod: `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`, err: setUp.message }, 'cannot set up the volumes of an adopted pod again');
    },
    release: (uid) => volumes.tearDown(uid),
    close: () => volumes.close(),
  };
}

/**
 * The process runtime's variable naming a mount's host path: `LOGPLANE_MOUNT_` and the
 * mount path, upper-cased, every run of other characters than letters and digits an `_`
 * (`/etc/config` → `LOGPLANE_MOUNT_ETC_CONFIG`).
 */
export const mountVariable = (mountPath: string): string => `LOGPLANE_MOUNT_${mountPath.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '').toUpperCase()}`;
