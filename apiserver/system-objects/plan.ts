/**
 * What the apiserver keeps in every cluster, as kube-apiserver's bootstrap controller
 * (`pkg/controlplane/controller/kubernetesservice`) and its lease endpoint reconciler
 * (`pkg/controlplane/reconcilers/lease.go`, `endpointsadapter.go`) do, as a pure plan:
 * given the view, this apiserver's identity and its clock, the writes that make
 * - the `kubernetes` Service in `default` exist (ClusterIP: the first address of the
 *   service CIDR, port `https` 443 → the secure port; created once, not reconciled after),
 * - the `kube-dns` Service in `kube-system` exist, as kubeadm's CoreDNS add-on creates it
 *   (ClusterIP: the tenth address of the service CIDR; created once, not reconciled after);
 *   logplane's cluster DNS serves it (addons/dns), not pods of a CoreDNS Deployment,
 * - this apiserver's Lease in `kube-system` renewed (or deleted when it leaves), and the
 *   Leases of apiservers that stopped renewing deleted,
 * - the Endpoints and the EndpointSlice `kubernetes` list the address of every apiserver
 *   whose Lease is live.
 */
import { isIP } from 'node:net';
import type { View } from '../../projections/index.ts';
import { objectKey, sameJson, type Endpoints, type EndpointSlice, type EventBody, type Kind, type KubeObject, type Lease, type Service } from '../../schemas/index.ts';
import { resourceOfKind } from '../resources.ts';
import { admitCreate, admitUpdate } from '../validation/admit.ts';

export const KUBERNETES_SERVICE = { namespace: 'default', name: 'kubernetes' } as const;
/** The cluster DNS Service, named as kubeadm names CoreDNS's. */
export const KUBE_DNS_SERVICE = { namespace: 'kube-system', name: 'kube-dns' } as const;
/** Where the apiservers' Leases live, and the label kube gives them (the apiserver identity leases'). */
export const LEASE_NAMESPACE = 'kube-system';
export const IDENTITY_LABEL = 'apiserver.kubernetes.io/identity';
export const IDENTITY_VALUE = 'kube-apiserver';
/** Where a Lease says which address and secure port its apiserver serves on. */
export const ADDRESS_ANNOTATION = 'logplane.io/advertise-address';
export const PORT_ANNOTATION = 'logplane.io/secure-port';
/** kube's `discovery.LabelSkipMirror` and `discovery.LabelServiceName`. */
const SKIP_MIRROR_LABEL = 'endpointslice.kubernetes.io/skip-mirror';
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/** This apiserver, as its Lease and the endpoints name it. */
export interface ApiserverIdentity {
  /** The Lease's name (`apiserver-<hash>`). */
  readonly leaseName: string;
  /** `<leaseName>_<uuid of this process>`, as kube's identity leases. */
  readonly holderIdentity: string;
  readonly hostname: string;
  /** The advertise address: an IP. */
  readonly address: string;
  /** The secure port clients reach it on. */
  readonly port: number;
}

export interface PlanInput {
  readonly view: View;
  readonly self: ApiserverIdentity;
  /** The service CIDR the log records; undefined: not configured yet (nothing is created). */
  readonly serviceCIDR: string | undefined;
  /** The apiserver's clock (epoch ms). */
  readonly now: number;
  /** Renew this apiserver's Lease (the periodic pass; passes woken by changes do not). */
  readonly renew: boolean;
  /** This apiserver is stopping: delete its Lease and take its address out. */
  readonly leaving: boolean;
  readonly leaseDurationSeconds: number;
}

/** One write of the plan: the event and what it is for (logged). */
export interface SystemWrite {
  readonly key: string;
  readonly body: EventBody;
  readonly what: string;
}

const ipv4ToNumber = (ip: string): number => ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
const numberToIpv4 = (n: number): string => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');

/** The address kube reserves for the `kubernetes` Service: the first of the range (`GetIndexedIP(range, 1)`), e.g. 10.96.0.1. */
export const kubernetesServiceIP = (serviceCIDR: string): string => {
  const [base = '', bits = '32'] = serviceCIDR.split('/');
  const size = 2 ** (32 - Number(bits));
  return numberToIpv4(ipv4ToNumber(base) - (ipv4ToNumber(base) % size) + 1);
};

/**
 * The address kubeadm gives the `kube-dns` Service: the tenth of the range
 * (`GetIndexedIP(range, 10)`), e.g. 10.96.0.10; undefined when the range is too small to
 * hold it (kubeadm refuses such a range).
 */
export const kubeDnsServiceIP = (serviceCIDR: string): string | undefined => {
  const [base = '', bits = '32'] = serviceCIDR.split('/');
  const size = 2 ** (32 - Number(bits));
  // The tenth address must not be the range's last (its broadcast address).
  if (size < 12) return undefined;
  return numberToIpv4(ipv4ToNumber(base) - (ipv4ToNumber(base) % size) + 10);
};

