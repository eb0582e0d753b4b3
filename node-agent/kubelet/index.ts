/**
 * The kubelet part of the node agent: runs the pods bound to one node and reports their
 * status. `createPodRuntime({ kind: 'process' | 'sim' | 'cri', … })` is the entry point; the
 * agent loop drives it with `sync(pods)` and reports `statuses$` to the log.
 */
import { assertNever } from '../../schemas/index.ts';
import { createCriRuntime } from './cri/runtime.ts';
import { createProcessRuntime } from './process-runtime.ts';
import { type PodRuntime, type PodRuntimeOptions, resolveRuntimeOptions } from './runtime.ts';
import { createSimRuntime } from './sim-runtime.ts';

export { KubeletClosedError, KubeletConfigError, KubeletError, KubeletNotFoundError, PodIPExhaustedError } from './errors.ts';
export { BUILTIN_IMAGES, type BuiltinImageName } from './images.ts';
export { DEFAULT_CRASH_LOOP, RESTART_POLICIES, type CrashLoopPolicy, type RestartPolicy } from './lifecycle.ts';
export type { LogOptions } from './logs.ts';
export { DEFAULT_POD_CIDR } from './pod-cidr.ts';
export { type PodUser, parsePodUser } from './pod-user.ts';
export { type CriRuntimeOptions, DEFAULT_CRI_ENDPOINT, checkCriRuntime } from './cri/runtime.ts';
export { DEFAULT_GRACE_SECONDS, type PodStatusUpdate } from './pod-driver.ts';
export { POD_PHASES, type PodPhase } from './status.ts';
export { RUNTIME_KINDS, type InjectedFailure, type PodRuntime, type PodDnsOptions, type PodRuntimeOptions, type RuntimeKind, type StreamTarget } from './runtime.ts';
export type { IssuedServiceAccountToken, RequestServiceAccountToken, ServiceAccountTokenRequest } from './volumes/service-account-tokens.ts';

/**
 * Creates a pod runtime for one node. Options are validated at once (a bad CIDR or
 * negative delay throws `KubeletConfigError`). The process runtime creates `dataDir`.
 */
export function createPodRuntime(opts: PodRuntimeOptions): PodRuntime {
  const options = resolveRuntimeOptions(opts);
  switch (options.kind) {
    case 'process':
      return createProcessRuntime(options);
    case 'sim':
      return createSimRuntime(options);
    case 'cri':
      return createCriRuntime(options);
    default:
      return assertNever(options.kind, 'runtime kind');
  }
}
