/**
 * Built-in images: small Node programs shipped in `node-agent/images/`, so manifests run
 * without a container engine. Each is started as `node <file> [args]`.
 */
import { fileURLToPath } from 'node:url';

/** Built-in image name (without tag) → what it runs. */
export const BUILTIN_IMAGES = {
  'logplane/echo': { file: 'echo.mjs', description: 'HTTP server on POD_IP:$PORT (8080) answering with its pod name; /healthz toggled by POST /fail-readiness, /pass-readiness' },
  'logplane/crasher': { file: 'crasher.mjs', description: 'exits with EXIT_CODE (1) after EXIT_AFTER_MS (0); or --exit-code, --after-ms' },
  'logplane/sleeper': { file: 'sleeper.mjs', description: 'sleeps; records SIGTERM to SIGNAL_LOG; IGNORE_SIGTERM=1 ignores it; creates READY_FILE once signals are handled' },
} as const;

export type BuiltinImageName = keyof typeof BUILTIN_IMAGES;

/** What an image reference resolves to. */
export type ResolvedImage =
  | { readonly type: 'builtin'; readonly name: BuiltinImageName; readonly file: string; readonly imageID: string }
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
  return { type: 'builtin', name, file: `${imagesDir}${BUILTIN_IMAGES[name].file}`, imageID: `logplane-builtin://${name}` };
}