/** kube's MicroTime text (RFC 3339 with microseconds). */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** Whether `lease` was renewed within its duration as of `now`. */
export const isLive = (lease: Lease, now: number): boolean => {
  const renewed = Date.parse(lease.spec?.renewTime ?? '');
  return Number.isFinite(renewed) && renewed + (lease.spec?.leaseDurationSeconds ?? 0) * 1000 > now;
};

/** The object as the apiserver would store it (defaults applied, validated), for comparing and writing. */
const admitted = <T extends KubeObject>(object: T, current?: KubeObject): T => {
  const resource = resourceOfKind(object.kind as Kind);
  const options = { resource, body: structuredClone(object), fieldValidation: 'Strict' as const, namespace: object.metadata.namespace };
  return (current ? admitUpdate({ ...options, name: object.metadata.name, current }) : admitCreate(options)).object as T;
};

const created = (object: KubeObject, what: string): SystemWrite => ({ key: objectKey(object), body: { type: 'ObjectCreated', object: admitted(object) }, what });
const updated = (object: KubeObject, current: KubeObject, what: string): SystemWrite => ({
  key: objectKey(object),
  body: {
    type: 'ObjectUpdated',
    object: admitted({ ...object, metadata: { ...current.metadata, ...object.metadata } } as KubeObject, current),
    expectedResourceVersion: current.metadata.resourceVersion ?? null,
    subresource: null,
  },
  what,
});
const deleted = (object: KubeObject, what: string): SystemWrite => ({
  key: objectKey(object),
  body: {
    type: 'ObjectDeleted',
    kind: object.kind,
    namespace: object.metadata.namespace ?? null,
    name: object.metadata.name,
    expectedResourceVersion: object.metadata.resourceVersion ?? null,
    uid: object.metadata.uid ?? null,
    propagationPolicy: null,
    gracePeriodSeconds: null,
  },
  what,
});

/** `createOrUpdateMasterServiceIfNeeded`: created when missing, left alone once it exists (as kube since 1.17). */
const planService = (view: View, self: ApiserverIdentity, serviceCIDR: string | undefined): SystemWrite[] => {
  if (serviceCIDR === undefined || view.get(objectKey({ kind: 'Service', metadata: KUBERNETES_SERVICE }))) return [];
  const service: Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { ...KUBERNETES_SERVICE, labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: {
      type: 'ClusterIP',
      clusterIP: kubernetesServiceIP(serviceCIDR),
      ipFamilyPolicy: 'SingleStack',
      sessionAffinity: 'None',
      ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: self.port }],
    },
  };
  return [created(service, 'the kubernetes Service')];
};

/** kubeadm's CoreDNS Service (`cmd/kubeadm/app/phases/addons/dns/manifests.go`): created when missing, then left to the user, as the kubernetes Service. */
const planDnsService = (view: View, serviceCIDR: string | undefined): SystemWrite[] => {
  const clusterIP = serviceCIDR === undefined ? undefined : kubeDnsServiceIP(serviceCIDR);
  if (clusterIP === undefined || view.get(objectKey({ kind: 'Service', metadata: KUBE_DNS_SERVICE }))) return [];
  // Not before its namespace exists: the create would be refused.
  if (!view.get(objectKey({ kind: 'Namespace', metadata: { name: KUBE_DNS_SERVICE.namespace } }))) return [];
  const service: Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      ...KUBE_DNS_SERVICE,
      labels: { 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' },
      annotations: { 'prometheus.io/port': '9153', 'prometheus.io/scrape': 'true' },
    },
    spec: {
      type: 'ClusterIP',
      clusterIP,
      selector: { 'k8s-app': 'kube-dns' },
      ports: [
        { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
        { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
        { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
      ],
    },
  };
  return [created(service, 'the kube-dns Service')];
};

const ownLease = (self: ApiserverIdentity, now: number, durationSeconds: number, current: Lease | undefined): Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: {
    name: self.leaseName,
    namespace: LEASE_NAMESPACE,
    labels: { [IDENTITY_LABEL]: IDENTITY_VALUE, 'kubernetes.io/hostname': self.hostname },
    annotations: { [ADDRESS_ANNOTATION]: self.address, [PORT_ANNOTATION]: String(self.port) },
  },
  spec: {
    holderIdentity: self.holderIdentity,
    leaseDurationSeconds: durationSeconds,
    acquireTime: current?.spec?.holderIdentity === self.holderIdentity && current.spec.acquireTime ? current.spec.acquireTime : microTime(now),
    renewTime: microTime(now),
  },
});

/** The apiservers' Leases in `kube-system`. */
const apiserverLeases = (view: View): Lease[] =>
  (view.list('Lease', LEASE_NAMESPACE) as Lease[]).filter((lease) => lease.metadata.labels?.[IDENTITY_LABEL] === IDENTITY_VALUE);

