/**
 * The endpoints controller (kube-controller-manager 1.32's): for every Service with a
 * selector (not ExternalName), an Endpoints object with the ready and not-ready addresses
 * of the matching pods and the service's ports resolved against each pod's container ports
 * (named target ports included, matched by name and protocol); a headless Service without
 * ports lists addresses only. The Endpoints go when their Service does.
 */
import { sameJson } from '../../schemas/canonical-json.ts';
import type { AppliedChange, View } from '../../projections/index.ts';
import { matchesLabels, parseLabelSelector, type LabelRequirement } from '../../projections/selectors.ts';
import type { EndpointAddress, EndpointPort, EndpointSubset, Endpoints, EventBody, Pod, Service } from '../../schemas/index.ts';
import type { Controller, Decision } from '../runtime.ts';

export const requirementsOf = (selector: Readonly<Record<string, string>>): LabelRequirement[] => {
  const text = Object.entries(selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const parsed = parseLabelSelector(text);
  return parsed.type === 'ok' ? [...parsed.requirements] : [];
};

export const isReady = (pod: Pod): boolean =>
  (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** The label kube puts on the Endpoints of a headless Service (`v1.IsHeadlessService`). */
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';

const isHeadless = (service: Service): boolean => service.spec.clusterIP === 'None';

/**
 * The port a service port reaches on `pod` (`podutil.FindPort`), or undefined when a named
 * port is missing: a named target port is looked up, with the service port's protocol, in
 * the containers.
 */
export const resolveTargetPort = (port: NonNullable<Service['spec']['ports']>[number], pod: Pod): number | undefined => {
  const target = port.targetPort ?? port.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  const protocol = port.protocol ?? 'TCP';
  for (const container of pod.spec.containers) {
    const named = (container.ports ?? []).find((p) => p.name === target && (p.protocol ?? 'TCP') === protocol);
    if (named) return named.containerPort;
  }
  return undefined;
};

/**
 * kube's `ShouldSetHostname`: a pod's hostname names its address when its subdomain is this
 * Service of its namespace (DNS: `web-0.web.ns.svc`).
 */
export const hostnameFor = (pod: Pod, service: Service): string | undefined =>
  pod.spec.hostname && pod.spec.subdomain === service.metadata.name && (pod.metadata.namespace ?? 'default') === (service.metadata.namespace ?? 'default') ? pod.spec.hostname : undefined;

/** The keys of the Services of `namespace`: a pod's change may concern any of them. */
export const serviceKeysIn = (view: View, namespace: string): string[] => view.list('Service', namespace).map((s) => `Service/${namespace}/${s.metadata.name}`);

/** The subsets a service should have, deterministic (sorted) for a given view. */
export const desiredSubsets = (service: Service, pods: readonly Pod[]): EndpointSubset[] => {
  const selector = service.spec.selector;
  if (!selector) return [];
  const requirements = requirementsOf(selector);
  const servicePorts = service.spec.ports ?? [];
  // A headless Service may have no ports: its pods are listed without any.
  if (servicePorts.length === 0 && !isHeadless(service)) return [];
  const groups = new Map<string, { ports: EndpointPort[]; ready: EndpointAddress[]; notReady: EndpointAddress[] }>();
  for (const pod of pods) {
    if (!pod.status?.podIP || pod.metadata.deletionTimestamp) continue;
    if (!matchesLabels(requirements, pod.metadata.labels)) continue;
    const phase = pod.status.phase;
    if (phase === 'Succeeded' || phase === 'Failed') continue;
    const ports: EndpointPort[] = [];
    for (const port of servicePorts) {
      const resolved = resolveTargetPort(port, pod);
      if (resolved === undefined) continue;
      ports.push({
        ...(port.name ? { name: port.name } : {}),
        port: resolved,
        protocol: port.protocol ?? 'TCP',
      });
    }
    if (ports.length === 0 && servicePorts.length > 0) continue;
    const signature = JSON.stringify(ports);
    const group = groups.get(signature) ?? { ports, ready: [], notReady: [] };
    const namespace = pod.metadata.namespace ?? 'default';
    const hostname = hostnameFor(pod, service);
    const address: EndpointAddress = {
      ip: pod.status.podIP,
      ...(hostname ? { hostname } : {}),
      ...(pod.spec.nodeName ? { nodeName: pod.spec.nodeName } : {}),
      targetRef: { kind: 'Pod', namespace, name: pod.metadata.name, uid: pod.metadata.uid ?? '' },
    };
    (isReady(pod) ? group.ready : group.notReady).push(address);
    groups.set(signature, group);
  }
  const byIp = (a: EndpointAddress, b: EndpointAddress): number => a.ip.localeCompare(b.ip);
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, group]) => ({
      ...(group.ready.length > 0 ? { addresses: group.ready.sort(byIp) } : {}),
      ...(group.notReady.length > 0 ? { notReadyAddresses: group.notReady.sort(byIp) } : {}),
      ...(group.ports.length > 0 ? { ports: group.ports } : {}),
    }));
};

