/**
 * Wiring shared by `logplane up` and the distributed component commands: opening the log
 * (embedded or Kafka), the admin credentials and TLS material in the data directory, and
 * the apiserver with the history API and pod logs attached.
 */
import { admitControllerCreate } from '../apiserver/admission/controller-creates.ts';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { checkServerIdentity, connect as tlsConnect } from 'node:tls';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import {
  ApiError,
  apiErrors,
  createApiServer,
  formatTokenFile,
  generateSelfSignedCertificate,
  parseTokenFile,
  type ApiServer,
  type AuthorizationMode,
  type NodeResourceUsage,
  type PodLogsHook,
  type ResourceUsageHook,
  type TlsMaterial,
  type TokenFile,
} from '../apiserver/index.ts';
import { createAuditLog, defaultAuditLogPath, type AuditLog } from '../apiserver/audit/log.ts';
import { METADATA_POLICY, parseAuditPolicy } from '../apiserver/audit/policy.ts';
import { createHistoryApi } from '../apiserver/history/routes.ts';
import type { ServingLimits } from '../apiserver/limits.ts';
import { failureStatus } from '../apiserver/status.ts';
import { type PodStreamsHook, refuseWithStatus } from '../apiserver/streaming/connect.ts';
import { createEmbeddedLog } from '../log/embedded/index.ts';
import { createKafkaLog } from '../log/kafka/index.ts';
import type { EventLog } from '../log/port.ts';
import { instrumentLog } from '../log/metrics.ts';
import type { Projection } from '../projections/index.ts';
import type { Node } from '../schemas/index.ts';
import { createDebugReconcile } from '../reconcilers/debug.ts';
import { CONTROLLER_FACTORIES } from '../reconcilers/controllers.ts';
import type { ResolvedSchedulerConfig } from '../reconcilers/scheduler/config/index.ts';
import { createSchedulerController } from '../reconcilers/scheduler/controller.ts';
import { trackHeartbeats } from '../reconcilers/node-lifecycle/heartbeats.ts';
import type { ClusterCredentials } from './pki.ts';
import { createTokenIssuer } from '../apiserver/serviceaccount-tokens/issuer.ts';
import { kubernetesServiceIP } from '../apiserver/system-objects/index.ts';

import { type Durability, KAFKA_DEFAULT_PARTITIONS } from './log-flags.ts';

export { DURABILITIES, type Durability, KAFKA_DEFAULT_PARTITIONS } from './log-flags.ts';

/** Where the log lives. */
export type LogTarget = (
  | {
      readonly type: 'embedded';
      readonly dir: string;
      readonly cluster: string;
      readonly partitions: number;
      /** When an append is acknowledged (default `flushed`; see `EmbeddedLogOptions.durability`). */
      readonly durability?: Durability;
    }
  | {
      readonly type: 'kafka';
      readonly brokers: readonly string[];
      readonly cluster: string;
      /** Without it: the existing topics' count, or {@link KAFKA_DEFAULT_PARTITIONS} for a new cluster. */
      readonly partitions?: number;
      readonly ssl?: boolean;
      readonly sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string };
    }
);

/** Makes `dir` (and its parents) and restricts it to its owner (0700), also when it existed. */
export const privateDir = (dir: string): void => {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
};

/** Writes `path` with mode 0600 when it is missing; restricts an existing one to 0600. */
const privateFile = (path: string, text: () => string): void => {
  if (!existsSync(path)) writeFileSync(path, text(), { mode: 0o600 });
  chmodSync(path, 0o600);
};

/**
 * The registry of this process's metrics (every component of the process registers on it;
 * its `/metrics` serves it), with prom-client's process metrics (`process_cpu_seconds_total`,
 * `process_resident_memory_bytes`, …, as kube's components expose theirs) and Node's.
 */
export const processRegistry = (): Registry => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
};

/** Opens the log of `target`; with a registry, its appends are measured there (log/metrics.ts). */
export const openLog = async (target: LogTarget, logger: Logger, registry?: Registry): Promise<EventLog> => {
  const log = await openUnmeasuredLog(target, logger);
  return registry ? instrumentLog(log, registry) : log;
};

