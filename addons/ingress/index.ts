/**
 * The Ingress controller add-on (controller name `logplane.dev/ingress`): a reverse proxy
 * that routes HTTP and HTTPS requests by the networking.k8s.io/v1 Ingresses of its
 * IngressClasses (and of the default class, for Ingresses that name none) to the ready
 * endpoints of their backend Services, read from a projection like any component, and
 * that publishes its address in the Ingresses' `status.loadBalancer`.
 *
 * The routing table is rebuilt on the first request after an Ingress, IngressClass or
 * Secret changed; endpoints are read from the projection per request, so a pod that turns
 * unready stops receiving requests as soon as the projection has folded its Endpoints.
 */
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import type { EventLog } from '../../log/port.ts';
import type { Projection } from '../../projections/index.ts';
import type { Ingress, IngressClass, IngressLoadBalancerIngress } from '../../schemas/index.ts';
import { kindRef } from '../../schemas/keys.ts';
import { resolveBackend } from './backends.ts';
import { assertNever } from './errors.ts';
import { startIngressProxy, type IngressRouter, type ProxyLimits, type RouteDecision } from './proxy.ts';
import { buildRoutingTable, matchRoute, tlsRuleFor, type RoutingTable } from './rules.ts';
import { ensureIngressClass } from './ingress-class.ts';
import { startStatusWriter } from './status.ts';
import { createCertificateStore } from './tls.ts';

export { IngressConfigError, IngressError, IngressListenError } from './errors.ts';
export { parseIngressAddress, type IngressAddress } from './address.ts';
export { INGRESS_CONTROLLER_NAME, DEFAULT_CLASS_ANNOTATION } from './rules.ts';

export interface IngressControllerOptions {
  readonly projection: Projection;
  readonly log: EventLog;
  readonly logger: Logger;
  readonly host: string;
  /** 0: any free port. */
  readonly httpPort: number;
  /** 0: any free port; absent: no HTTPS. */
  readonly httpsPort?: number;
  readonly limits?: Partial<ProxyLimits>;
}

export interface IngressController {
  /** Where the proxy listens. */
  readonly address: { readonly host: string; readonly httpPort: number; readonly httpsPort: number | undefined };
  /** Resolves once every owned Ingress's status names this proxy (as of the view now). */
  statusSettled(): Promise<void>;
  close(): Promise<void>;
}

/** The address published in the status: the listen address, or loopback for a wildcard one. */
const publishedIp = (host: string): string => (host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host);

/** Starts the proxy and the status writer. */
export const startIngressController = async (options: IngressControllerOptions): Promise<IngressController> => {
  const { projection, logger } = options;
  let table: RoutingTable | undefined;
  const watched = [`${kindRef('Ingress')}/`, `${kindRef('IngressClass')}/`, `${kindRef('Secret')}/`];
  const subscription: Subscription = projection.changes$.subscribe((change) => {
    if (watched.some((prefix) => change.key.startsWith(prefix))) table = undefined;
  });
  const currentTable = (): RoutingTable => {
    if (table) return table;
    const view = projection.view();
    table = buildRoutingTable(view.list('Ingress') as Ingress[], view.list('IngressClass') as IngressClass[]);
    return table;
  };
  const certificates = createCertificateStore(logger);

  const router: IngressRouter = {
    route: (host, path): RouteDecision => {
      const match = matchRoute(currentTable(), host ?? '', path);
      if (match.type === 'none') return { type: 'not-found' };
      const target = match.target;
      switch (target.type) {
        case 'unsupported':
          return { type: 'unavailable', reason: `Ingress ${target.ingress}: ${target.reason}` };
        case 'service': {
          const resolution = resolveBackend(projection.view(), target);
          const port = target.port.type === 'number' ? target.port.number : target.port.name;
          return resolution.type === 'ready'
            ? { type: 'forward', endpoints: resolution.endpoints, backend: `${target.namespace}/${target.service}:${port}` }
            : { type: 'unavailable', reason: resolution.reason };
        }
        default:
          return assertNever(target, 'rule target');
      }
    },
    secureContext: (servername) => {
      const rule = tlsRuleFor(currentTable(), servername);
      return rule ? certificates.contextFor(projection.view(), rule) : undefined;
    },
  };

  let proxy;
  try {
    proxy = await startIngressProxy({
      host: options.host,
      httpPort: options.httpPort,
      ...(options.httpsPort !== undefined ? { httpsPort: options.httpsPort } : {}),
      router,
      logger,
      ...(options.limits ? { limits: options.limits } : {}),
    });
  } catch (error) {
    subscription.unsubscribe();
    throw error;
  }
  const ip = publishedIp(proxy.host);
  const loadBalancer: IngressLoadBalancerIngress[] = [
    {
      ...(isIP(ip) !== 0 ? { ip } : { hostname: ip }),
      ports: [{ port: proxy.httpPort, protocol: 'TCP' }, ...(proxy.httpsPort !== undefined ? [{ port: proxy.httpsPort, protocol: 'TCP' }] : [])],
    },
  ];
  // Its class first, as an installation creates it: Ingresses naming no class then land on it.
  await ensureIngressClass({ projection, log: options.log, logger });
  const status = startStatusWriter({ projection, log: options.log, logger, loadBalancer });
  logger.info({ host: proxy.host, httpPort: proxy.httpPort, httpsPort: proxy.httpsPort }, 'Ingress controller listening');
  const running = proxy;
  return {
    address: { host: running.host, httpPort: running.httpPort, httpsPort: running.httpsPort },
    statusSettled: () => status.settled(),
    close: async () => {
      status.close();
      subscription.unsubscribe();
      await running.close();
    },
  };
};
