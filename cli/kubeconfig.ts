/**
 * kubeconfig files (the standard kube format, readable by kubectl): `logplane up` writes
 * one, the components write their own (a client certificate of the cluster CA, see
 * `component-identity.ts`), and every CLI command finds its server and credentials through
 * one (`--kubeconfig`, `$KUBECONFIG`, or `./.logplane/kubeconfig`), with `--server`/`--token`
 * on top.
 */
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { delimiter, dirname, resolve } from 'node:path';
import YAML from 'yaml';

/** The parts of a kubeconfig logplane reads and writes. */
export interface Kubeconfig {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly clusters?: readonly {
    readonly name: string;
    readonly cluster: {
      readonly server?: string;
      readonly 'certificate-authority-data'?: string;
      readonly 'certificate-authority'?: string;
      readonly 'insecure-skip-tls-verify'?: boolean;
    };
  }[];
  readonly users?: readonly {
    readonly name: string;
    readonly user: {
      readonly token?: string;
      readonly tokenFile?: string;
      readonly 'client-certificate-data'?: string;
      readonly 'client-key-data'?: string;
      readonly 'client-certificate'?: string;
      readonly 'client-key'?: string;
    };
  }[];
  readonly contexts?: readonly { readonly name: string; readonly context: { readonly cluster: string; readonly user: string; readonly namespace?: string } }[];
  readonly 'current-context'?: string;
}

/** The kubeconfig file `logplane up` writes by default (relative to the working directory). */
export const DEFAULT_KUBECONFIG = '.logplane/kubeconfig';

/** How a kubeconfig's user proves who it is: a bearer token, or a client certificate and its key (PEM). */
export type KubeconfigCredentials = { readonly token: string } | { readonly clientCertificate: { readonly cert: string; readonly key: string } };

export type KubeconfigEntry = KubeconfigCredentials & {
  /** Base URL of the API server, e.g. `http://127.0.0.1:6443`. */
  readonly server: string;
  /** The user (and credentials owner) name, e.g. `admin`. */
  readonly user: string;
  /** The cluster name, e.g. `logplane`. */
  readonly cluster: string;
  /** Default namespace of the context. */
  readonly namespace?: string;
  /** PEM of the CA that signed the server's certificate (an https server's self-signed certificate). */
  readonly certificateAuthority?: string;
};

const pemData = (pem: string): string => Buffer.from(pem).toString('base64');

/** The kubeconfig text for one cluster, user and context (`USER@CLUSTER`, made current). */
export const renderKubeconfig = (entry: KubeconfigEntry): string => {
  const contextName = `${entry.user}@${entry.cluster}`;
  const config: Kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: entry.cluster,
        cluster: {
          server: entry.server,
          ...(entry.certificateAuthority ? { 'certificate-authority-data': pemData(entry.certificateAuthority) } : {}),
        },
      },
    ],
    users: [
      {
        name: entry.user,
        user:
          'token' in entry
            ? { token: entry.token }
            : { 'client-certificate-data': pemData(entry.clientCertificate.cert), 'client-key-data': pemData(entry.clientCertificate.key) },
      },
    ],
    contexts: [
      {
        name: contextName,
        context: { cluster: entry.cluster, user: entry.user, ...(entry.namespace ? { namespace: entry.namespace } : {}) },
      },
    ],
    'current-context': contextName,
  };
  return YAML.stringify(config, { indentSeq: false });
};

/**
 * Writes a kubeconfig for one cluster and user to `path` (creating its directory), readable
 * only by the owner since it holds the token or key. Returns the text written.
 */
export const writeKubeconfig = async (path: string, entry: KubeconfigEntry): Promise<string> => {
  const text = renderKubeconfig(entry);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text, { mode: 0o600 });
  await chmod(path, 0o600);
  return text;
};