const openUnmeasuredLog = async (target: LogTarget, logger: Logger): Promise<EventLog> => {
  switch (target.type) {
    case 'embedded':
      privateDir(target.dir);
      return createEmbeddedLog({
        dir: target.dir,
        cluster: target.cluster,
        partitions: target.partitions,
        logger,
        ...(target.durability ? { durability: target.durability } : {}),
      });
    case 'kafka':
      return createKafkaLog({
        brokers: [...target.brokers],
        cluster: target.cluster,
        ...(target.partitions !== undefined ? { partitions: target.partitions } : { defaultPartitions: KAFKA_DEFAULT_PARTITIONS }),
        logger,
        ...(target.ssl ? { ssl: true } : {}),
        ...(target.sasl ? { sasl: target.sasl } : {}),
      });
    default:
      return target satisfies never;
  }
};

/** The admin credentials of a data directory, created on first use (the directory 0700, the token file 0600). */
export const adminCredentials = (dataDir: string): { token: string; tokens: TokenFile; tokenFile: string } => {
  privateDir(dataDir);
  const tokenFile = join(dataDir, 'tokens.csv');
  privateFile(tokenFile, () =>
    formatTokenFile([{ token: randomBytes(24).toString('hex'), user: { name: 'admin', uid: 'admin', groups: ['system:masters'] } }]),
  );
  const tokens = parseTokenFile(readFileSync(tokenFile, 'utf8'));
  const admin = [...tokens.users.entries()].find(([, user]) => user.name === 'admin');
  if (!admin) throw new Error(`${tokenFile} has no "admin" user; delete the file to get a new admin token`);
  return { token: admin[0], tokens, tokenFile };
};

/**
 * A component's self-signed serving certificate in the data directory (`<name>.crt`,
 * `<name>.key`; the apiserver's by default), created on first use (key and certificate 0600).
 */
export const tlsMaterial = (dataDir: string, name = 'apiserver', hosts: readonly string[] = []): TlsMaterial => {
  const certFile = join(dataDir, `${name}.crt`);
  const keyFile = join(dataDir, `${name}.key`);
  privateDir(dataDir);
  if (!existsSync(certFile) || !existsSync(keyFile)) {
    const material = generateSelfSignedCertificate({ commonName: `logplane-${name}`, ...(hosts.length > 0 ? { hosts: ['localhost', '127.0.0.1', '::1', ...hosts] } : {}) });
    writeFileSync(certFile, material.cert, { mode: 0o600 });
    writeFileSync(keyFile, material.key, { mode: 0o600 });
  }
  chmodSync(certFile, 0o600);
  chmodSync(keyFile, 0o600);
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
};

export interface ServeOptions {
  readonly log: EventLog;
  readonly projection: Projection;
  readonly tokens: TokenFile;
  readonly port: number;
  readonly host: string;
  readonly tls?: TlsMaterial;
  /** The CA whose client certificates authenticate users (kube's `--client-ca-file`): the cluster CA. */
  readonly clientCA?: string;
  /** The audit log (default: `DATA/audit/audit.log`, every request at Metadata); false keeps none. */
  readonly audit?: AuditSettings | false;
  readonly logger: Logger;
  readonly podLogs?: PodLogsHook;
  readonly podStreams?: PodStreamsHook;
  readonly resourceUsage?: ResourceUsageHook;
  /**
   * The service CIDR asked for (`--service-cidr`): recorded in the log when the cluster is
   * new; on a configured cluster it must match the log's, or the start fails.
   */
  readonly serviceCIDR?: string;
  /** The data directory: `logplane replay --into` may write only below it. */
  readonly dataDir?: string;
  /** `--request-timeout`, `--max-connections`, `--max-requests-inflight`, `--max-mutating-requests-inflight`. */
  readonly limits?: Partial<ServingLimits>;
  /** `--authorization-mode`; with RBAC the bootstrap roles and bindings are created at start. */
  readonly authorizationModes?: readonly AuthorizationMode[];
  /** The PEM key service-account tokens are signed with (`serviceAccountSigningKey`); without it no TokenRequest API. */
  readonly serviceAccountSigningKey?: string;
  /** The process's metrics registry, which the apiserver's `/metrics` serves (default: the apiserver's own). */
  readonly registry?: Registry;
  /** The scheduler profiles `debug reconcile scheduler` re-runs decisions with (`--scheduler-config`; default kube's default profile). */
  readonly schedulerConfig?: ResolvedSchedulerConfig;
}

