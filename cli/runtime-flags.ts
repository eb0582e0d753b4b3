/**
 * The pod-runtime options of `logplane up` and `logplane agent`: which runtime, and its
 * settings (the process runtime's pod user; the CRI runtime's endpoint and cgroup parent;
 * whether privileged containers may run).
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
// The modules themselves, not the kubelet's index: parsing flags must not load the runtimes (gRPC, …).
import type { CriRuntimeOptions } from '../node-agent/kubelet/cri/runtime.ts';
import { DEFAULT_CRI_ENDPOINT } from '../node-agent/kubelet/cri/endpoint.ts';
import { KubeletConfigError } from '../node-agent/kubelet/errors.ts';
import { type PodUser, parsePodUser } from '../node-agent/kubelet/pod-user.ts';
import { RUNTIME_KINDS, type RuntimeKind } from '../node-agent/kubelet/runtime.ts';

/** The flags as commander parsed them. */
export interface RuntimeFlags {
  readonly runtime: RuntimeKind;
  readonly podUser?: PodUser;
  readonly criEndpoint: string;
  readonly criCgroupParent?: string;
  readonly allowPrivileged: boolean;
}

/** What the agents get: the runtime and its settings. */
export interface RuntimeSettings {
  readonly runtime: RuntimeKind;
  /** Process runtime: the user pods run as (default: `nobody` when the agent runs as root). */
  readonly podUser?: PodUser;
  /** CRI runtime: the runtime's socket and the pods' cgroup parent. */
  readonly cri?: CriRuntimeOptions;
  /** False: privileged containers do not run (left out: they do, as in kubelet 1.32). */
  readonly allowPrivileged?: false;
}

const booleanArgument = (value: string): boolean => {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidArgumentError(`"${value}" is not true or false`);
};

const podUserArgument = (value: string): PodUser => {
  try {
    return parsePodUser(value);
  } catch (error) {
    if (error instanceof KubeletConfigError) throw new InvalidArgumentError(error.message);
    throw error;
  }
};

/** Adds `--runtime` and the runtimes' options to `command`. */
export const withRuntimeOptions = (command: Command): Command =>
  command
    .addOption(new Option('--runtime <runtime>', 'pod runtime').choices([...RUNTIME_KINDS]).default('process'))
    .option(
      '--pod-user <user>',
      'process runtime: UID[:GID] or NAME[:GROUP] that pods run as (default: nobody when run as root, else this user; 0 runs them as root)',
      podUserArgument,
    )
    .option('--cri-endpoint <endpoint>', 'cri runtime: the CRI socket of the container runtime (unix:///path or a path)', DEFAULT_CRI_ENDPOINT)
    .option('--cri-cgroup-parent <path>', "cri runtime: cgroup (cgroupfs) under which each pod gets pod<uid> (default: the runtime's choice)")
    .option(
      '--allow-privileged <bool>',
      'run containers with securityContext.privileged (true, as kubelet 1.32 always does) or block their pods (false; the process runtime then also refuses runAsUser 0)',
      booleanArgument,
      true,
    );

/** The settings the flags ask for; `--pod-user` with another runtime than `process` is refused (it would do nothing). */
export const runtimeSettings = (flags: RuntimeFlags): RuntimeSettings => {
  if (flags.podUser !== undefined && flags.runtime !== 'process') {
    throw new InvalidArgumentError(`--pod-user applies to the process runtime only (the ${flags.runtime} runtime runs containers as their image says)`);
  }
  const cri: CriRuntimeOptions = { endpoint: flags.criEndpoint, ...(flags.criCgroupParent === undefined ? {} : { cgroupParent: flags.criCgroupParent }) };
  return {
    runtime: flags.runtime,
    ...(flags.podUser === undefined ? {} : { podUser: flags.podUser }),
    ...(flags.runtime === 'cri' ? { cri } : {}),
    ...(flags.allowPrivileged ? {} : { allowPrivileged: false as const }),
  };
};
