/**
 * The endpointslice controller (kube-controller-manager 1.32's, `pkg/controller/endpointslice`
 * and the `k8s.io/endpointslice` reconciler): for every Service with a selector (not
 * ExternalName), EndpointSlices labelled `kubernetes.io/service-name` and
 * `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`, owned by the
 * Service (the garbage collector removes them with it), of at most 100 endpoints each, one set
 * per address type and per list of resolved ports, and a placeholder slice with no endpoints
 * when the Service selects nothing. Terminating pods are listed with `terminating: true`
 * (and `ready: false` unless `publishNotReadyAddresses`).
 *
 * As kube's reconciler, it keeps churn low: an endpoint stays in the slice that holds it,
 * endpoints that are gone leave their slice (an emptied slice is deleted), and new ones fill
 * the slices being updated anyway, then the fullest unchanged slice with room for all of
 * them, then new slices. Where kube picks arbitrarily (a set's `PopAny`, a generated name)
 * this takes pods in name order and names a new slice `<service>-<hash of (service uid,
 * address type, slot)>` with the lowest free slot, so a decision is a pure function of the view.
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import type { EndpointSlice, EventBody, Pod, Service } from '../../schemas/index.ts';
import type { Controller, Decision } from '../runtime.ts';
import { controllerReferenceTo, deleteCommand, updateCommand } from '../replicaset/objects.ts';
import { HEADLESS_LABEL, serviceKeysIn } from '../endpoints/index.ts';
import { addressTypesOf, desiredGroups, endpointKey, groupId, type AddressType, type Endpoint, type EndpointGroup } from './desired.ts';

import { byName, MANAGED_BY_LABEL, nameGenerator, sameEndpoint, sameLabels, SERVICE_NAME_LABEL } from './slices.ts';

export { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from './slices.ts';
export const CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
/** kube-controller-manager's `--max-endpoints-per-slice` default. */
export const MAX_ENDPOINTS_PER_SLICE = 100;

const RESERVED_LABELS = new Set([SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_LABEL]);

/** `setEndpointSliceLabels`: the Service's labels (not the reserved ones), the headless label when it has no cluster IP, the service name and the manager. */
export const sliceLabels = (service: Service): Record<string, string> => {
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(service.metadata.labels ?? {})) if (!RESERVED_LABELS.has(key)) labels[key] = value;
  const clusterIP = service.spec.clusterIP;
  if (clusterIP === undefined || clusterIP === '' || clusterIP === 'None') labels[HEADLESS_LABEL] = '';
  labels[SERVICE_NAME_LABEL] = service.metadata.name;
  labels[MANAGED_BY_LABEL] = CONTROLLER_NAME;
  return labels;
};

const ownedBy = (slice: EndpointSlice, service: Service): boolean =>
  (slice.metadata.ownerReferences ?? []).some((ref) => ref.kind === 'Service' && ref.uid === service.metadata.uid && ref.controller === true);

/** The commands of one decision, collected per slice. */
interface Plan {
  readonly create: EndpointSlice[];
  readonly update: { current: EndpointSlice; next: EndpointSlice }[];
  readonly remove: EndpointSlice[];
}

const newSlice = (service: Service, name: string, labels: Record<string, string>, addressType: AddressType, ports: EndpointGroup['ports'], endpoints: Endpoint[]): EndpointSlice =>
  ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: service.metadata.namespace ?? 'default', labels, ownerReferences: [controllerReferenceTo(service)] },
    addressType,
    endpoints,
    ports: [...ports],
  }) as EndpointSlice;

/** `reconcileByPortMapping`: the slices of one group, against what they should hold. */
const reconcileGroup = (
  plan: Plan,
  service: Service,
  labels: Record<string, string>,
  group: EndpointGroup,
  existing: readonly EndpointSlice[],
  nextName: (addressType: AddressType) => string,
): void => {
  const desired = new Map(group.endpoints);
  const updating: { current: EndpointSlice; endpoints: Endpoint[] }[] = [];
  const unchanged: EndpointSlice[] = [];
  // 1. Keep the endpoints still wanted where they are (updated), drop the others.
  for (const slice of existing) {
    const endpoints: Endpoint[] = [];
    let changed = false;
    for (const endpoint of slice.endpoints ?? []) {
      const key = endpointKey(endpoint);
      const wanted = desired.get(key);
      if (wanted === undefined) continue;
      endpoints.push(wanted);
      if (!sameEndpoint(wanted, endpoint)) changed = true;
      desired.delete(key);
    }
    if (changed || endpoints.length !== (slice.endpoints ?? []).length) {
      if (endpoints.length === 0) plan.remove.push(slice);
      else updating.push({ current: slice, endpoints });
    } else if (!sameLabels(slice.metadata.labels, labels)) updating.push({ current: slice, endpoints });
    else unchanged.push(slice);
  }
  const remaining = [...desired.values()];
  // 2. Fill the slices being updated anyway, fullest first.
  for (const slice of [...updating].sort((a, b) => b.endpoints.length - a.endpoints.length || byName(a.current, b.current))) {
    while (remaining.length > 0 && slice.endpoints.length < MAX_ENDPOINTS_PER_SLICE) slice.endpoints.push(remaining.shift()!);
  }
  // 3. The rest: into the fullest unchanged slice with room for all of a chunk, else new slices.
  while (remaining.length > 0) {
    const chunk = remaining.splice(0, MAX_ENDPOINTS_PER_SLICE);
    const fits = unchanged
      .filter((slice) => (slice.endpoints ?? []).length + chunk.length <= MAX_ENDPOINTS_PER_SLICE)
      .sort((a, b) => (b.endpoints ?? []).length - (a.endpoints ?? []).length || byName(a, b))[0];
    if (fits !== undefined) {
      unchanged.splice(unchanged.indexOf(fits), 1);
      updating.push({ current: fits, endpoints: [...(fits.endpoints ?? []), ...chunk] });
    } else plan.create.push(newSlice(service, nextName(group.addressType), labels, group.addressType, group.ports, chunk));
  }
  for (const { current, endpoints } of updating) {
    plan.update.push({ current, next: { ...current, metadata: { ...current.metadata, labels }, endpoints } });
  }
};

