/**
 * What the cluster DNS answers from: the Services, their Endpoints, the Namespaces and (for
 * `pods verified`) the pod addresses of a projection view, indexed the way the answers look
 * them up. CoreDNS's kubernetes plugin keeps the same indexes in its informer caches
 * (services by name, endpoints by service, services and endpoints by IP, pods by IP).
 *
 * Endpoints, not EndpointSlices, are read: the service proxy forwards to the Endpoints, and
 * DNS answers from the data the proxy uses (CoreDNS's own rule when it picks its source).
 */
import type { View } from '../../projections/index.ts';
import type { Endpoints, EndpointAddress, Namespace, Pod, Service } from '../../schemas/index.ts';
import { canonicalAddress } from './names.ts';

/** One port of a Service or of an endpoint subset. `port` -1: a headless subset without ports (A records only). */
export interface PortEntry {
  readonly name: string;
  readonly protocol: string;
  readonly port: number;
}

/** One ready endpoint address of a Service. */
export interface EndpointEntry {
  readonly ip: string;
  /**
   * The endpoint's label under the Service's name: the address's `hostname`, else the
   * dashed IP (`10-0-0-1`), as CoreDNS's `endpointHostname`.
   */
  readonly label: string;
  readonly ports: readonly PortEntry[];
}

/** How a Service is published in DNS. */
export type ServiceEntry =
  | { readonly type: 'ClusterIP'; readonly namespace: string; readonly name: string; readonly clusterIPs: readonly string[]; readonly ports: readonly PortEntry[]; readonly endpoints: readonly EndpointEntry[] }
  | { readonly type: 'Headless'; readonly namespace: string; readonly name: string; readonly endpoints: readonly EndpointEntry[] }
  | { readonly type: 'ExternalName'; readonly namespace: string; readonly name: string; readonly externalName: string };

/** A PTR target: the service (ClusterIPs) or the endpoint (endpoint addresses) an address belongs to. */
export interface ReverseEntry {
  readonly namespace: string;
  readonly service: string;
  /** Set for an endpoint address: its label. */
  readonly endpoint?: string;
}

/** The indexes answers are computed from. Keys are lower case; maps, never plain objects (no prototype walk). */
export interface ClusterDirectory {
  /** `namespace/name` → Service. */
  readonly services: ReadonlyMap<string, ServiceEntry>;
  readonly namespaces: ReadonlySet<string>;
  /** IP → the names that point back at it, ClusterIPs first. */
  readonly reverse: ReadonlyMap<string, readonly ReverseEntry[]>;
  /** `namespace/ip` of every pod with an address (read for `pods verified`). */
  readonly podAddresses: ReadonlySet<string>;
  /** The SOA serial: when the directory was built (seconds since the epoch), as CoreDNS's "last modified". */
  readonly serial: number;
}

/** `10-0-0-1` for 10.0.0.1, `fd00--1` for fd00::1: an address as one DNS label. */
export const dashedAddress = (ip: string): string => ip.replaceAll(ip.includes(':') ? ':' : '.', '-');

const protocolOf = (protocol: string | undefined): string => (protocol ?? 'TCP').toUpperCase();

/**
 * An endpoint address's label. kube's endpoints controller copies `pod.spec.hostname` into
 * the address when `pod.spec.subdomain` names the Service (the pod records of headless
 * services and StatefulSets); where an Endpoints object does not carry it, the pod the
 * address refers to is read for the same rule.
 */
const endpointLabel = (view: View, address: EndpointAddress, service: { namespace: string; name: string }): string => {
  if (address.hostname) return address.hostname.toLowerCase();
  const ref = address.targetRef;
  if (ref?.kind === 'Pod' && ref.name) {
    const pod = view.get(`Pod/${ref.namespace ?? service.namespace}/${ref.name}`) as Pod | undefined;
    const spec = pod?.spec;
    if (spec?.hostname && spec.subdomain === service.name && (pod?.metadata.namespace ?? service.namespace) === service.namespace) {
      return spec.hostname.toLowerCase();
    }
  }
  return dashedAddress(address.ip);
};

