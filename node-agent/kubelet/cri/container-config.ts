/**
 * The CRI `ContainerConfig` of a container, as kubelet's kuberuntime
 * `generateContainerConfig` makes it from the agent's run options (pod-config.ts: the
 * container's variables and volume mounts, the same as the process runtime's): `command` and
 * `args` with `$(VAR)` expanded against the variables, the variables as `envs` in kubelet's
 * order, and each volume mount as a CRI `Mount` (`makeMounts`: host path, read-only,
 * propagation, no SELinux relabel). Pure.
 */
import { assertNever, type Container } from '../../../schemas/index.ts';
import { expandCommand } from '../env.ts';
import type { ContainerMount } from '../volumes/manager.ts';
import type { MountPropagation } from '../volumes/mount-paths.ts';
import type { ContainerConfig, CriMount, CriMountPropagation } from './client.ts';

/** `translateMountPropagation`: Kubernetes' mode as CRI's. */
function criPropagation(mode: MountPropagation): CriMountPropagation {
  switch (mode) {
    case 'None':
      return 'PROPAGATION_PRIVATE';
    case 'HostToContainer':
      return 'PROPAGATION_HOST_TO_CONTAINER';
    case 'Bidirectional':
      return 'PROPAGATION_BIDIRECTIONAL';
    default:
      return assertNever(mode, 'mount propagation');
  }
}

/** kuberuntime's `makeMounts`: each volume mount of the container as a CRI mount, in spec order. */
export const criMounts = (mounts: readonly ContainerMount[]): CriMount[] =>
  mounts.map((mount) => ({ containerPath: mount.containerPath, hostPath: mount.hostPath, readonly: mount.readOnly, selinuxRelabel: false, propagation: criPropagation(mount.propagation) }));

/** What {@link generateContainerConfig} makes a container's config of. */
export interface ContainerConfigInput {
  readonly spec: Container;
  /** The pod's uid (a label of the container). */
  readonly uid: string;
  readonly restartCount: number;
  /** The container's variables as kubelet makes them (env.ts), in order. */
  readonly env: readonly (readonly [string, string])[];
  /** Its mounts: the volume mounts and the ones kubelet adds (/etc/hosts). */
  readonly mounts: readonly CriMount[];
  readonly linux: NonNullable<ContainerConfig['linux']>;
}

/** `generateContainerConfig`; see the module comment. */
export function generateContainerConfig(input: ContainerConfigInput): ContainerConfig {
  const { spec, uid, restartCount } = input;
  const { command, args } = expandCommand(spec, new Map(input.env));
  return {
    metadata: { name: spec.name, attempt: restartCount },
    image: { image: spec.image ?? '' },
    ...(spec.command === undefined ? {} : { command }),
    ...(spec.args === undefined ? {} : { args }),
    ...(spec.workingDir === undefined ? {} : { workingDir: spec.workingDir }),
    envs: input.env.map(([key, value]) => ({ key, value })),
    mounts: input.mounts,
    logPath: `${spec.name}/${restartCount}.log`,
    labels: { 'io.kubernetes.container.name': spec.name, 'io.kubernetes.pod.uid': uid },
    linux: input.linux,
  };
}