/** Starts an apiserver with the history API (and `debug reconcile`) attached. */
/** What the audit log flags say: a path (default `DATA/audit/audit.log`), a policy file, rotation. */
export interface AuditSettings {
  readonly path?: string;
  readonly policyFile?: string;
  readonly maxSizeMB?: number;
  readonly maxBackups?: number;
}

/** Opens the audit log `settings` describe (none for false); a policy file that cannot be used throws naming what is wrong. */
const openAuditLog = (settings: AuditSettings | false | undefined, dataDir: string | undefined, logger: Logger): AuditLog | undefined => {
  if (settings === false || dataDir === undefined) return undefined;
  const policy = settings?.policyFile !== undefined ? parseAuditPolicy(readFileSync(settings.policyFile, 'utf8')) : METADATA_POLICY;
  return createAuditLog({
    path: settings?.path ?? defaultAuditLogPath(dataDir),
    policy,
    ...(settings?.maxSizeMB !== undefined ? { maxSizeMB: settings.maxSizeMB } : {}),
    ...(settings?.maxBackups !== undefined ? { maxBackups: settings.maxBackups } : {}),
    logger,
  });
};

/** The controllers `debug reconcile` re-runs: the scheduler with the process's profiles when it has a configuration. */
const debugControllersOf = (schedulerConfig: ResolvedSchedulerConfig | undefined): typeof CONTROLLER_FACTORIES =>
  schedulerConfig === undefined ? CONTROLLER_FACTORIES : { ...CONTROLLER_FACTORIES, scheduler: () => createSchedulerController({ config: schedulerConfig }) };

/** How far back the apiserver reads the heartbeats for the nodes' Lease renewals: twice kubelet's lease duration (40 s). */
const NODE_RENEWALS_WINDOW_MS = 80_000;

export const serveApi = async (options: ServeOptions): Promise<ApiServer> => {
  const audit = openAuditLog(options.audit, options.dataDir, options.logger);
  const renewals = await trackHeartbeats(options.log, Date.now, NODE_RENEWALS_WINDOW_MS);
  const historyApi = createHistoryApi({
    log: options.log,
    projection: options.projection,
    debugReconcile: createDebugReconcile({ log: options.log, projection: options.projection, controllers: debugControllersOf(options.schedulerConfig), admitCreated: admitControllerCreate }),
    debugControllers: Object.keys(CONTROLLER_FACTORIES),
    ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
  });
  const server = await createApiServer({
    log: options.log,
    projection: options.projection,
    tokens: options.tokens,
    port: options.port,
    host: options.host,
    logger: options.logger.child({ component: 'apiserver' }),
    ...(options.registry ? { registry: options.registry } : {}),
    extensions: [historyApi],
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.authorizationModes ? { authorizationModes: options.authorizationModes } : {}),
    ...(options.tls ? { tls: options.tls } : {}),
    ...(options.tls && options.clientCA !== undefined ? { clientCA: options.clientCA } : {}),
    ...(audit ? { audit } : {}),
    ...(options.podLogs ? { podLogs: options.podLogs } : {}),
    nodeLeaseRenewals: renewals,
    ...(options.podStreams ? { podStreams: options.podStreams } : {}),
    ...(options.resourceUsage ? { resourceUsage: options.resourceUsage } : {}),
    ...(options.serviceAccountSigningKey ? { serviceAccountTokens: createTokenIssuer({ signingKey: options.serviceAccountSigningKey }) } : {}),
  });
  const served: ApiServer = {
    ...server,
    close: async () => {
      renewals.close();
      await server.close();
    },
  };
  try {
    await server.ensureClusterConfiguration(options.serviceCIDR !== undefined ? { serviceCIDR: options.serviceCIDR } : {});
  } catch (error) {
    await served.close();
    throw error;
  }
  await server.ensureDefaultNamespaces();
  await server.ensureBootstrapPolicy();
  await server.startSystemObjects().ready;
  return served;
};