/** The placeholder kube keeps when a Service selects no pods: no ports, no endpoints. */
const isPlaceholder = (slice: EndpointSlice): boolean => (slice.endpoints ?? []).length === 0 && (slice.ports ?? []).length === 0;

/** The slices this controller manages for the Service named by `key` (by label, as kube lists them). */
const managedSlices = (view: View, namespace: string, name: string): EndpointSlice[] =>
  (view.list('EndpointSlice', namespace) as EndpointSlice[])
    .filter((s) => s.metadata.labels?.[SERVICE_NAME_LABEL] === name && s.metadata.labels?.[MANAGED_BY_LABEL] === CONTROLLER_NAME)
    .sort(byName);

/** Commands that make the EndpointSlices of Service `key` match the view. */
export const decideEndpointSlices = (key: string, view: View): Decision => {
  const [, namespace = '', name = ''] = key.split('/');
  const service = view.get(key) as Service | undefined;
  // A Service's slices go with it through the garbage collector (they are owned); a selectorless
  // Service's are the user's (or the mirroring controller's); an ExternalName Service has none.
  if (!service || service.metadata.deletionTimestamp || !service.spec.selector || service.spec.type === 'ExternalName') return { commands: [] };
  const existing = managedSlices(view, namespace, name);
  const plan: Plan = { create: [], update: [], remove: [] };
  const labels = sliceLabels(service);
  const addressTypes = addressTypesOf(service);
  const nextName = nameGenerator(service, new Set((view.list('EndpointSlice', namespace) as EndpointSlice[]).map((s) => s.metadata.name)));
  const groups = desiredGroups(service, view.list('Pod', namespace) as Pod[], view);
  const owned = existing.filter((slice) => ownedBy(slice, service) && addressTypes.includes(slice.addressType as AddressType));
  // Slices of another incarnation of the Service, or of an address type it no longer has, go.
  plan.remove.push(...existing.filter((slice) => !owned.includes(slice)));
  for (const addressType of addressTypes) {
    const ofType = owned.filter((slice) => slice.addressType === addressType);
    const removedBefore = plan.remove.length;
    const createdBefore = plan.create.length;
    const wantedGroups = groups.filter((g) => g.addressType === addressType);
    const wantedIds = new Set(wantedGroups.map((g) => g.id));
    for (const group of wantedGroups) reconcileGroup(plan, service, labels, group, ofType.filter((s) => groupId(addressType, s.ports ?? []) === group.id), nextName);
    // Slices of a port list no pod resolves to any more go.
    plan.remove.push(...ofType.filter((s) => !wantedIds.has(groupId(addressType, s.ports ?? []))));
    // When no slice of this address type would be left, the placeholder stays (or is made).
    const removedNow = plan.remove.slice(removedBefore);
    if (ofType.length === removedNow.length && plan.create.length === createdBefore) {
      const placeholder = removedNow.find(isPlaceholder);
      if (placeholder !== undefined) {
        plan.remove.splice(plan.remove.indexOf(placeholder), 1);
        if (!sameLabels(placeholder.metadata.labels, labels)) plan.update.push({ current: placeholder, next: { ...placeholder, metadata: { ...placeholder.metadata, labels } } });
      } else plan.create.push(newSlice(service, nextName(addressType), labels, addressType, [], []));
    }
  }
  const commands: EventBody[] = [
    ...plan.create.map((object): EventBody => ({ type: 'ObjectCreated', object })),
    ...plan.update.map(({ current, next }) => updateCommand(current, next)),
    ...plan.remove.sort(byName).map((slice) => deleteCommand(slice)),
  ];
  return { commands };
};

const serviceKeysFor = (change: AppliedChange, view: View): string[] => {
  const [kind, namespace = ''] = change.key.split('/');
  switch (kind) {
    case 'Service':
      return [change.key];
    case 'EndpointSlice': {
      const labels = change.object.metadata.labels;
      return labels?.[MANAGED_BY_LABEL] === CONTROLLER_NAME && labels[SERVICE_NAME_LABEL] ? [`Service/${namespace}/${labels[SERVICE_NAME_LABEL]}`] : [];
    }
    case 'Pod':
      return serviceKeysIn(view, namespace);
    default:
      return [];
  }
};

/** Creates the endpointslice controller. */
export const createEndpointSliceController = (): Controller => ({
  name: 'endpointslice',
  keysFor: serviceKeysFor,
  initialKeys: (view) => view.list('Service').map((s) => `Service/${s.metadata.namespace}/${s.metadata.name}`),
  decide: (key, view) => decideEndpointSlices(key, view),
});
