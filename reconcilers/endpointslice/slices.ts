/**
 * What the endpointslice and endpointslice-mirroring controllers share about the slices they
 * keep: comparing what is stored with what is wanted, ordering, and naming new slices.
 */
import { sameJson } from '../../schemas/canonical-json.ts';
import type { KubeObject } from '../../schemas/index.ts';
import { safeHash } from '../replicaset/objects.ts';
import type { AddressType, Endpoint } from './desired.ts';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';

/** The fields the controllers set on an endpoint, so what the apiserver stores compares with what is wanted. */
const normalized = (endpoint: Endpoint): unknown => ({
  addresses: endpoint.addresses,
  conditions: { ready: endpoint.conditions?.ready ?? null, serving: endpoint.conditions?.serving ?? null, terminating: endpoint.conditions?.terminating ?? null },
  hostname: endpoint.hostname ?? null,
  targetRef: endpoint.targetRef ? { kind: endpoint.targetRef.kind, namespace: endpoint.targetRef.namespace, name: endpoint.targetRef.name, uid: endpoint.targetRef.uid } : null,
  nodeName: endpoint.nodeName ?? null,
  zone: endpoint.zone ?? null,
});

/** Whether two endpoints hold the same fields the controllers set. */
export const sameEndpoint = (a: Endpoint, b: Endpoint): boolean => sameJson(normalized(a), normalized(b));

/** Whether two string maps (labels, annotations) hold the same entries, an absent map being empty. */
export const sameLabels = (a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean => {
  const sorted = (labels: Readonly<Record<string, string>>) => Object.entries(labels).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  return sameJson(sorted(a ?? {}), sorted(b ?? {}));
};

/** Orders objects by name. */
export const byName = (a: { metadata: { name: string } }, b: { metadata: { name: string } }): number => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0);

/**
 * Names new slices of `owner` (a Service, or the Endpoints mirrored): its name (cut to 58
 * characters, as kube's name generator cuts a generateName) and a hashed suffix of (owner uid,
 * address type, the lowest slot whose name is not in `existing`), so names are a pure function of the view.
 */
export const nameGenerator = (owner: KubeObject, existing: ReadonlySet<string>) => {
  const base = `${owner.metadata.name}-`.slice(0, 58);
  const taken = new Set(existing);
  return (addressType: AddressType): string => {
    for (let slot = 0; ; slot++) {
      const name = `${base}${safeHash(`${owner.metadata.uid ?? ''}/${addressType}/${slot}`, 5)}`;
      if (taken.has(name)) continue;
      taken.add(name);
      return name;
    }
  };
};
