/**
 * The links of a topology, from the objects alone: owners to what they own, Services to the
 * Pods their selector matches, Pods to the Nodes they run on. Pure: no DOM, no requests.
 */
import type { KubeObject } from './api.ts';

/** A link of the topology: `from` owns, selects or runs `to`. */
export interface TopologyEdge {
  readonly from: string;
  readonly to: string;
  readonly relation: 'owns' | 'selects' | 'runs on';
}

/** An object's key, as history keys read: `Kind/namespace/name`. */
export const keyOf = (kind: string, object: KubeObject): string => `${kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;

const matches = (selector: unknown, labels: Readonly<Record<string, string>> | undefined): boolean => {
  if (typeof selector !== 'object' || selector === null) return false;
  const entries = Object.entries(selector as Record<string, unknown>);
  return entries.length > 0 && entries.every(([name, value]) => labels !== undefined && Object.hasOwn(labels, name) && labels[name] === value);
};

/** The links between `objects` (each with its kind): ownership, Service selection, Pod placement. */
export const topologyEdges = (objects: readonly { kind: string; object: KubeObject }[]): TopologyEdge[] => {
  const keys = new Set(objects.map(({ kind, object }) => keyOf(kind, object)));
  const edges: TopologyEdge[] = [];
  for (const { kind, object } of objects) {
    const key = keyOf(kind, object);
    for (const owner of object.metadata.ownerReferences ?? []) {
      const ownerKey = `${owner.kind}/${object.metadata.namespace ?? ''}/${owner.name}`;
      if (keys.has(ownerKey)) edges.push({ from: ownerKey, to: key, relation: 'owns' });
    }
    if (kind === 'Pod') {
      const node = object.spec?.['nodeName'];
      if (typeof node === 'string' && keys.has(`Node//${node}`)) edges.push({ from: key, to: `Node//${node}`, relation: 'runs on' });
      for (const service of objects.filter((o) => o.kind === 'Service' && o.object.metadata.namespace === object.metadata.namespace)) {
        if (matches(service.object.spec?.['selector'], object.metadata.labels)) edges.push({ from: keyOf('Service', service.object), to: key, relation: 'selects' });
      }
    }
  }
  return edges;
};
