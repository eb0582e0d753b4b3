/**
 * Parses the agent's streaming paths, kubelet's layout with the node first (one agent runs
 * several nodes, as its `/containerLogs/{node}/…`):
 * `/exec/{node}/{namespace}/{pod}/{container}?command=…&stdin=&stdout=&stderr=&tty=`,
 * `/attach/{node}/{namespace}/{pod}/{container}?stdin=&stdout=&stderr=&tty=` and
 * `/portForward/{node}/{namespace}/{pod}` (ports come in each stream's headers). Pure, never throws.
 */

/** The largest number of command words and bytes of a command an exec may have. */
export const MAX_COMMAND_WORDS = 1024;
export const MAX_COMMAND_BYTES = 64 * 1024;

export interface StreamOptions {
  readonly stdin: boolean;
  readonly stdout: boolean;
  readonly stderr: boolean;
  readonly tty: boolean;
}

export type StreamRequest =
  | { readonly type: 'exec'; readonly node: string; readonly namespace: string; readonly pod: string; readonly container: string; readonly command: readonly string[]; readonly options: StreamOptions }
  | { readonly type: 'attach'; readonly node: string; readonly namespace: string; readonly pod: string; readonly container: string; readonly options: StreamOptions }
  | { readonly type: 'portForward'; readonly node: string; readonly namespace: string; readonly pod: string }
  | { readonly type: 'rejected'; readonly status: 400 | 404; readonly message: string };

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const decode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE = new Set(['', '0', 'f', 'F', 'false', 'FALSE', 'False']);

/** A boolean query parameter as strconv.ParseBool reads it; undefined when malformed. */
const flag = (query: URLSearchParams, name: string): boolean | undefined => {
  const text = query.get(name) ?? '';
  return TRUE.has(text) ? true : FALSE.has(text) ? false : undefined;
};

const reject = (status: 400 | 404, message: string): StreamRequest => ({ type: 'rejected', status, message });

/** kubelet's `remotecommand` checks of the stream options. */
const streamOptions = (query: URLSearchParams): StreamOptions | string => {
  const values: Record<string, boolean> = {};
  for (const name of ['stdin', 'stdout', 'stderr', 'tty']) {
    const value = flag(query, name);
    if (value === undefined) return `${name}: invalid value "${(query.get(name) ?? '').slice(0, 64)}": must be true or false`;
    values[name] = value;
  }
  const options = { stdin: values.stdin!, stdout: values.stdout!, stderr: values.stderr!, tty: values.tty! };
  if (!options.stdin && !options.stdout && !options.stderr) return 'you must specify at least 1 of stdin, stdout, stderr';
  if (options.tty && options.stderr) return 'tty and stderr cannot both be true: a terminal merges stderr into stdout';
  return options;
};

/** Parses a streaming request's path and query. */
export const parseStreamRequest = (rawUrl: string | undefined): StreamRequest => {
  const url = rawUrl ?? '/';
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  const query = new URLSearchParams(queryStart === -1 ? '' : url.slice(queryStart + 1));
  const segments = path.split('/').map(decode);
  if (segments.some((s) => s === undefined)) return reject(400, `malformed %-escape in the path ${path.slice(0, 200)}`);
  const [root, route, node, namespace, pod, container, ...rest] = segments as string[];
  if (root !== '' || rest.length > 0 || node === undefined || namespace === undefined || pod === undefined) return reject(404, `no such path: ${path.slice(0, 200)}`);
  if (!DNS1123_SUBDOMAIN.test(node)) return reject(400, `invalid node name "${node.slice(0, 253)}"`);
  if (!DNS1123_LABEL.test(namespace)) return reject(400, `invalid namespace "${namespace.slice(0, 253)}"`);
  if (!DNS1123_SUBDOMAIN.test(pod)) return reject(400, `invalid pod name "${pod.slice(0, 253)}"`);
  if (route === 'portForward') {
    return container === undefined ? { type: 'portForward', node, namespace, pod } : reject(404, `no such path: ${path.slice(0, 200)}`);
  }
  if ((route !== 'exec' && route !== 'attach') || container === undefined) return reject(404, `no such path: ${path.slice(0, 200)}`);
  if (!DNS1123_LABEL.test(container)) return reject(400, `invalid container name "${container.slice(0, 253)}"`);
  const options = streamOptions(query);
  if (typeof options === 'string') return reject(400, options);
  if (route === 'attach') return { type: 'attach', node, namespace, pod, container, options };
  const command = query.getAll('command');
  if (command.length === 0 || command[0] === '') return reject(400, 'command: Required value: you must specify at least one command word');
  if (command.length > MAX_COMMAND_WORDS || command.reduce((sum, word) => sum + Buffer.byteLength(word), 0) > MAX_COMMAND_BYTES) {
    return reject(400, `command: Too long: at most ${MAX_COMMAND_WORDS} words and ${MAX_COMMAND_BYTES} bytes`);
  }
  if (command.some((word) => word.includes('\0'))) return reject(400, 'command: Invalid value: a command word may not contain a NUL byte');
  return { type: 'exec', node, namespace, pod, container, command, options };
};
