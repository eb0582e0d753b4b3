/**
 * What the EndpointSlices of a Service should hold, as kube-controller-manager 1.32's
 * endpointslice controller computes it (`podToEndpoint`, `getEndpointPorts`,
 * `ShouldPodBeInEndpoints` with terminating pods included): one endpoint per pod that
 * matches the selector, has an IP of the slice's address family and is not terminal, grouped
 * by the ports the Service's ports resolve to on that pod (one group per distinct port list,
 * one address type per IP family of the Service).
 */
import { matchesLabels } from '../../projections/selectors.ts';
import type { View } from '../../projections/index.ts';
import type { EndpointSlice, Node, Pod, Service } from '../../schemas/index.ts';
import { hostnameFor, isReady, requirementsOf, resolveTargetPort } from '../endpoints/index.ts';

export type Endpoint = EndpointSlice['endpoints'][number];
export type EndpointPort = NonNullable<EndpointSlice['ports']>[number];
export type AddressType = 'IPv4' | 'IPv6';

/** The endpoints of one port list and address type. */
export interface EndpointGroup {
  readonly addressType: AddressType;
  readonly ports: readonly EndpointPort[];
  /** Identity of the group: address type and ports, as kube's `endpointMeta` hash. */
  readonly id: string;
  /** By identity (`endpointKey`), in pod-name order. */
  readonly endpoints: ReadonlyMap<string, Endpoint>;
}

const ZONE_LABEL = 'topology.kubernetes.io/zone';

/** The address types of a Service's slices: its IP families (IPv4 when it names none). */
export const addressTypesOf = (service: Service): AddressType[] => {
  const families = (service.spec.ipFamilies ?? []).filter((f): f is AddressType => f === 'IPv4' || f === 'IPv6');
  return families.length > 0 ? [...new Set(families)] : ['IPv4'];
};

const familyOf = (ip: string): AddressType => (ip.includes(':') ? 'IPv6' : 'IPv4');

/** The pod's IP of `addressType`, from `podIPs` (or `podIP`). */
const addressOf = (pod: Pod, addressType: AddressType): string | undefined => {
  const ips = (pod.status?.podIPs ?? []).map((p) => p.ip).filter((ip): ip is string => typeof ip === 'string' && ip !== '');
  if (ips.length === 0 && pod.status?.podIP) ips.push(pod.status.podIP);
  return ips.find((ip) => familyOf(ip) === addressType);
};

/** `ShouldPodBeInEndpoints(pod, includeTerminating: true)`: has an IP and is not terminal. */
const belongs = (pod: Pod): boolean => {
  if (!pod.status?.podIP && (pod.status?.podIPs ?? []).length === 0) return false;
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed';
};

/** The identity of an endpoint within its group: its pod (a new incarnation is a new endpoint) and address. */
export const endpointKey = (endpoint: Endpoint): string =>
  `${endpoint.targetRef?.namespace ?? ''}/${endpoint.targetRef?.name ?? ''}/${endpoint.targetRef?.uid ?? ''}/${endpoint.addresses.join(',')}`;

/** `getEndpointPorts`: every Service port that resolves on the pod, in the Service's order. */
const endpointPorts = (service: Service, pod: Pod): EndpointPort[] => {
  const ports: EndpointPort[] = [];
  for (const servicePort of service.spec.ports ?? []) {
    const port = resolveTargetPort(servicePort, pod);
    if (port === undefined) continue;
    ports.push({
      name: servicePort.name ?? '',
      port,
      protocol: servicePort.protocol ?? 'TCP',
      ...(servicePort.appProtocol !== undefined ? { appProtocol: servicePort.appProtocol } : {}),
    });
  }
  return ports;
};

/** `podToEndpoint`: ready unless not serving or terminating (or always, with `publishNotReadyAddresses`). */
const toEndpoint = (service: Service, pod: Pod, address: string, view: View): Endpoint => {
  const serving = isReady(pod);
  const terminating = pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
  const ready = service.spec.publishNotReadyAddresses === true || (serving && !terminating);
  const namespace = pod.metadata.namespace ?? 'default';
  const nodeName = pod.spec.nodeName;
  const zone = nodeName ? (view.get(`Node//${nodeName}`) as Node | undefined)?.metadata.labels?.[ZONE_LABEL] : undefined;
  const hostname = hostnameFor(pod, service);
  return {
    addresses: [address],
    conditions: { ready, serving, terminating },
    ...(hostname ? { hostname } : {}),
    targetRef: { kind: 'Pod', namespace, name: pod.metadata.name, uid: pod.metadata.uid ?? '' },
    ...(nodeName ? { nodeName } : {}),
    ...(zone ? { zone } : {}),
  };
};

/** The endpoint groups the Service's slices should hold, each group's endpoints in pod-name order. */
export const desiredGroups = (service: Service, pods: readonly Pod[], view: View): EndpointGroup[] => {
  const requirements = requirementsOf(service.spec.selector ?? {});
  const groups = new Map<string, { addressType: AddressType; ports: EndpointPort[]; endpoints: Map<string, Endpoint> }>();
  const matching = pods.filter((pod) => belongs(pod) && matchesLabels(requirements, pod.metadata.labels)).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  for (const addressType of addressTypesOf(service)) {
    for (const pod of matching) {
      const address = addressOf(pod, addressType);
      if (address === undefined) continue;
      const ports = endpointPorts(service, pod);
      const id = groupId(addressType, ports);
      let group = groups.get(id);
      if (group === undefined) groups.set(id, (group = { addressType, ports, endpoints: new Map() }));
      const endpoint = toEndpoint(service, pod, address, view);
      group.endpoints.set(endpointKey(endpoint), endpoint);
    }
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, group]) => ({ id, ...group }));
};

/** A group's identity: address type and ports (order-insensitive, as kube hashes them sorted). */
export const groupId = (addressType: string, ports: readonly EndpointPort[]): string =>
  `${addressType}|${ports
    .map((p) => `${p.name ?? ''}/${p.protocol ?? 'TCP'}/${p.port ?? ''}/${p.appProtocol ?? ''}`)
    .sort()
    .join(',')}`;
