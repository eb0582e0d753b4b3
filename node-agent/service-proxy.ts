/**
 * Keeps the forwarding rules of this machine equal to the Services and Endpoints in the
 * projection (kube-proxy's loop): any change to either re-renders the whole table, and the
 * proxy applies it (userspace: live listeners; nftables: one atomic ruleset).
 */
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import type { Projection } from '../projections/index.ts';
import type { Endpoints, Service } from '../schemas/index.ts';
import { createProxy, forwardingTable, type ProxyMode, type ServiceProxy } from './proxy/index.ts';

export interface ServiceProxyLoop {
  readonly proxy: ServiceProxy;
  /** Resolves once the rules reflect the projection as it is now. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts programming forwarding rules in `mode` from `projection`. The Services in
 * `servedLocally` get no rules: a server of this process listens on their ClusterIPs itself
 * (the cluster DNS on kube-dns's, as NodeLocal DNSCache's NOTRACK rules keep kube-proxy off it).
 */
export const startServiceProxy = (options: {
  projection: Projection;
  mode: ProxyMode;
  logger: Logger;
  nodePortAddress?: string;
  servedLocally?: readonly { readonly namespace: string; readonly name: string }[];
}): ServiceProxyLoop => {
  const { projection, logger } = options;
  const servedLocally = new Set((options.servedLocally ?? []).map((service) => `${service.namespace}/${service.name}`));
  const proxied = (service: Service): boolean => !servedLocally.has(`${service.metadata.namespace ?? 'default'}/${service.metadata.name}`);
  const proxy =
    options.mode === 'nftables'
      ? createProxy({ mode: 'nftables', logger })
      : createProxy({ mode: 'userspace', logger, ...(options.nodePortAddress ? { nodePortAddress: options.nodePortAddress } : {}) });
  let applying: Promise<void> = Promise.resolve();
  let scheduled = false;
  let lastFailure: string | undefined;
  const apply = (): void => {
    scheduled = false;
    const view = projection.view();
    const table = forwardingTable((view.list('Service') as Service[]).filter(proxied), view.list('Endpoints') as Endpoints[]);
    applying = applying
      .then(() => proxy.apply(table))
      .then(
        () => {
          lastFailure = undefined;
        },
        (error: unknown) => {
          // The same failure on every change (a port this user may not bind, such as the
          // kubernetes Service's 443 without root) is a warning once, not one per change.
          const text = String(error);
          logger[text === lastFailure ? 'debug' : 'warn']({ error: text }, 'applying forwarding rules failed; will retry on the next change');
          lastFailure = text;
        },
      );
  };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(apply);
  };
  const subscription: Subscription = projection.changes$.subscribe((change) => {
    if (change.key.startsWith('Service/') || change.key.startsWith('Endpoints/')) schedule();
  });
  apply();
  return {
    proxy,
    settled: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      await applying;
    },
    close: async () => {
      subscription.unsubscribe();
      await applying;
      await proxy.close();
    },
  };
};