interface Member {
  readonly name: string;
  readonly address: string;
  readonly port: number;
}

const memberOf = (lease: Lease): Member | undefined => {
  const address = lease.metadata.annotations?.[ADDRESS_ANNOTATION] ?? '';
  const port = Number(lease.metadata.annotations?.[PORT_ANNOTATION]);
  return isIP(address) !== 0 && Number.isInteger(port) && port > 0 && port < 65536 ? { name: lease.metadata.name, address, port } : undefined;
};

/**
 * The Endpoints and EndpointSlice for `members` (every live apiserver), as kube's
 * `EndpointsAdapter.Sync`: one subset, addresses sorted. kube's apiservers share one secure
 * port; when logplane's differ, the port is the one of the first member by Lease name, so
 * every apiserver computes the same objects and none undoes another's write.
 */
const planEndpoints = (view: View, self: ApiserverIdentity, members: readonly Member[]): SystemWrite[] => {
  const family = isIP(self.address) === 6 ? 6 : 4;
  const ours = members.filter((m) => isIP(m.address) === family).sort((a, b) => a.name.localeCompare(b.name));
  const port = ours[0]?.port ?? self.port;
  const addresses = [...new Set(ours.map((m) => m.address))].sort();
  const writes: SystemWrite[] = [];
  const endpointsWanted = admitted<Endpoints>({
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { ...KUBERNETES_SERVICE, labels: { [SKIP_MIRROR_LABEL]: 'true' } },
    subsets: [{ ...(addresses.length > 0 ? { addresses: addresses.map((ip) => ({ ip })) } : {}), ports: [{ name: 'https', port, protocol: 'TCP' }] }],
  });
  const endpoints = view.get(objectKey(endpointsWanted)) as Endpoints | undefined;
  if (!endpoints) writes.push(created(endpointsWanted, 'the kubernetes Endpoints'));
  else if (!sameJson(endpoints.subsets ?? [], endpointsWanted.subsets ?? []) || !sameJson(endpoints.metadata.labels ?? {}, endpointsWanted.metadata.labels)) {
    writes.push(updated(endpointsWanted, endpoints, 'the kubernetes Endpoints'));
  }
  const sliceWanted = admitted<EndpointSlice>({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { ...KUBERNETES_SERVICE, labels: { [SERVICE_NAME_LABEL]: KUBERNETES_SERVICE.name } },
    addressType: family === 6 ? 'IPv6' : 'IPv4',
    endpoints: addresses.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: [{ name: 'https', port, protocol: 'TCP' }],
  });
  const slice = view.get(objectKey(sliceWanted)) as EndpointSlice | undefined;
  if (!slice) writes.push(created(sliceWanted, 'the kubernetes EndpointSlice'));
  else if (slice.addressType !== sliceWanted.addressType) {
    // The address type is immutable: a slice of the other family is replaced (the next pass creates it).
    writes.push(deleted(slice, 'the kubernetes EndpointSlice of another address family'));
  } else if (
    !sameJson(slice.endpoints, sliceWanted.endpoints) ||
    !sameJson(slice.ports ?? [], sliceWanted.ports ?? []) ||
    !sameJson(slice.metadata.labels ?? {}, sliceWanted.metadata.labels)
  ) {
    writes.push(updated(sliceWanted, slice, 'the kubernetes EndpointSlice'));
  }
  return writes;
};

/** The writes that bring the system objects to what `input` says they should be (none when they are). */
export const planSystemObjects = (input: PlanInput): SystemWrite[] => {
  const { view, self, now, leaseDurationSeconds } = input;
  const leases = apiserverLeases(view);
  const current = leases.find((lease) => lease.metadata.name === self.leaseName);
  const writes: SystemWrite[] = [];
  if (input.leaving) {
    if (current) writes.push(deleted(current, 'this apiserver’s Lease (stopping)'));
  } else {
    writes.push(...planService(view, self, input.serviceCIDR));
    writes.push(...planDnsService(view, input.serviceCIDR));
    const wanted = ownLease(self, now, leaseDurationSeconds, current);
    if (!current) writes.push(created(wanted, 'this apiserver’s Lease'));
    else if (input.renew || !isLive(current, now) || !sameJson(current.metadata.annotations ?? {}, wanted.metadata.annotations)) {
      writes.push(updated(wanted, current, 'this apiserver’s Lease (renewed)'));
    }
  }
  const others = leases.filter((lease) => lease.metadata.name !== self.leaseName);
  for (const lease of others) if (!isLive(lease, now) && !lease.metadata.deletionTimestamp) writes.push(deleted(lease, `the expired Lease ${lease.metadata.name}`));
  const members = others.filter((lease) => isLive(lease, now)).flatMap((lease) => memberOf(lease) ?? []);
  if (!input.leaving) members.push({ name: self.leaseName, address: self.address, port: self.port });
  writes.push(...planEndpoints(view, self, members));
  return writes;
};
