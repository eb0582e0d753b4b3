/**
 * The endpointslice-mirroring controller (kube-controller-manager 1.32's
 * `pkg/controller/endpointslicemirroring`): for every Endpoints object whose Service exists
 * and has no selector, and that is not labelled `endpointslice.kubernetes.io/skip-mirror:
 * "true"` (nor a leader-election lock), EndpointSlices managed by
 * `endpointslicemirroring-controller.k8s.io` that mirror it, controlled by the Endpoints (as
 * kube's `newEndpointSlice` sets), with its labels and annotations (but the trigger time and
 * kubectl's last-applied configuration), one set per address type and port list of at most
 * 1000 endpoints each. They are deleted when the Endpoints goes, stops being mirrored, or its
 * Service goes or gets a selector. Addresses left out are a Warning `AddressesNotMirrored`.
 * Where kube generates a name, this names a slice `<endpoints>-<hash of (uid, address type,
 * slot)>` (see `nameGenerator`), so a decision is a pure function of the view.
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import type { EndpointSlice, Endpoints, EventBody, Service } from '../../schemas/index.ts';
import type { Controller, Decision } from '../runtime.ts';
import { withEvents } from '../events/index.ts';
import { controllerReferenceTo, deleteCommand, updateCommand } from '../replicaset/objects.ts';
import type { Endpoint } from '../endpointslice/desired.ts';
import { byName, MANAGED_BY_LABEL, nameGenerator, sameEndpoint, sameLabels, SERVICE_NAME_LABEL } from '../endpointslice/slices.ts';
import { sameJson } from '../../schemas/canonical-json.ts';
import { MAX_ENDPOINTS_PER_SUBSET, MIRRORING_CONTROLLER_NAME, mirroredAnnotations, mirroredGroups, mirroredLabels, shouldMirror } from './desired.ts';

export * from './desired.ts';

/** The slices this controller manages for the Endpoints `namespace/name` (by label, as kube lists them). */
const mirroredSlices = (view: View, namespace: string, name: string): EndpointSlice[] =>
  (view.list('EndpointSlice', namespace) as EndpointSlice[])
    .filter((s) => s.metadata.labels?.[SERVICE_NAME_LABEL] === name && s.metadata.labels?.[MANAGED_BY_LABEL] === MIRRORING_CONTROLLER_NAME)
    .sort(byName);

const ownedBy = (slice: EndpointSlice, endpoints: Endpoints): boolean =>
  (slice.metadata.ownerReferences ?? []).some((ref) => ref.kind === 'Endpoints' && ref.uid === endpoints.metadata.uid && ref.controller === true);

const sameEndpoints = (a: readonly Endpoint[], b: readonly Endpoint[]): boolean => a.length === b.length && a.every((endpoint, i) => sameEndpoint(endpoint, b[i]!));

const deleteAll = (slices: readonly EndpointSlice[]): Decision => ({ commands: slices.map((slice) => deleteCommand(slice)) });

/**
 * Whether `endpoints` is mirrored (`syncEndpoints`' checks): it exists, is to be mirrored
 * (`shouldMirror`), and its Service exists and has no selector.
 */
const isMirrored = (endpoints: Endpoints | undefined, view: View): endpoints is Endpoints => {
  if (!endpoints || endpoints.metadata.deletionTimestamp || !shouldMirror(endpoints)) return false;
  const service = view.get(`Service/${endpoints.metadata.namespace ?? 'default'}/${endpoints.metadata.name}`) as Service | undefined;
  return service !== undefined && !service.metadata.deletionTimestamp && !service.spec.selector;
};

