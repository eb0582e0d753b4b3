/**
 * The cluster DNS add-on: a DNS server (UDP and TCP) that answers the cluster zone from a
 * projection, as CoreDNS's kubernetes plugin answers it from its informers, and forwards
 * other names to upstreams only when some are configured (off by default: REFUSED).
 *
 * The directory it answers from is rebuilt on the first query after a Service, Endpoints or
 * Namespace changed (and a Pod, for `pods verified`), so an answer reflects the projection as
 * of that query.
 */
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import type { Projection } from '../../projections/index.ts';
import { answerQuestion, PodsMode, type AnswerOptions } from './answer.ts';
import { buildDirectory, type ClusterDirectory } from './directory.ts';
import { assertNever, DnsConfigError } from './errors.ts';
import { startDnsServer, type MessageHandler } from './server.ts';
import { followServiceAddress, type ServiceAddressOptions, type ServiceListener } from './service-listener.ts';
import { createForwarder, parseUpstream, type Forwarder } from './upstream.ts';
import { emptyReply, encodeReply, readInbound, udpLimit } from './wire.ts';

export { PodsMode } from './answer.ts';
export { DnsConfigError, DnsError, DnsListenError } from './errors.ts';
export { parseHostPort, type HostPort } from './address.ts';
export { parseUpstream } from './upstream.ts';
export type { ServiceAddressOptions } from './service-listener.ts';

/** CoreDNS's default TTL of the kubernetes plugin, in seconds. */
export const DEFAULT_TTL = 5;
/** The cluster domain kubeadm and kubelet use by default. */
export const DEFAULT_ZONE = 'cluster.local';
/**
 * Pod names are answered without checking a pod has the address, as kubeadm's Corefile
 * configures CoreDNS (`pods insecure`).
 */
export const DEFAULT_PODS_MODE: PodsMode = PodsMode.Insecure;

export interface ClusterDnsOptions {
  readonly projection: Projection;
  readonly host: string;
  /** 0: any free port. */
  readonly port: number;
  readonly logger: Logger;
  /** The cluster domain (default `cluster.local`). */
  readonly zone?: string;
  /** TTL of every answer, 0..3600 s (default 5, CoreDNS's). */
  readonly ttl?: number;
  readonly pods?: PodsMode;
  /** `host[:port]` of upstream servers for other names; none (the default): such names are REFUSED. */
  readonly upstreams?: readonly string[];
  /**
   * The addresses clients reach this server at (answered for `ns.dns.<zone>`); default:
   * `host` when it is a specific address.
   */
  readonly nameservers?: readonly string[];
  /**
   * Also answer on the ClusterIP of this Service (kubeadm's `kube-system/kube-dns`, port 53),
   * following it as it comes, changes or goes (see `service-listener.ts`); absent: only `host:port`.
   */
  readonly service?: ServiceAddressOptions;
}

export interface ClusterDns {
  /** Where the server listens (both UDP and TCP). */
  readonly address: { readonly host: string; readonly port: number };
  /** Where it also listens on its Service's ClusterIP now (undefined: not asked to, no ClusterIP yet, or the address cannot be had). */
  serviceAddress(): { readonly host: string; readonly port: number } | undefined;
  close(): Promise<void>;
}

const ZONE = /^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;
/**
 * The changes that invalidate the directory. Pods only for `pods verified`: otherwise a pod
 * matters only through its Endpoints (which change when it comes, goes or turns ready) and its
 * `spec.hostname`/`subdomain` (immutable), so a pod's status reports cost no rebuild.
 */
const watchedPrefixes = (pods: PodsMode): readonly string[] => ['Service/', 'Endpoints/', 'Namespace/', ...(pods === PodsMode.Verified ? ['Pod/'] : [])];

