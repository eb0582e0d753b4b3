/**
 * The cluster DNS on the ClusterIP of its Service (kubeadm's `kube-system/kube-dns`), the
 * address pods' resolv.conf names: a second pair of listeners (UDP and TCP) that follows the
 * Service's ClusterIP in the projection, opened when the Service has one, moved when it
 * changes, closed when it goes. Each node answers on that address itself, as NodeLocal
 * DNSCache binds the kube-dns ClusterIP on every node, so no Service forwarding (which is TCP
 * only here) stands between a pod and its DNS.
 *
 * An address this host cannot listen on (port 53 without root, an address that is not local
 * to it, another server holding it) is a warning, tried again when the Service changes and
 * every `retryMs`.
 */
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import type { Projection } from '../../projections/index.ts';
import type { Service } from '../../schemas/index.ts';
import type { HostPort } from './address.ts';
import { startDnsServer, type DnsServer, type MessageHandler } from './server.ts';

/** The Service whose ClusterIP the DNS answers on, and the port. */
export interface ServiceAddressOptions {
  readonly namespace: string;
  readonly name: string;
  /** Default 53, the port a resolv.conf nameserver is asked on. */
  readonly port?: number;
  /** How often a listener that could not be opened is tried again (default 10,000 ms). */
  readonly retryMs?: number;
}

export interface ServiceListener {
  /** Where it listens now; undefined while the Service has no ClusterIP or the address cannot be had. */
  address(): HostPort | undefined;
  close(): Promise<void>;
}

/** Starts following the Service's ClusterIP with listeners that answer through `handle`. */
export const followServiceAddress = (options: {
  readonly projection: Projection;
  readonly service: ServiceAddressOptions;
  readonly handle: MessageHandler;
  readonly logger: Logger;
}): ServiceListener => {
  const { projection, service, handle, logger } = options;
  const port = service.port ?? 53;
  const retryMs = service.retryMs ?? 10_000;
  const key = `Service/${service.namespace}/${service.name}`;
  let current: { readonly ip: string; readonly server: DnsServer } | undefined;
  let lastFailure: string | undefined;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  let chain: Promise<void> = Promise.resolve();

  const wantedIP = (): string | undefined => {
    const clusterIP = (projection.view().get(key) as Service | undefined)?.spec?.clusterIP;
    return clusterIP !== undefined && isIP(clusterIP) !== 0 ? clusterIP : undefined;
  };

  const reconcile = async (): Promise<void> => {
    if (closed) return;
    const ip = wantedIP();
    // Listening where it should (or nowhere, as it should): nothing to do.
    if (current?.ip === ip) return;
    if (current) {
      await current.server.close();
      logger.info({ service: key, host: current.ip, port }, 'cluster DNS stopped listening on the old ClusterIP of its Service');
      current = undefined;
    }
    if (ip === undefined) return;
    try {
      current = { ip, server: await startDnsServer({ host: ip, port, handle, logger }) };
      lastFailure = undefined;
      logger.info({ service: key, host: ip, port }, 'cluster DNS listening on the ClusterIP of its Service');
    } catch (error) {
      const message = String(error instanceof Error ? error.message : error);
      logger[message === lastFailure ? 'debug' : 'warn']({ service: key, retryMs }, `${message}; pods whose resolv.conf names ${ip} get no answers from this node until it can`);
      lastFailure = message;
      retry ??= setTimeout(() => {
        retry = undefined;
        schedule();
      }, retryMs);
      retry.unref();
    }
  };

  /** Runs one reconcile after those under way (listeners never open twice at once). */
  const schedule = (): void => {
    chain = chain.then(reconcile).catch((error: unknown) => logger.warn({ error: String(error), service: key }, 'following the DNS Service address failed'));
  };

  const subscription: Subscription = projection.changes$.subscribe((change) => {
    if (change.key === key) schedule();
  });
  schedule();

  return {
    address: () => current?.server.address,
    close: async () => {
      closed = true;
      subscription.unsubscribe();
      if (retry) clearTimeout(retry);
      await chain;
      await current?.server.close();
      current = undefined;
    },
  };
};
