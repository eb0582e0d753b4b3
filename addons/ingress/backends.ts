/**
 * Backend resolution: an Ingress backend (Service name and port number or name) to the
 * ready endpoint addresses behind it, read from a projection view, as ingress-nginx does
 * (it forwards to endpoints directly, not through the Service's ClusterIP).
 *
 * EndpointSlices (labelled `kubernetes.io/service-name`) are read when the Service has any,
 * as kube-proxy and ingress-nginx read them; otherwise the Endpoints object. An endpoint of a
 * slice is ready unless `conditions.ready` is false (kube: unset means ready).
 */
import { isIP } from 'node:net';
import type { View } from '../../projections/index.ts';
import type { EndpointSlice, Endpoints, Service, ServicePort } from '../../schemas/index.ts';
import type { BackendRef } from './rules.ts';

/** The label that ties an EndpointSlice to its Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** A ready address and port requests can be forwarded to. */
export interface EndpointTarget {
  readonly ip: string;
  readonly port: number;
}

/** Ready endpoints of a backend, or why there are none (answered 503). */
export type BackendResolution =
  | { readonly type: 'ready'; readonly endpoints: readonly EndpointTarget[] }
  | { readonly type: 'unavailable'; readonly reason: string };

const isTcp = (protocol: string | undefined | null): boolean => (protocol ?? 'TCP').toUpperCase() === 'TCP';

const servicePortOf = (service: Service, backend: BackendRef): ServicePort | undefined =>
  (service.spec?.ports ?? []).find((p) =>
    isTcp(p.protocol) && (backend.port.type === 'number' ? p.port === backend.port.number : p.name === backend.port.name),
  );

const fromSlices = (slices: readonly EndpointSlice[], servicePort: ServicePort): EndpointTarget[] => {
  const targets: EndpointTarget[] = [];
  const portName = servicePort.name ?? '';
  for (const slice of slices) {
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') continue;
    const port = (slice.ports ?? []).find((p) => (p.name ?? '') === portName && isTcp(p.protocol))?.port;
    if (port === undefined || port === null) continue;
    for (const endpoint of slice.endpoints ?? []) {
      if (endpoint.conditions?.ready === false) continue;
      for (const ip of endpoint.addresses ?? []) if (isIP(ip) !== 0) targets.push({ ip, port });
    }
  }
  return targets;
};

const fromEndpoints = (endpoints: Endpoints | undefined, servicePort: ServicePort): EndpointTarget[] => {
  const targets: EndpointTarget[] = [];
  const portName = servicePort.name ?? '';
  for (const subset of endpoints?.subsets ?? []) {
    const ports = subset.ports ?? [];
    // A subset without ports serves a numeric targetPort (or the port itself), as kube-proxy reads it.
    const target = servicePort.targetPort ?? servicePort.port;
    const port = ports.length > 0 ? ports.find((p) => (p.name ?? '') === portName && isTcp(p.protocol))?.port : typeof target === 'number' ? target : undefined;
    if (port === undefined) continue;
    for (const address of subset.addresses ?? []) if (isIP(address.ip) !== 0) targets.push({ ip: address.ip, port });
  }
  return targets;
};

/** Resolves `backend` against `view` to its ready endpoints, without duplicates, in a stable order. */
export const resolveBackend = (view: View, backend: BackendRef): BackendResolution => {
  const service = view.get(`Service/${backend.namespace}/${backend.service}`) as Service | undefined;
  const described = `Service ${backend.namespace}/${backend.service}`;
  if (!service) return { type: 'unavailable', reason: `${described} does not exist` };
  if (service.spec?.type === 'ExternalName') return { type: 'unavailable', reason: `${described} is an ExternalName Service; this controller forwards only to endpoints` };
  const servicePort = servicePortOf(service, backend);
  const portText = backend.port.type === 'number' ? String(backend.port.number) : `"${backend.port.name}"`;
  if (!servicePort) return { type: 'unavailable', reason: `${described} has no TCP port ${portText}` };
  const slices = (view.list('EndpointSlice', backend.namespace) as EndpointSlice[]).filter((s) => s.metadata.labels?.[SERVICE_NAME_LABEL] === backend.service);
  const targets = slices.length > 0 ? fromSlices(slices, servicePort) : fromEndpoints(view.get(`Endpoints/${backend.namespace}/${backend.service}`) as Endpoints | undefined, servicePort);
  const unique = [...new Map(targets.map((t) => [`${t.ip}|${t.port}`, t])).values()].sort((a, b) => a.ip.localeCompare(b.ip) || a.port - b.port);
  if (unique.length === 0) return { type: 'unavailable', reason: `${described} port ${portText} has no ready endpoint` };
  return { type: 'ready', endpoints: unique };
};