/** Parses a kubeconfig file; throws with the path in the message if it cannot be read or parsed. */
export const readKubeconfig = (path: string): Kubeconfig => {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read kubeconfig ${path}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = YAML.parse(text);
  } catch (error) {
    throw new Error(`cannot parse kubeconfig ${path}: ${(error as Error).message}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`cannot parse kubeconfig ${path}: not a mapping`);
  return parsed as Kubeconfig;
};

/** Where a command's connection settings came from, and what they are. */
export interface Connection {
  readonly server: string;
  readonly token?: string;
  /** PEM to trust for an https server. */
  readonly certificateAuthority?: string;
  readonly insecureSkipTlsVerify?: boolean;
  /** A client certificate and its key (PEM) presented to an https server. */
  readonly clientCertificate?: { readonly cert: string; readonly key: string };
  /** The context's default namespace, if it sets one. */
  readonly namespace?: string;
  /** The kubeconfig file used, if any. */
  readonly kubeconfigPath?: string;
}

/** Flags that select or override the connection. */
export interface ConnectionFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly server?: string;
  readonly token?: string;
}

/**
 * The kubeconfig file to use: `--kubeconfig` (must exist), else the first existing file
 * of `$KUBECONFIG` (path-list), else `./.logplane/kubeconfig` if it exists.
 */
export const findKubeconfig = (flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string | undefined => {
  if (flags.kubeconfig) {
    const path = resolve(cwd, flags.kubeconfig);
    if (!existsSync(path)) throw new Error(`kubeconfig ${flags.kubeconfig} does not exist`);
    return path;
  }
  const fromEnv = (env['KUBECONFIG'] ?? '').split(delimiter).filter((p) => p !== '');
  for (const candidate of fromEnv) {
    const path = resolve(cwd, candidate);
    if (existsSync(path)) return path;
  }
  const local = resolve(cwd, DEFAULT_KUBECONFIG);
  return existsSync(local) ? local : undefined;
};

/** A PEM given inline (base64 `…-data`) or as a file relative to the kubeconfig. */
const pemOf = (data: string | undefined, file: string | undefined, path: string): string | undefined => {
  if (data) return Buffer.from(data, 'base64').toString('utf8');
  return file ? readFileSync(resolve(dirname(path), file), 'utf8') : undefined;
};

/** What a context of a kubeconfig says about the connection. */
export type ContextSettings = Omit<Partial<Connection>, 'kubeconfigPath'>;

/** Server, token, TLS settings and namespace of a context of a kubeconfig (the current one by default). */
export const contextSettings = (config: Kubeconfig, contextName?: string, path = 'kubeconfig'): ContextSettings => {
  const name = contextName ?? config['current-context'];
  if (!name) {
    if (contextName === undefined && (config.contexts ?? []).length === 0) return {};
    throw new Error(`${path}: no current-context is set`);
  }
  const context = config.contexts?.find((c) => c.name === name)?.context;
  if (!context) throw new Error(`${path}: context "${name}" does not exist`);
  const cluster = config.clusters?.find((c) => c.name === context.cluster)?.cluster;
  if (!cluster) throw new Error(`${path}: cluster "${context.cluster}" of context "${name}" does not exist`);
  const user = config.users?.find((u) => u.name === context.user)?.user;
  let token = user?.token;
  if (!token && user?.tokenFile) token = readFileSync(resolve(dirname(path), user.tokenFile), 'utf8').trim();
  const cert = pemOf(user?.['client-certificate-data'], user?.['client-certificate'], path);
  const key = pemOf(user?.['client-key-data'], user?.['client-key'], path);
  if ((cert === undefined) !== (key === undefined)) throw new Error(`${path}: user "${context.user}" has a client certificate without its key, or a key without its certificate`);
  let certificateAuthority: string | undefined;
  if (cluster['certificate-authority-data']) certificateAuthority = Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8');
  else if (cluster['certificate-authority']) certificateAuthority = readFileSync(resolve(dirname(path), cluster['certificate-authority']), 'utf8');
  return {
    ...(cluster.server ? { server: cluster.server } : {}),
    ...(token ? { token } : {}),
    ...(certificateAuthority ? { certificateAuthority } : {}),
    ...(cluster['insecure-skip-tls-verify'] ? { insecureSkipTlsVerify: true } : {}),
    ...(cert !== undefined && key !== undefined ? { clientCertificate: { cert, key } } : {}),
    ...(context.namespace ? { namespace: context.namespace } : {}),
  };
};

/**
 * Resolves the server, token and default namespace from the flags, the environment and
 * the kubeconfig found by {@link findKubeconfig}. Throws when no server is known.
 */
export const resolveConnection = (flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): Connection => {
  const path = findKubeconfig(flags, env, cwd);
  const fromFile = path ? contextSettings(readKubeconfig(path), flags.context, path) : {};
  const server = flags.server ?? fromFile.server;
  if (!server) {
    throw new Error(
      path
        ? `${path} names no server for its context; pass --server`
        : `no kubeconfig found (looked at --kubeconfig, $KUBECONFIG and ./${DEFAULT_KUBECONFIG}); start a cluster with "logplane up" or pass --server and --token`,
    );
  }
  const token = flags.token ?? fromFile.token;
  // TLS settings belong to the kubeconfig's server; a --server override drops them unless it names the same server.
  const tls = flags.server === undefined || flags.server === fromFile.server;
  return {
    server,
    ...(token ? { token } : {}),
    ...(tls && fromFile.certificateAuthority ? { certificateAuthority: fromFile.certificateAuthority } : {}),
    ...(tls && fromFile.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
    ...(tls && fromFile.clientCertificate ? { clientCertificate: fromFile.clientCertificate } : {}),
    ...(fromFile.namespace ? { namespace: fromFile.namespace } : {}),
    ...(path ? { kubeconfigPath: path } : {}),
  };
};