/** Commands that make the mirrored EndpointSlices of Endpoints `key` match the view. */
export const decideMirroredSlices = (key: string, view: View, maxEndpointsPerSubset = MAX_ENDPOINTS_PER_SUBSET): Decision => {
  const [, namespace = '', name = ''] = key.split('/');
  const endpoints = view.get(key) as Endpoints | undefined;
  const existing = mirroredSlices(view, namespace, name);
  if (!isMirrored(endpoints, view)) return deleteAll(existing);
  const labels = mirroredLabels(endpoints);
  const annotations = mirroredAnnotations(endpoints);
  const nextName = nameGenerator(endpoints, new Set((view.list('EndpointSlice', namespace) as EndpointSlice[]).map((s) => s.metadata.name)));
  const owned = existing.filter((slice) => ownedBy(slice, endpoints));
  const creates: EventBody[] = [];
  const updates: EventBody[] = [];
  const removes: EndpointSlice[] = existing.filter((slice) => !owned.includes(slice));
  const used = new Set<EndpointSlice>();
  for (const group of mirroredGroups(endpoints, maxEndpointsPerSubset).groups) {
    const ofGroup = owned.filter((slice) => slice.addressType === group.addressType && sameJson(slice.ports ?? [], group.ports));
    for (let start = 0, slot = 0; start < group.endpoints.length; start += maxEndpointsPerSubset, slot++) {
      const chunk = group.endpoints.slice(start, start + maxEndpointsPerSubset);
      const current = ofGroup[slot];
      if (current === undefined) {
        const object = {
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: { name: nextName(group.addressType), namespace, labels, ...(Object.keys(annotations).length > 0 ? { annotations } : {}), ownerReferences: [controllerReferenceTo(endpoints)] },
          addressType: group.addressType,
          endpoints: chunk,
          ports: [...group.ports],
        } as EndpointSlice;
        creates.push({ type: 'ObjectCreated', object });
        continue;
      }
      used.add(current);
      if (sameEndpoints(current.endpoints ?? [], chunk) && sameLabels(current.metadata.labels, labels) && sameLabels(current.metadata.annotations, annotations)) continue;
      const metadata = { ...current.metadata, labels, annotations };
      updates.push(updateCommand(current, { ...current, metadata, endpoints: chunk } as EndpointSlice));
    }
  }
  removes.push(...owned.filter((slice) => !used.has(slice)));
  return { commands: [...creates, ...updates, ...removes.sort(byName).map((slice) => deleteCommand(slice))] };
};

/** The Endpoints keys a change wakes: the Endpoints itself, the Endpoints of a Service, the Endpoints of a mirrored slice. */
const endpointsKeysFor = (change: AppliedChange): string[] => {
  const [kind, namespace = '', name = ''] = change.key.split('/');
  switch (kind) {
    case 'Endpoints':
      return [change.key];
    case 'Service':
      return [`Endpoints/${namespace}/${name}`];
    case 'EndpointSlice': {
      const labels = change.object.metadata.labels;
      return labels?.[MANAGED_BY_LABEL] === MIRRORING_CONTROLLER_NAME && labels[SERVICE_NAME_LABEL] ? [`Endpoints/${namespace}/${labels[SERVICE_NAME_LABEL]}`] : [];
    }
    default:
      return [];
  }
};

/** Every Endpoints, and the Endpoints named by every mirrored slice (so slices left by a gone Endpoints go). */
const initialKeys = (view: View): string[] => {
  const keys = new Set((view.list('Endpoints') as Endpoints[]).map((e) => `Endpoints/${e.metadata.namespace}/${e.metadata.name}`));
  for (const slice of view.list('EndpointSlice') as EndpointSlice[]) {
    const labels = slice.metadata.labels;
    if (labels?.[MANAGED_BY_LABEL] === MIRRORING_CONTROLLER_NAME && labels[SERVICE_NAME_LABEL]) keys.add(`Endpoints/${slice.metadata.namespace}/${labels[SERVICE_NAME_LABEL]}`);
  }
  return [...keys].sort();
};

/** Creates the endpointslice-mirroring controller. */
export const createEndpointSliceMirroringController = (): Controller =>
  withEvents(
    { name: 'endpointslice-mirroring', keysFor: endpointsKeysFor, initialKeys, decide: (key, view) => decideMirroredSlices(key, view) },
    { component: 'endpointslice-mirroring-controller' },
    (key, view, _decision, recorder) => {
      const endpoints = view.get(key) as Endpoints | undefined;
      if (!isMirrored(endpoints, view)) return;
      const { skipped } = mirroredGroups(endpoints);
      if (skipped > 0) recorder.event(endpoints, 'Warning', 'AddressesNotMirrored', `${skipped} addresses in ${endpoints.metadata.name} Endpoints were not mirrored to EndpointSlices`);
    },
  );