/** Reads at most 4 KiB of an agent's error reply, for the message. */
const errorText = async (reply: IncomingMessage): Promise<string> => {
  let text = '';
  for await (const chunk of reply) {
    text += String(chunk);
    if (text.length >= 4096) break;
  }
  reply.destroy();
  return text.slice(0, 4096).trim();
};

/** An agent's refusal as the Status the apiserver answers: its 400 and 404 pass through, anything else is the server's fault. */
const agentError = (nodeName: string, status: number, message: string): ApiError => {
  const text = `node ${nodeName}: ${message}`;
  if (status === 400) return apiErrors.badRequest(text);
  if (status === 404) return new ApiError(failureStatus('NotFound', text));
  return apiErrors.internal(`${text} (the agent answered ${status})`);
};

/**
 * GETs `path` from the agent of node `nodeName` over its HTTPS endpoint (the port its Node
 * publishes in `status.daemonEndpoints.kubeletEndpoint`). The agent must present a serving
 * certificate of the cluster CA (`credentials.ca`) naming the node; the apiserver presents
 * its `kubelet-client` certificate. Any other endpoint is refused before a byte of the
 * request is sent. Resolves with a 200 reply; any other answer is thrown as a Status.
 */
const agentGet = async (projection: Projection, credentials: ClusterCredentials, nodeName: string, path: string, signal: AbortSignal): Promise<IncomingMessage> => {
  const node = projection.view().get(`Node//${nodeName}`) as Node | undefined;
  const port = node?.status?.daemonEndpoints?.kubeletEndpoint?.Port;
  const address = node?.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '127.0.0.1';
  if (!port) throw apiErrors.serviceUnavailable(`node ${nodeName} publishes no log endpoint (is its agent running?)`);
  const reply = await new Promise<IncomingMessage>((resolve, reject) => {
    const outgoing = httpsRequest(
      {
        host: address,
        port,
        path,
        method: 'GET',
        ca: credentials.ca,
        cert: credentials.cert,
        key: credentials.key,
        agent: false,
        signal,
        // The address must be in the certificate, and the certificate must be the node's own.
        checkServerIdentity: (host, cert) =>
          checkServerIdentity(host, cert) ??
          ((cert.subjectaltname ?? '').split(', ').includes(`DNS:${nodeName}`)
            ? undefined
            : new Error(`the certificate at ${host}:${port} is not node ${nodeName}'s (${cert.subject?.CN ?? 'no CN'})`)),
      },
      resolve,
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ECONNREFUSED' || error.code === 'ECONNRESET'
          ? apiErrors.serviceUnavailable(`node ${nodeName}: log endpoint ${address}:${port} unreachable: ${error.message}`)
          : apiErrors.internal(`node ${nodeName}: log endpoint ${address}:${port}: ${error.message} (do the apiserver and the agent share one --pki?)`, error),
      ),
    );
    outgoing.end();
  });
  if (reply.statusCode !== 200) throw agentError(nodeName, reply.statusCode ?? 500, await errorText(reply));
  return reply;
};

/** Pod logs from the agent that runs the pod (see {@link agentGet}), for apiservers in distributed mode. */
export const remotePodLogs = (projection: Projection, credentials: ClusterCredentials): PodLogsHook => async (request) => {
  const nodeName = request.pod.spec.nodeName ?? '';
  const path = [nodeName, request.pod.metadata.namespace ?? 'default', request.pod.metadata.name, request.container ?? '']
    .map(encodeURIComponent)
    .join('/');
  const query = new URLSearchParams({
    follow: String(request.follow),
    previous: String(request.previous),
    ...(request.tailLines !== undefined ? { tailLines: String(request.tailLines) } : {}),
    ...(request.limitBytes !== undefined ? { limitBytes: String(request.limitBytes) } : {}),
  });
  return agentGet(projection, credentials, nodeName, `/containerLogs/${path}?${query}`, request.signal);
};

/** The most an agent's resource usage answer may hold (a node of 110 pods needs some 50 KiB). */
const MAX_USAGE_BYTES = 16 * 1024 * 1024;

