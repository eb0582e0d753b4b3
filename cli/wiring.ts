/**
 * Wiring shared by `logplane up` and the distributed component commands: opening the log
 * (embedded or Kafka), the admin credentials and TLS material in the data directory, and
 * the apiserver with the history API and pod logs attached.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import {
  createApiServer,
  formatTokenFile,
  generateSelfSignedCertificate,
  parseTokenFile,
  type ApiServer,
  type PodLogsHook,
  type TlsMaterial,
  type TokenFile,
} from '../apiserver/index.ts';
import { createHistoryApi } from '../apiserver/history/routes.ts';
import { createEmbeddedLog } from '../log/embedded/index.ts';
import { createKafkaLog } from '../log/kafka/index.ts';
import type { EventLog } from '../log/port.ts';
import type { Projection } from '../projections/index.ts';
import type { Node } from '../schemas/index.ts';
import { createDebugReconcile } from '../reconcilers/debug.ts';
import { CONTROLLER_FACTORIES } from '../reconcilers/controllers.ts';

/** When an embedded-log append is acknowledged: after the disk flush, or after the commit. */
export type Durability = 'flushed' | 'committed';
export const DURABILITIES: readonly Durability[] = ['flushed', 'committed'];

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
      readonly partitions: number;
      readonly ssl?: boolean;
      readonly sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string };
    }
) & {
  /** The service CIDR every folding component of the cluster must share (ClusterIPs are allocated by the fold). */
  readonly serviceCIDR?: string;
};

/** Opens the log of `target`. */
export const openLog = async (target: LogTarget, logger: Logger): Promise<EventLog> => {
  switch (target.type) {
    case 'embedded':
      mkdirSync(target.dir, { recursive: true });
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
        partitions: target.partitions,
        logger,
        ...(target.ssl ? { ssl: true } : {}),
        ...(target.sasl ? { sasl: target.sasl } : {}),
      });
    default:
      return target satisfies never;
  }
};

/** The admin credentials of a data directory, created on first use. */
export const adminCredentials = (dataDir: string): { token: string; tokens: TokenFile; tokenFile: string } => {
  mkdirSync(dataDir, { recursive: true });
  const tokenFile = join(dataDir, 'tokens.csv');
  if (!existsSync(tokenFile)) {
    const token = randomBytes(24).toString('hex');
    writeFileSync(tokenFile, formatTokenFile([{ token, user: { name: 'admin', uid: 'admin', groups: ['system:masters'] } }]), {
      mode: 0o600,
    });
  }
  const tokens = parseTokenFile(readFileSync(tokenFile, 'utf8'));
  const admin = [...tokens.users.entries()].find(([, user]) => user.name === 'admin');
  if (!admin) throw new Error(`${tokenFile} has no "admin" user; delete the file to get a new admin token`);
  return { token: admin[0], tokens, tokenFile };
};

/** The apiserver's self-signed certificate in the data directory, created on first use. */
export const tlsMaterial = (dataDir: string): TlsMaterial => {
  const certFile = join(dataDir, 'apiserver.crt');
  const keyFile = join(dataDir, 'apiserver.key');
  if (!existsSync(certFile) || !existsSync(keyFile)) {
    const material = generateSelfSignedCertificate();
    writeFileSync(certFile, material.cert);
    writeFileSync(keyFile, material.key, { mode: 0o600 });
  }
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
};

export interface ServeOptions {
  readonly log: EventLog;
  readonly projection: Projection;
  readonly tokens: TokenFile;
  readonly port: number;
  readonly host: string;
  readonly tls?: TlsMaterial;
  readonly logger: Logger;
  readonly podLogs?: PodLogsHook;
}

/** Starts an apiserver with the history API (and `debug reconcile`) attached. */
export const serveApi = async (options: ServeOptions): Promise<ApiServer> => {
  const historyApi = createHistoryApi({
    log: options.log,
    projection: options.projection,
    debugReconcile: createDebugReconcile({ log: options.log, projection: options.projection, controllers: CONTROLLER_FACTORIES }),
  });
  const server = await createApiServer({
    log: options.log,
    projection: options.projection,
    tokens: options.tokens,
    port: options.port,
    host: options.host,
    logger: options.logger.child({ component: 'apiserver' }),
    extensions: [historyApi],
    ...(options.tls ? { tls: options.tls } : {}),
    ...(options.podLogs ? { podLogs: options.podLogs } : {}),
  });
  await server.ensureDefaultNamespaces();
  return server;
};

/**
 * Pod logs from the agent that runs the pod, over its log endpoint (the port its Node
 * publishes in `status.daemonEndpoints.kubeletEndpoint`), for apiservers in distributed mode.
 */
export const remotePodLogs = (projection: Projection): PodLogsHook => async (request) => {
  const nodeName = request.pod.spec.nodeName ?? '';
  const node = projection.view().get(`Node//${nodeName}`) as Node | undefined;
  const port = node?.status?.daemonEndpoints?.kubeletEndpoint?.Port;
  const address = node?.status?.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '127.0.0.1';
  if (!port) throw new Error(`node ${nodeName} publishes no log endpoint (is its agent running?)`);
  const path = [nodeName, request.pod.metadata.namespace ?? 'default', request.pod.metadata.name, request.container ?? '']
    .map(encodeURIComponent)
    .join('/');
  const query = new URLSearchParams({
    follow: String(request.follow),
    previous: String(request.previous),
    ...(request.tailLines !== undefined ? { tailLines: String(request.tailLines) } : {}),
  });
  const response = await fetch(`http://${address}:${port}/containerLogs/${path}?${query}`, { signal: request.signal });
  if (!response.ok || !response.body) throw new Error(`node ${nodeName}: ${(await response.text()).trim()}`);
  return response.body as unknown as AsyncIterable<Uint8Array>;
};
