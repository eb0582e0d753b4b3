/**
 * The forwarding table: what the proxy programs, already resolved from Services and
 * Endpoints, so the appliers need neither the log nor a projection.
 *
 * The input types below are the subset of the Kubernetes Service/Endpoints JSON shape the
 * proxy reads. `Service` and `Endpoints` of `schemas/` satisfy them structurally (a test
 * checks that), and so does Kubernetes JSON with absent or null fields.
 */
import { isIPv4 } from 'node:net';
import { ProxyConfigError, assertNever } from './errors.ts';

/** A Kubernetes IntOrString: a port number or the name of a container port. */
export type IntOrString = number | string;

/** Object metadata the proxy reads: the key of a Service and of its Endpoints. */
export interface ObjectMetaInput {
  readonly name: string;
  readonly namespace?: string | null;
}

/** One entry of `Service.spec.ports`. */
export interface ServicePortInput {
  readonly name?: string | null;
  readonly protocol?: string | null;
  readonly port: number;
  readonly targetPort?: IntOrString | null;
  readonly nodePort?: number | null;
}

/** The part of a Kubernetes Service the proxy reads. */
export interface ServiceInput {
  readonly metadata: ObjectMetaInput;
  readonly spec?: {
    readonly type?: string | null;
    readonly clusterIP?: string | null;
    readonly ports?: readonly ServicePortInput[] | null;
  } | null;
}

/** One entry of `Endpoints.subsets[].ports`: the port name matches a Service port name. */
export interface EndpointPortInput {
  readonly name?: string | null;
  readonly port: number;
  readonly protocol?: string | null;
}

/** One entry of `Endpoints.subsets`: addresses that share the same resolved ports. */
export interface EndpointSubsetInput {
  readonly addresses?: readonly { readonly ip: string }[] | null;
  readonly notReadyAddresses?: readonly { readonly ip: string }[] | null;
  readonly ports?: readonly EndpointPortInput[] | null;
}

/** The part of a Kubernetes Endpoints object the proxy reads. */
export interface EndpointsInput {
  readonly metadata: ObjectMetaInput;
  readonly subsets?: readonly EndpointSubsetInput[] | null;
}

/** Transport protocols the proxy forwards. */
export const Protocol = { TCP: 'TCP' } as const;
/** A transport protocol the proxy forwards. */
export type Protocol = (typeof Protocol)[keyof typeof Protocol];

/** Service types, as in `Service.spec.type`. */
export const ServiceType = {
  ClusterIP: 'ClusterIP',
  NodePort: 'NodePort',
  LoadBalancer: 'LoadBalancer',
  ExternalName: 'ExternalName',
} as const;
/** A Service type, as in `Service.spec.type`. */
export type ServiceType = (typeof ServiceType)[keyof typeof ServiceType];

/** A ready backend of a service port: where a connection is forwarded to. */
export interface EndpointTarget {
  readonly ip: string;
  readonly port: number;
}

/** One forwarded service port: connections to `clusterIP:port` (and `nodePort`) go to one of `endpoints`. */
export interface ServicePortRule {
  /** `namespace/name` of the Service. */
  readonly serviceKey: string;
  /** The Service port's name; `''` for the single unnamed port. */
  readonly portName: string;
  readonly protocol: Protocol;
  readonly clusterIP: string;
  readonly port: number;
  /** Set only for NodePort and LoadBalancer services. */
  readonly nodePort: number | null;
  /** Ready endpoints only, sorted by address then port, without duplicates. Empty: connections are rejected. */
  readonly endpoints: readonly EndpointTarget[];
}

/** Everything one node's proxy forwards. Rules are sorted by service key, then port name. */
export interface ForwardingTable {
  readonly rules: readonly ServicePortRule[];
}

/** Why a Service produces no rules at all. */
export const SkipReason = {
  ExternalName: 'ExternalName',
  Headless: 'Headless',
  NoClusterIP: 'NoClusterIP',
  ClusterIPNotIPv4: 'ClusterIPNotIPv4',
  UnknownType: 'UnknownType',
} as const;
/** Why a Service produces no rules at all. */
export type SkipReason = (typeof SkipReason)[keyof typeof SkipReason];

/** What one Service contributes to the table: rules, or the reason it contributes none. */
export type ServiceResolution =
  | { readonly type: 'forwarded'; readonly rules: readonly ServicePortRule[] }
  | { readonly type: 'skipped'; readonly serviceKey: string; readonly reason: SkipReason };

const DEFAULT_NAMESPACE = 'default';

/** `namespace/name` of an object; a missing namespace is `default`. */
function namespacedName(metadata: ObjectMetaInput): string {
  return `${metadata.namespace || DEFAULT_NAMESPACE}/${metadata.name}`;
}

function parseServiceType(type: string | null | undefined): ServiceType | null {
  if (type === null || type === undefined || type === '') return ServiceType.ClusterIP;
  const known: readonly string[] = Object.values(ServiceType);
  return known.includes(type) ? (type as ServiceType) : null;
}