/** A node's resource usage from its agent (see {@link agentGet}), for apiservers in distributed mode. */
export const remoteResourceUsage = (projection: Projection, credentials: ClusterCredentials): ResourceUsageHook => async (node, signal) => {
  const nodeName = node.metadata.name;
  const reply = await agentGet(projection, credentials, nodeName, `/resourceUsage/${encodeURIComponent(nodeName)}`, signal);
  let text = '';
  for await (const chunk of reply) {
    text += String(chunk);
    if (text.length > MAX_USAGE_BYTES) {
      reply.destroy();
      throw apiErrors.internal(`node ${nodeName}: the agent's resource usage answer is larger than ${MAX_USAGE_BYTES} bytes`);
    }
  }
  const usage = JSON.parse(text) as NodeResourceUsage;
  if (typeof usage !== 'object' || usage === null || usage.node !== nodeName || !Array.isArray(usage.pods)) {
    throw apiErrors.internal(`node ${nodeName}: the agent's resource usage answer is not one of node ${nodeName}`);
  }
  return usage;
};

/** Request headers an upgrade carries to the agent (kube's upgrade-aware proxy passes them on; credentials stay behind). */
const FORWARDED_UPGRADE_HEADERS = ['upgrade', 'connection', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-protocol', 'sec-websocket-extensions', 'x-stream-protocol-version'] as const;

/**
 * Exec, attach and port-forward for apiservers in distributed mode: the upgrade request is
 * sent on to the agent of the pod's node over its HTTPS endpoint (the same endpoint and
 * mutual TLS as {@link agentGet}), and from the agent's answer on (its 101, or its error)
 * the two connections are joined byte for byte, as kube-apiserver's upgrade-aware proxy does.
 */
export const remotePodStreams = (projection: Projection, credentials: ClusterCredentials): PodStreamsHook => ({ node: nodeName, path, req, socket, head }) => {
  const node = projection.view().get(`Node//${nodeName}`) as Node | undefined;
  const port = node?.status?.daemonEndpoints?.kubeletEndpoint?.Port;
  const address = node?.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '127.0.0.1';
  if (!port) {
    refuseWithStatus(socket, apiErrors.serviceUnavailable(`node ${nodeName} publishes no kubelet endpoint (is its agent running?)`));
    return;
  }
  const upstream = tlsConnect({
    host: address,
    port,
    ca: credentials.ca,
    cert: credentials.cert,
    key: credentials.key,
    servername: nodeName,
    checkServerIdentity: (_host, cert) =>
      (cert.subjectaltname ?? '').split(', ').includes(`DNS:${nodeName}`) ? undefined : new Error(`the certificate at ${address}:${port} is not node ${nodeName}'s`),
  });
  let joined = false;
  upstream.on('secureConnect', () => {
    joined = true;
    const lines = [`${req.method ?? 'GET'} ${path} HTTP/1.1`, `Host: ${address}:${port}`];
    for (const name of FORWARDED_UPGRADE_HEADERS) {
      const value = req.headers[name];
      if (value !== undefined) lines.push(`${name}: ${Array.isArray(value) ? value.join(', ') : value}`);
    }
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(socket);
    socket.pipe(upstream);
  });
  upstream.on('error', (error) => {
    if (!joined) refuseWithStatus(socket, apiErrors.serviceUnavailable(`node ${nodeName}: kubelet endpoint ${address}:${port} unreachable: ${error.message}`));
    else socket.destroy();
  });
  socket.on('close', () => upstream.destroy());
  upstream.on('close', () => socket.destroy());
};

/**
 * What else an apiserver's certificate names, as kube-apiserver's own: the `kubernetes`
 * Service's names and ClusterIP (the first address of `serviceCIDR`), so a client in a pod
 * (`KUBERNETES_SERVICE_HOST`, `kubernetes.default.svc`) verifies it. Only a new certificate
 * gets them; one made by an older version is kept.
 */
export const apiserverServiceHosts = (serviceCIDR: string): string[] => [
  'kubernetes',
  'kubernetes.default',
  'kubernetes.default.svc',
  'kubernetes.default.svc.cluster.local',
  kubernetesServiceIP(serviceCIDR),
];