const sortedEntries = (labels: Readonly<Record<string, string>> | undefined): [string, string][] =>
  Object.entries(labels ?? {}).sort(([a], [b]) => a.localeCompare(b));

/** Commands that make the Endpoints of service `key` match the view. */
export const decideEndpoints = (key: string, view: View): Decision => {
  const [, namespace = '', name = ''] = key.split('/');
  const service = view.get(key) as Service | undefined;
  const current = view.get(`Endpoints/${namespace}/${name}`) as Endpoints | undefined;
  // Without a selector the Endpoints are the user's; an ExternalName Service has none.
  if (service && (!service.spec.selector || service.spec.type === 'ExternalName')) return { commands: [] };
  if (!service || service.metadata.deletionTimestamp) {
    if (!current) return { commands: [] };
    const deletion: EventBody = {
      type: 'ObjectDeleted',
      kind: 'Endpoints',
      namespace,
      name,
      expectedResourceVersion: null,
      uid: current.metadata.uid ?? null,
      propagationPolicy: null,
      gracePeriodSeconds: null,
    };
    return { commands: [deletion] };
  }
  const subsets = desiredSubsets(service, view.list('Pod', namespace) as Pod[]);
  // The Service's labels, plus the headless label on a headless Service's Endpoints (and never on another's).
  const labels: Record<string, string> = { ...service.metadata.labels };
  if (isHeadless(service)) labels[HEADLESS_LABEL] = '';
  else delete labels[HEADLESS_LABEL];
  const hasLabels = Object.keys(labels).length > 0;
  const wanted: Endpoints = {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name, namespace, ...(hasLabels ? { labels } : {}) },
    ...(subsets.length > 0 ? { subsets } : {}),
  };
  if (!current) return { commands: [{ type: 'ObjectCreated', object: wanted }] };
  const sameLabels = JSON.stringify(sortedEntries(current.metadata.labels)) === JSON.stringify(sortedEntries(labels));
  if (sameLabels && sameJson(current.subsets ?? [], subsets)) return { commands: [] };
  const { labels: _currentLabels, ...currentMetadata } = current.metadata;
  return {
    commands: [
      {
        type: 'ObjectUpdated',
        object: { ...wanted, metadata: { ...currentMetadata, ...wanted.metadata } },
        expectedResourceVersion: current.metadata.resourceVersion ?? null,
        subresource: null,
      },
    ],
  };
};

const serviceKeysFor = (change: AppliedChange, view: View): string[] => {
  const [kind, namespace = '', name = ''] = change.key.split('/');
  switch (kind) {
    case 'Service':
      return [change.key];
    case 'Endpoints':
      return [`Service/${namespace}/${name}`];
    case 'Pod':
      return serviceKeysIn(view, namespace);
    default:
      return [];
  }
};

/** Creates the endpoints controller. */
export const createEndpointsController = (): Controller => ({
  name: 'endpoints',
  keysFor: serviceKeysFor,
  initialKeys: (view) => [
    ...view.list('Service').map((s) => `Service/${s.metadata.namespace}/${s.metadata.name}`),
    ...view.list('Endpoints').map((e) => `Service/${e.metadata.namespace}/${e.metadata.name}`),
  ],
  decide: (key, view) => decideEndpoints(key, view),
});