const answerOptionsOf = (options: ClusterDnsOptions, forwarding: boolean): AnswerOptions => {
  const zone = (options.zone ?? DEFAULT_ZONE).toLowerCase().replace(/\.$/, '');
  if (!ZONE.test(zone)) throw new DnsConfigError(`DNS zone "${options.zone}" is not a domain name such as cluster.local`, { zone: options.zone });
  const ttl = options.ttl ?? DEFAULT_TTL;
  if (!Number.isInteger(ttl) || ttl < 0 || ttl > 3600) throw new DnsConfigError(`DNS TTL ${ttl} is not a whole number of seconds from 0 to 3600 (CoreDNS's bounds)`, { ttl });
  const pods = options.pods ?? DEFAULT_PODS_MODE;
  if (!Object.values(PodsMode).includes(pods)) throw new DnsConfigError(`DNS pods mode "${String(pods)}" is not one of ${Object.values(PodsMode).join(', ')}`);
  const specific = isIP(options.host) !== 0 && options.host !== '0.0.0.0' && options.host !== '::';
  const nameservers = options.nameservers ?? (specific ? [options.host] : []);
  for (const ip of nameservers) if (isIP(ip) === 0) throw new DnsConfigError(`DNS nameserver address "${ip}" is not an IP address`, { nameserver: ip });
  return { zone, ttl, pods, forwarding, nameservers };
};

/** Starts the cluster DNS server on `host:port`, answering from `projection`. */
export const startClusterDns = async (options: ClusterDnsOptions): Promise<ClusterDns> => {
  const logger = options.logger;
  const upstreams = (options.upstreams ?? []).map(parseUpstream);
  const forwarder: Forwarder | undefined = upstreams.length > 0 ? createForwarder({ upstreams }) : undefined;
  const answerOptions = answerOptionsOf(options, forwarder !== undefined);

  let directory: ClusterDirectory | undefined;
  const watched = watchedPrefixes(answerOptions.pods);
  const subscription: Subscription = options.projection.changes$.subscribe((change) => {
    if (watched.some((prefix) => change.key.startsWith(prefix))) directory = undefined;
  });
  const currentDirectory = (): ClusterDirectory =>
    (directory ??= buildDirectory(options.projection.view(), {
      withPodAddresses: answerOptions.pods === PodsMode.Verified,
      serial: Math.floor(Date.now() / 1000),
    }));

  const handle: MessageHandler = async (message, transport) => {
    const inbound = readInbound(message);
    switch (inbound.type) {
      case 'drop':
        logger.debug({ transport, reason: inbound.reason }, 'DNS message dropped');
        return undefined;
      case 'error':
        logger.debug({ transport, rcode: inbound.rcode, reason: inbound.reason }, 'DNS message refused');
        return inbound.reply;
      case 'query': {
        const resolution = answerQuestion({ name: inbound.question.name, type: inbound.question.type }, currentDirectory(), answerOptions);
        switch (resolution.type) {
          case 'answer':
            return encodeReply(
              inbound,
              { ...resolution, authoritative: true, recursionAvailable: forwarder !== undefined },
              transport === 'udp' ? udpLimit(inbound) : 65_535,
            );
          case 'refused':
            return emptyReply(inbound, 'REFUSED', false);
          case 'forward':
            return (await forwarder?.forward(message, transport)) ?? emptyReply(inbound, 'SERVFAIL', true);
          default:
            return assertNever(resolution, 'resolution');
        }
      }
      default:
        return assertNever(inbound, 'inbound message');
    }
  };

  let server;
  try {
    server = await startDnsServer({ host: options.host, port: options.port, handle, logger });
  } catch (error) {
    subscription.unsubscribe();
    throw error;
  }
  logger.info(
    { host: server.address.host, port: server.address.port, zone: answerOptions.zone, ttl: answerOptions.ttl, pods: answerOptions.pods, upstreams: options.upstreams ?? [] },
    'cluster DNS listening',
  );
  const running = server;
  const onService: ServiceListener | undefined = options.service
    ? followServiceAddress({ projection: options.projection, service: options.service, handle, logger })
    : undefined;
  return {
    address: running.address,
    serviceAddress: () => onService?.address(),
    close: async () => {
      subscription.unsubscribe();
      await onService?.close();
      await running.close();
    },
  };
};