function exposesNodePorts(type: ServiceType): boolean {
  switch (type) {
    case ServiceType.NodePort:
    case ServiceType.LoadBalancer:
      return true;
    case ServiceType.ClusterIP:
    case ServiceType.ExternalName:
      return false;
    default:
      return assertNever(type);
  }
}

function compareIPv4(a: string, b: string): number {
  const octetsA = a.split('.').map(Number);
  const octetsB = b.split('.').map(Number);
  for (let i = 0; i < 4; i++) {
    const diff = (octetsA[i] ?? 0) - (octetsB[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders endpoints by address (numerically), then port. */
function compareEndpoints(a: EndpointTarget, b: EndpointTarget): number {
  return compareIPv4(a.ip, b.ip) || a.port - b.port;
}

/** Orders rules by service key, port name, then frontend. */
function compareRules(a: ServicePortRule, b: ServicePortRule): number {
  return (
    compareStrings(a.serviceKey, b.serviceKey) ||
    compareStrings(a.portName, b.portName) ||
    compareIPv4(a.clusterIP, b.clusterIP) ||
    a.port - b.port
  );
}

function sortedUniqueEndpoints(endpoints: readonly EndpointTarget[]): EndpointTarget[] {
  const sorted = [...endpoints].sort(compareEndpoints);
  return sorted.filter((endpoint, i) => {
    const previous = sorted[i - 1];
    return previous === undefined || compareEndpoints(previous, endpoint) !== 0;
  });
}

/**
 * The port a subset's ready addresses serve a Service port on. Matches the subset's ports
 * by name and protocol, as kube-proxy does (the endpoints controller already resolved a
 * named `targetPort` per pod). A subset that lists no ports falls back to a numeric
 * `targetPort` (or `port` when `targetPort` is unset); a named `targetPort` cannot be
 * resolved without the subset's ports, so such a subset contributes nothing.
 */
function subsetPort(subset: EndpointSubsetInput, servicePort: ServicePortInput, portName: string): number | null {
  const ports = subset.ports ?? [];
  if (ports.length === 0) {
    const target = servicePort.targetPort ?? servicePort.port;
    return typeof target === 'number' ? target : null;
  }
  const match = ports.find(
    (p) => (p.name ?? '') === portName && (p.protocol || Protocol.TCP) === Protocol.TCP,
  );
  return match ? match.port : null;
}

function readyEndpoints(
  endpoints: EndpointsInput | undefined,
  servicePort: ServicePortInput,
  portName: string,
): EndpointTarget[] {
  const targets: EndpointTarget[] = [];
  for (const subset of endpoints?.subsets ?? []) {
    const port = subsetPort(subset, servicePort, portName);
    if (port === null || !isValidPort(port)) continue;
    for (const address of subset.addresses ?? []) {
      if (isIPv4(address.ip)) targets.push({ ip: address.ip, port });
    }
  }
  return sortedUniqueEndpoints(targets);
}

function isValidPort(port: number): boolean {
  return Number.isInteger(port) && port >= 1 && port <= 65535;
}

/**
 * The rules one Service contributes, given its Endpoints (same namespace/name), or why it
 * contributes none: ExternalName and headless (`clusterIP: None`) services are not
 * proxied, a service without an allocated IPv4 ClusterIP cannot be. Only TCP ports are
 * forwarded; ports of other protocols are left out. `nodePort` is kept only for NodePort
 * and LoadBalancer services.
 */
export function resolveService(service: ServiceInput, endpoints: EndpointsInput | undefined): ServiceResolution {
  const serviceKey = namespacedName(service.metadata);
  const type = parseServiceType(service.spec?.type);
  if (type === null) return { type: 'skipped', serviceKey, reason: SkipReason.UnknownType };
  if (type === ServiceType.ExternalName) return { type: 'skipped', serviceKey, reason: SkipReason.ExternalName };
  const clusterIP = service.spec?.clusterIP ?? '';
  if (clusterIP === 'None') return { type: 'skipped', serviceKey, reason: SkipReason.Headless };
  if (clusterIP === '') return { type: 'skipped', serviceKey, reason: SkipReason.NoClusterIP };
  if (!isIPv4(clusterIP)) return { type: 'skipped', serviceKey, reason: SkipReason.ClusterIPNotIPv4 };

  const withNodePorts = exposesNodePorts(type);
  const rules: ServicePortRule[] = [];
  for (const servicePort of service.spec?.ports ?? []) {
    if ((servicePort.protocol || Protocol.TCP) !== Protocol.TCP || !isValidPort(servicePort.port)) continue;
    const portName = servicePort.name ?? '';
    const nodePort = withNodePorts && servicePort.nodePort && isValidPort(servicePort.nodePort) ? servicePort.nodePort : null;
    rules.push({
      serviceKey,
      portName,
      protocol: Protocol.TCP,
      clusterIP,
      port: servicePort.port,
      nodePort,
      endpoints: readyEndpoints(endpoints, servicePort, portName),
    });
  }
  return { type: 'forwarded', rules };
}

/**
 * Resolves Services and their Endpoints into the forwarding table: one rule per TCP
 * service port, ready addresses only, `targetPort` resolved through the Endpoints' named
 * ports. The result is the same for any input order. Should two rules claim the same
 * `clusterIP:port` (or the same nodePort) — which the apiserver's allocators prevent — the
 * first in sorted order keeps it and the later rule (or its nodePort) is left out.
 */
export function forwardingTable(services: readonly ServiceInput[], endpoints: readonly EndpointsInput[]): ForwardingTable {
  const endpointsByKey = new Map(endpoints.map((e) => [namespacedName(e.metadata), e]));
  const candidates: ServicePortRule[] = [];
  for (const service of services) {
    const resolution = resolveService(service, endpointsByKey.get(namespacedName(service.metadata)));
    switch (resolution.type) {
      case 'forwarded':
        candidates.push(...resolution.rules);
        break;
      case 'skipped':
        break;
      default:
        assertNever(resolution);
    }
  }
  candidates.sort(compareRules);

  const rules: ServicePortRule[] = [];
  const claimedFrontends = new Set<string>();
  const claimedNodePorts = new Set<number>();
  const claimedPortNames = new Set<string>();
  for (const rule of candidates) {
    const frontend = `${rule.clusterIP}:${rule.port}`;
    const portId = `${rule.serviceKey}:${rule.portName}`;
    if (claimedFrontends.has(frontend) || claimedPortNames.has(portId)) continue;
    claimedFrontends.add(frontend);
    claimedPortNames.add(portId);
    if (rule.nodePort !== null && claimedNodePorts.has(rule.nodePort)) {
      rules.push({ ...rule, nodePort: null });
      continue;
    }
    if (rule.nodePort !== null) claimedNodePorts.add(rule.nodePort);
    rules.push(rule);
  }
  return { rules };
}

/**
 * Checks a table an applier is about to program, whoever built it: IPv4 addresses, ports
 * in 1–65535, no two rules on the same `clusterIP:port`, nodePort or service port.
 * Throws {@link ProxyConfigError} naming the first offending rule.
 */
export function validateForwardingTable(table: ForwardingTable): void {
  const frontends = new Map<string, string>();
  const nodePorts = new Map<number, string>();
  const portIds = new Set<string>();
  for (const rule of table.rules) {
    const portId = `${rule.serviceKey}:${rule.portName}`;
    const context = { serviceKey: rule.serviceKey, portName: rule.portName };
    if (rule.protocol !== Protocol.TCP) throw new ProxyConfigError(`unsupported protocol ${String(rule.protocol)}`, context);
    if (!isIPv4(rule.clusterIP)) throw new ProxyConfigError(`clusterIP ${rule.clusterIP} is not an IPv4 address`, context);
    if (!isValidPort(rule.port)) throw new ProxyConfigError(`port ${rule.port} is out of range`, context);
    if (rule.nodePort !== null && !isValidPort(rule.nodePort)) {
      throw new ProxyConfigError(`nodePort ${rule.nodePort} is out of range`, context);
    }
    for (const endpoint of rule.endpoints) {
      if (!isIPv4(endpoint.ip) || !isValidPort(endpoint.port)) {
        throw new ProxyConfigError(`endpoint ${endpoint.ip}:${endpoint.port} is not an IPv4 address and valid port`, context);
      }
    }
    if (portIds.has(portId)) throw new ProxyConfigError(`service port ${portId} appears twice`, context);
    portIds.add(portId);
    const frontend = `${rule.clusterIP}:${rule.port}`;
    const frontendOwner = frontends.get(frontend);
    if (frontendOwner !== undefined) {
      throw new ProxyConfigError(`${frontend} is claimed by both ${frontendOwner} and ${portId}`, { ...context, frontend });
    }
    frontends.set(frontend, portId);
    if (rule.nodePort !== null) {
      const nodePortOwner = nodePorts.get(rule.nodePort);
      if (nodePortOwner !== undefined) {
        throw new ProxyConfigError(`nodePort ${rule.nodePort} is claimed by both ${nodePortOwner} and ${portId}`, {
          ...context,
          nodePort: rule.nodePort,
        });
      }
      nodePorts.set(rule.nodePort, portId);
    }
  }
}

/** The table with rules sorted and each rule's endpoints sorted and deduplicated: the order appliers render in. */
export function canonicalTable(table: ForwardingTable): ForwardingTable {
  return {
    rules: [...table.rules].sort(compareRules).map((rule) => ({ ...rule, endpoints: sortedUniqueEndpoints(rule.endpoints) })),
  };
}
