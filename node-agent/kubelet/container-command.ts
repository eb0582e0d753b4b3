/**
 * What a container of the process runtime executes and with which environment.
 * Pure functions of the pod spec and the pod's identity.
 */
import { expand } from './env.ts';
import { BUILTIN_IMAGES, type ImageInterpreter, resolveImage } from './images.ts';
import { type Container, assertNever } from '../../schemas/index.ts';

/** Identity of the pod a container runs in, exposed to it as environment variables. */
export interface PodIdentity {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly podIP: string;
  readonly hostIP: string;
  readonly node: string;
}

/** The command line of a container, or why it cannot run. */
export type ContainerCommand =
  | { readonly type: 'run'; readonly file: string; readonly args: readonly string[]; readonly imageID: string }
  | { readonly type: 'refused'; readonly reason: string; readonly message: string };

/** Waiting reasons of containers the runtime refuses to start. */
export const REFUSAL_REASONS = {
  /** The image is not built in and the container has no command: there is nothing to run. */
  imageNeverPull: 'ErrImageNeverPull',
  /** The container has neither an image nor a command. */
  invalidImageName: 'InvalidImageName',
} as const;

/**
 * Expands `$(VAR)` references from `env` as Kubernetes does (env.ts `expand`): unknown
 * references stay as written and `$$` escapes a `$`.
 */
export function expandVariables(text: string, env: Readonly<Record<string, string>>): string {
  return expand(text, (name) => (Object.hasOwn(env, name) ? env[name] : undefined));
}

/** The variables the process runtime gives every container before its own: the pod identity. */
export function identityEnv(pod: PodIdentity): Record<string, string> {
  return { HOSTNAME: pod.name, POD_NAME: pod.name, POD_NAMESPACE: pod.namespace, POD_UID: pod.uid, POD_IP: pod.podIP, HOST_IP: pod.hostIP, NODE_NAME: pod.node };
}

/**
 * The environment of a container: PATH and HOME of the agent (so commands resolve), the
 * pod identity (POD_NAME, POD_NAMESPACE, POD_IP, POD_UID, NODE_NAME, HOST_IP, HOSTNAME),
 * then `resolved` (the container's variables as kubelet makes them, env.ts), or without it
 * the spec's `env` values in order, each expanded against what precedes it.
 */
export function containerEnv(container: Container, pod: PodIdentity, agentEnv: NodeJS.ProcessEnv = process.env, resolved?: readonly (readonly [string, string])[]): Record<string, string> {
  const env: Record<string, string> = Object.create(null) as Record<string, string>;
  if (agentEnv.PATH !== undefined) env.PATH = agentEnv.PATH;
  if (agentEnv.HOME !== undefined) env.HOME = agentEnv.HOME;
  Object.assign(env, {
    HOSTNAME: pod.name,
    POD_NAME: pod.name,
    POD_NAMESPACE: pod.namespace,
    POD_UID: pod.uid,
    POD_IP: pod.podIP,
    HOST_IP: pod.hostIP,
    NODE_NAME: pod.node,
  });
  if (resolved !== undefined) {
    for (const [name, value] of resolved) env[name] = value;
    return env;
  }
  for (const variable of container.env ?? []) env[variable.name] = expandVariables(variable.value ?? '', env);
  return env;
}

function interpreterPath(interpreter: ImageInterpreter): string {
  switch (interpreter) {
    case 'node':
      return process.execPath;
    case 'sh':
      return '/bin/sh';
    default:
      return assertNever(interpreter, 'image interpreter');
  }
}

/**
 * Kubernetes semantics: `command` replaces the image's entrypoint, `args` its default
 * arguments. A built-in image's entrypoint is `node <file>` or `/bin/sh <file>`; an image that is not built in
 * runs only when the container gives a command.
 */
export function containerCommand(container: Container, env: Readonly<Record<string, string>>): ContainerCommand {
  const args = (container.args ?? []).map((arg) => expandVariables(arg, env));
  const command = (container.command ?? []).map((part) => expandVariables(part, env));
  const image = container.image ?? '';
  const resolved = image === '' ? undefined : resolveImage(image);
  const imageID = resolved?.type === 'builtin' ? resolved.imageID : '';
  const [file, ...commandArgs] = command;
  if (file !== undefined) return { type: 'run', file, args: [...commandArgs, ...args], imageID };
  if (resolved === undefined) {
    return { type: 'refused', reason: REFUSAL_REASONS.invalidImageName, message: `container "${container.name}" has neither an image nor a command` };
  }
  if (resolved.type === 'external') {
    return {
      type: 'refused',
      reason: REFUSAL_REASONS.imageNeverPull,
      message: `image ${image} is not a built-in logplane image and the container has no command (built-in images: ${Object.keys(BUILTIN_IMAGES).join(', ')})`,
    };
  }
  return { type: 'run', file: interpreterPath(resolved.interpreter), args: [resolved.file, ...args], imageID };
}
