/**
 * What the mirrored EndpointSlices of an Endpoints object should hold, as
 * kube-controller-manager 1.32's endpointslice-mirroring controller computes it
 * (`pkg/controller/endpointslicemirroring`): per subset, its ready then not-ready addresses
 * (at most `maxEndpointsPerSubset` of them), grouped by address type and port list; an
 * address that is not an IP, or already listed in its group, is skipped.
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { EndpointAddress, EndpointPort as EndpointsPort, Endpoints } from '../../schemas/index.ts';
import { endpointKey, groupId, type AddressType, type Endpoint, type EndpointPort } from '../endpointslice/desired.ts';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../endpointslice/slices.ts';

/** The label that opts an Endpoints object out of mirroring (`discovery.LabelSkipMirror`). */
export const SKIP_MIRROR_LABEL = 'endpointslice.kubernetes.io/skip-mirror';
/** The annotation of Endpoints used as leader-election locks, which kube never mirrors. */
export const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';
/** kube's `controllerName` of the mirroring controller, the value of the managed-by label. */
export const MIRRORING_CONTROLLER_NAME = 'endpointslicemirroring-controller.k8s.io';
/** kube-controller-manager's `--mirroring-max-endpoints-per-subset` default. */
export const MAX_ENDPOINTS_PER_SUBSET = 1000;

/** Annotations of the Endpoints that its slices do not copy. */
const DROPPED_ANNOTATIONS = new Set(['endpoints.kubernetes.io/last-change-trigger-time', 'kubectl.kubernetes.io/last-applied-configuration']);

/** The mirrored endpoints of one address type and port list. */
export interface MirroredGroup {
  readonly id: string;
  readonly addressType: AddressType;
  readonly ports: readonly EndpointPort[];
  readonly endpoints: readonly Endpoint[];
}

/** What an Endpoints object mirrors to, and how many of its addresses were left out. */
export interface Mirrored {
  readonly groups: readonly MirroredGroup[];
  readonly skipped: number;
}

/** `shouldMirror`: not labelled skip-mirror "true", and not a leader-election lock. */
export const shouldMirror = (endpoints: Endpoints): boolean =>
  endpoints.metadata.labels?.[SKIP_MIRROR_LABEL] !== 'true' && endpoints.metadata.annotations?.[LEADER_ANNOTATION] === undefined;

/** `newEndpointSlice`'s labels: every label of the Endpoints, with the service name and the manager set. */
export const mirroredLabels = (endpoints: Endpoints): Record<string, string> => ({
  ...endpoints.metadata.labels,
  [SERVICE_NAME_LABEL]: endpoints.metadata.name,
  [MANAGED_BY_LABEL]: MIRRORING_CONTROLLER_NAME,
});

/** `newEndpointSlice`'s annotations: every annotation of the Endpoints but the trigger time and kubectl's last-applied configuration. */
export const mirroredAnnotations = (endpoints: Endpoints): Record<string, string> =>
  Object.fromEntries(Object.entries(endpoints.metadata.annotations ?? {}).filter(([key]) => !DROPPED_ANNOTATIONS.has(key)));

/** `getAddressType`: the family of an IP, nothing for what is not one. */
const addressTypeOf = (ip: string): AddressType | undefined => (isIPv4(ip) ? 'IPv4' : isIPv6(ip) ? 'IPv6' : undefined);

/** `epPortsToEpsPorts`. */
const slicePorts = (ports: readonly EndpointsPort[]): EndpointPort[] =>
  ports.map((p) => ({ name: p.name ?? '', port: p.port, protocol: p.protocol ?? 'TCP', ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}) }));

/** `addressToEndpoint`. */
const toEndpoint = (address: EndpointAddress, ready: boolean): Endpoint => ({
  addresses: [address.ip],
  conditions: { ready },
  ...(address.targetRef ? { targetRef: address.targetRef } : {}),
  ...(address.nodeName ? { nodeName: address.nodeName } : {}),
  ...(address.hostname ? { hostname: address.hostname } : {}),
});

/** The groups `endpoints` mirrors to, ordered by identity, each in the Endpoints' order. */
export const mirroredGroups = (endpoints: Endpoints, maxEndpointsPerSubset = MAX_ENDPOINTS_PER_SUBSET): Mirrored => {
  const groups = new Map<string, { addressType: AddressType; ports: EndpointPort[]; endpoints: Map<string, Endpoint> }>();
  let skipped = 0;
  for (const subset of endpoints.subsets ?? []) {
    const ports = slicePorts(subset.ports ?? []);
    const addresses = [...(subset.addresses ?? []).map((a) => [a, true] as const), ...(subset.notReadyAddresses ?? []).map((a) => [a, false] as const)];
    let added = 0;
    for (const [address, ready] of addresses) {
      if (added >= maxEndpointsPerSubset) break;
      const addressType = addressTypeOf(address.ip);
      if (addressType === undefined) continue;
      const id = groupId(addressType, ports);
      let group = groups.get(id);
      if (group === undefined) groups.set(id, (group = { addressType, ports, endpoints: new Map() }));
      const endpoint = toEndpoint(address, ready);
      const key = endpointKey(endpoint);
      if (group.endpoints.has(key)) continue;
      group.endpoints.set(key, endpoint);
      added++;
    }
    skipped += addresses.length - added;
  }
  return {
    groups: [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, group]) => ({ id, addressType: group.addressType, ports: group.ports, endpoints: [...group.endpoints.values()] })),
    skipped,
  };
};
