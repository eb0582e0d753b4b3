/**
 * Built-in images: small programs shipped in `node-agent/images/`, so manifests run
 * without a container engine. Each is started as `<interpreter> <file> [args]`: Node
 * programs with the agent's own `node`; the sleeper (the image of bulk and benchmark pods)
 * is a POSIX sh script run by `/bin/sh`, which starts in ~1 ms where `node` takes ~40 ms of CPU.
 */
import { fileURLToPath } from 'node:url';

/** What runs a built-in image's file. */
export type ImageInterpreter = 'node' | 'sh';

/** Built-in image name (without tag) → what it runs. */
export const BUILTIN_IMAGES = {
  'logplane/echo': { file: 'echo.mjs', interpreter: 'node', description: 'HTTP server on POD_IP:$PORT (8080) answering with its pod name; /healthz toggled by POST /fail-readiness, /pass-readiness' },
  'logplane/crasher': { file: 'crasher.mjs', interpreter: 'node', description: 'exits with EXIT_CODE (1) after EXIT_AFTER_MS (0); or --exit-code, --after-ms' },
  'logplane/sleeper': { file: 'sleeper.sh', interpreter: 'sh', description: 'sleeps; records SIGTERM to SIGNAL_LOG; IGNORE_SIGTERM=1 ignores it; creates READY_FILE once signals are handled' },
} as const satisfies Record<string, { readonly file: string; readonly interpreter: ImageInterpreter; readonly description: string }>;

export type BuiltinImageName = keyof typeof BUILTIN_IMAGES;

/** What an image reference resolves to. */
export type ResolvedImage =
  | { readonly type: 'builtin'; readonly name: BuiltinImageName; readonly interpreter: ImageInterpreter; readonly file: string; readonly imageID: string }
  | { readonly type: 'external'; readonly reference: string };

const imagesDir = fileURLToPath(new URL('../images/', import.meta.url));

/** Strips a registry prefix of `docker.io/`, a `:tag` and an `@digest` from an image reference. */
function repository(reference: string): string {
  const withoutDigest = reference.split('@')[0] ?? '';
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  const name = colon === -1 ? withoutDigest : withoutDigest.slice(0, colon);
  return name.replace(/^(docker\.io\/|index\.docker\.io\/)/, '');
}

function isBuiltin(name: string): name is BuiltinImageName {
  return Object.hasOwn(BUILTIN_IMAGES, name);
}

/** Resolves `logplane/echo`, `logplane/echo:latest`, `docker.io/logplane/echo` … to the shipped file. */
export function resolveImage(reference: string): ResolvedImage {
  const name = repository(reference);
  if (!isBuiltin(name)) return { type: 'external', reference };
  const image = BUILTIN_IMAGES[name];
  return { type: 'builtin', name, interpreter: image.interpreter, file: `${imagesDir}${image.file}`, imageID: `logplane-builtin://${name}` };
}
