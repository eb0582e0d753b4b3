/**
 * A pod's and its containers' `securityContext` as kubelet 1.32 reads them, for every
 * runtime: the effective context of one container (`pkg/securitycontext`
 * `DetermineEffectiveSecurityContext`: the container's fields over the pod's), kubelet's
 * `verifyRunAsNonRoot` (kuberuntime `security_context_others.go`) and its privileged-pod
 * check (the `AllowPrivileged` capability). Pure; each runtime turns the result into what it
 * can enforce (process-user.ts, cri/security-context.ts).
 */
import type { Container, Pod, SecurityContext } from '../../schemas/index.ts';

/** Waiting reasons of a container that its security context keeps from starting. */
export const SECURITY_REASONS = {
  /** kubelet's `ErrCreateContainerConfig`: e.g. runAsNonRoot with a root user. */
  config: 'CreateContainerConfigError',
  /**
   * kubelet's waiting reason for the containers of a pod it may not run (its soft-admission
   * path in `syncPod`): a privileged container on a node that does not allow them.
   */
  blocked: 'Blocked',
} as const;

/** Whether `value` is set (the decoded objects use null or leave a field out for "unset"). */
const isSet = <T>(value: T | null | undefined): value is T => value !== undefined && value !== null;

/**
 * kubelet's `DetermineEffectiveSecurityContext`: the pod-level runAsUser, runAsGroup,
 * runAsNonRoot, seLinuxOptions and windowsOptions, each replaced by the container's own when
 * it sets it; the container-only fields (privileged, capabilities, readOnlyRootFilesystem,
 * allowPrivilegeEscalation, procMount, seccompProfile, appArmorProfile) from the container.
 * Pod-level seccompProfile and appArmorProfile are not part of it (kubelet reads them
 * separately, as cri/security-context.ts does).
 */
export function effectiveSecurityContext(pod: Pod, container: Container): SecurityContext {
  const podSc = pod.spec.securityContext;
  const containerSc = container.securityContext ?? {};
  const effective: SecurityContext = {};
  const fromPod = {
    seLinuxOptions: podSc?.seLinuxOptions,
    windowsOptions: podSc?.windowsOptions,
    runAsUser: podSc?.runAsUser,
    runAsGroup: podSc?.runAsGroup,
    runAsNonRoot: podSc?.runAsNonRoot,
  };
  for (const [field, value] of Object.entries(fromPod)) {
    if (isSet(value)) Object.assign(effective, { [field]: value });
  }
  for (const [field, value] of Object.entries(containerSc)) {
    if (isSet(value)) Object.assign(effective, { [field]: value });
  }
  return effective;
}

/** kubelet's `format.Pod`: `name_namespace(uid)`. */
export const formatPod = (pod: Pod): string => `${pod.metadata.name}_${pod.metadata.namespace ?? 'default'}(${pod.metadata.uid ?? ''})`;

/** Go's `%q` of a plain string (the only escapes pod names and uids can need). */
const quoted = (text: string): string => JSON.stringify(text);

const MAX_INT32 = 2 ** 31 - 1;

/**
 * kubelet's `verifyRunAsNonRoot`: with an effective `runAsNonRoot: true`, the message of
 * kubelet's error when the container would run as root (an effective `runAsUser: 0`, or none
 * and an image user that is uid 0 or a name that cannot be checked), else undefined.
 * `image` is the user the container runs as without a runAsUser (the image's, or the
 * process runtime's pod user).
 */
export function verifyRunAsNonRoot(pod: Pod, container: Container, image: { readonly uid?: number; readonly username?: string }): string | undefined {
  const effective = effectiveSecurityContext(pod, container);
  if (effective.runAsNonRoot !== true) return undefined;
  const where = `(pod: ${quoted(formatPod(pod))}, container: ${container.name})`;
  if (isSet(effective.runAsUser)) return effective.runAsUser === 0 ? `container's runAsUser breaks non-root policy ${where}` : undefined;
  if (image.uid === undefined) {
    return image.username !== undefined && image.username !== ''
      ? `container has runAsNonRoot and image has non-numeric user (${image.username}), cannot verify user is non-root ${where}`
      : undefined;
  }
  if (image.uid === 0) return `container has runAsNonRoot and image will run as root ${where}`;
  if (!Number.isInteger(image.uid) || image.uid < 0 || image.uid > MAX_INT32) {
    return `container has runAsNonRoot and image has an invalid user id (${image.uid}). (Must be 1-(${MAX_INT32})): must be between 0 and ${MAX_INT32}, inclusive ${where}`;
  }
  return undefined;
}

/** Whether the container asks for `privileged: true` (kubelet's `HasPrivilegedRequest`). */
export const isPrivileged = (container: Container): boolean => container.securityContext?.privileged === true;

/**
 * kubelet's privileged check of a pod (`canRunPod` with `AllowPrivileged` false): the message
 * of its refusal when a container or init container is privileged and the node does not
 * allow it, else undefined.
 */
export function privilegedRefusal(pod: Pod, allowPrivileged: boolean): string | undefined {
  if (allowPrivileged) return undefined;
  const uid = quoted(pod.metadata.uid ?? '');
  if (pod.spec.containers.some(isPrivileged)) return `pod with UID ${uid} specified privileged container, but is disallowed`;
  if ((pod.spec.initContainers ?? []).some(isPrivileged)) return `pod with UID ${uid} specified privileged init container, but is disallowed`;
  return undefined;
}

/**
 * kubelet's `AddNoNewPrivileges`: `no_new_privs` is set only when the effective
 * `allowPrivilegeEscalation` is explicitly false.
 */
export const noNewPrivileges = (effective: SecurityContext): boolean => effective.allowPrivilegeEscalation === false;

/**
 * The pod's supplementary groups in kubelet's order: `fsGroup` first, then
 * `supplementalGroups` (kubelet's extra groups of volumes are not made here).
 */
export function podSupplementalGroups(pod: Pod): number[] {
  const podSc = pod.spec.securityContext;
  return [...(isSet(podSc?.fsGroup) ? [podSc.fsGroup] : []), ...(podSc?.supplementalGroups ?? [])];
}