const readyEndpoints = (view: View, endpoints: Endpoints | undefined, service: { namespace: string; name: string }): EndpointEntry[] => {
  const entries: EndpointEntry[] = [];
  for (const subset of endpoints?.subsets ?? []) {
    const ports: PortEntry[] = (subset.ports ?? []).map((p) => ({ name: (p.name ?? '').toLowerCase(), protocol: protocolOf(p.protocol), port: p.port }));
    // CoreDNS gives a subset without ports a sentinel port, so its addresses still get A records.
    const withSentinel = ports.length > 0 ? ports : [{ name: '', protocol: 'TCP', port: -1 }];
    for (const address of subset.addresses ?? []) {
      const ip = canonicalAddress(address.ip);
      entries.push({ ip, label: endpointLabel(view, { ...address, ip }, service), ports: withSentinel });
    }
  }
  return entries;
};

const serviceEntry = (view: View, service: Service): ServiceEntry | undefined => {
  const namespace = service.metadata.namespace ?? 'default';
  const name = service.metadata.name;
  const spec = service.spec ?? {};
  if (spec.type === 'ExternalName') {
    return spec.externalName ? { type: 'ExternalName', namespace, name, externalName: spec.externalName.replace(/\.$/, '') } : undefined;
  }
  const endpoints = readyEndpoints(view, view.get(`Endpoints/${namespace}/${name}`) as Endpoints | undefined, { namespace, name });
  if (spec.clusterIP === 'None') return { type: 'Headless', namespace, name, endpoints };
  const clusterIPs = (spec.clusterIPs?.length ? spec.clusterIPs : spec.clusterIP ? [spec.clusterIP] : []).filter((ip) => ip !== 'None').map(canonicalAddress);
  const ports = (spec.ports ?? []).map((p) => ({ name: (p.name ?? '').toLowerCase(), protocol: protocolOf(p.protocol), port: p.port }));
  return { type: 'ClusterIP', namespace, name, clusterIPs, ports, endpoints };
};

const addReverse = (reverse: Map<string, ReverseEntry[]>, ip: string, entry: ReverseEntry): void => {
  const entries = reverse.get(ip) ?? [];
  entries.push(entry);
  reverse.set(ip, entries);
};

/** Builds the directory of `view`; `podAddresses` only when asked (it reads every pod). */
export const buildDirectory = (view: View, options: { readonly withPodAddresses: boolean; readonly serial: number }): ClusterDirectory => {
  const services = new Map<string, ServiceEntry>();
  const reverse = new Map<string, ReverseEntry[]>();
  for (const object of view.list('Service')) {
    const entry = serviceEntry(view, object as Service);
    if (!entry) continue;
    services.set(`${entry.namespace}/${entry.name}`, entry);
  }
  // ClusterIPs before endpoint addresses: an address that is both answers with the Service first.
  for (const entry of services.values()) {
    if (entry.type !== 'ClusterIP') continue;
    for (const ip of entry.clusterIPs) addReverse(reverse, ip, { namespace: entry.namespace, service: entry.name });
  }
  for (const entry of services.values()) {
    if (entry.type === 'ExternalName') continue;
    for (const endpoint of entry.endpoints) {
      addReverse(reverse, endpoint.ip, { namespace: entry.namespace, service: entry.name, endpoint: endpoint.label });
    }
  }
  const namespaces = new Set(view.list('Namespace').map((ns) => (ns as Namespace).metadata.name));
  const podAddresses = new Set<string>();
  if (options.withPodAddresses) {
    for (const object of view.list('Pod')) {
      const pod = object as Pod;
      const namespace = pod.metadata.namespace ?? 'default';
      const ips = pod.status?.podIPs?.map((p) => p.ip) ?? (pod.status?.podIP ? [pod.status.podIP] : []);
      for (const ip of ips) podAddresses.add(`${namespace}/${canonicalAddress(ip)}`);
    }
  }
  return { services, namespaces, reverse, podAddresses, serial: options.serial };
};
