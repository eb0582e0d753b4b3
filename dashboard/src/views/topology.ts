/**
 * The topology of a namespace (cytoscape): owners to what they own (Deployment → ReplicaSets
 * → Pods), Services to the Pods they select, Pods to their Nodes; now, or at the page's past
 * moment. Beside the graph, the same links as a list.
 */
import cytoscape from 'cytoscape';
import { get, type KubeObject } from '../api.ts';
import { h, replace } from '../dom.ts';
import { objectsAt, pastMoment } from '../moment.ts';
import { collectionPath, kindRefOfResource, resourceOfKindRef, routeNameOf, type Resource } from '../resources.ts';
import { link, navigate } from '../route.ts';
import { stateOf } from '../timeline-model.ts';
import { keyOf, topologyEdges } from '../topology-model.ts';

const TOPOLOGY_KINDS = ['Deployment', 'ReplicaSet', 'Pod', 'Service', 'Node'];

const loadObjects = async (resources: readonly Resource[], namespace: string, at: string | undefined): Promise<{ kind: string; object: KubeObject }[]> => {
  // By kind ref: core and apps kinds only, not a custom kind of the same name.
  const wanted = resources.filter((r) => TOPOLOGY_KINDS.includes(kindRefOfResource(r)));
  const lists = await Promise.all(
    wanted.map(async (resource) => {
      const ns = resource.namespaced ? namespace : '';
      const objects = at !== undefined ? (await objectsAt(at, kindRefOfResource(resource), ns || undefined)).objects : (await get<{ items: KubeObject[] }>(collectionPath(resource, ns))).items;
      return objects.map((object) => ({ kind: resource.kind, object }));
    }),
  );
  return lists.flat();
};

const TONE_COLOURS: Readonly<Record<string, string>> = { ok: '#cfead5', progress: '#fdf1c7', bad: '#f8d3d5', neutral: '#e3e7ec', gone: '#e3e7ec' };

/** Shows the topology of `namespace` ('' for all) in `container`; returns its cleanup. */
export const showTopology = (container: HTMLElement, resources: readonly Resource[], namespace: string): (() => void) => {
  const at = pastMoment();
  const graph = h('div', { class: 'causation-graph', 'data-testid': 'topology-graph' });
  const list = h('ul', { class: 'topology', 'data-testid': 'topology' });
  const status = h('p', { class: 'status' }, 'loading ...');
  replace(container, h('h2', {}, `Topology of ${namespace || 'all namespaces'}`), status, graph, h('h3', {}, 'Links'), list);
  let destroy: () => void = () => undefined;
  let stopped = false;
  loadObjects(resources, namespace, at)
    .then((objects) => {
      if (stopped) return;
      const edges = topologyEdges(objects);
      status.textContent = `${objects.length} objects${at !== undefined ? `, as they were at ${at}` : ', now'}`;
      replace(list, edges.map((e) => h('li', { 'data-from': e.from, 'data-to': e.to }, `${e.from} ${e.relation} ${e.to}`)));
      const cy = cytoscape({
        container: graph,
        elements: [
          ...objects.map(({ kind, object }) => ({
            data: { id: keyOf(kind, object), label: `${kind}\n${object.metadata.name}`, colour: TONE_COLOURS[stateOf(kind, object).tone] ?? '#ffffff' },
          })),
          ...edges.map((e, index) => ({ data: { id: `edge-${index}`, source: e.from, target: e.to, label: e.relation } })),
        ],
        layout: { name: 'breadthfirst', directed: true, spacingFactor: 1.2, padding: 10 },
        style: [
          {
            selector: 'node',
            style: { shape: 'round-rectangle', label: 'data(label)', 'text-wrap': 'wrap', 'text-valign': 'center', 'font-size': 9, width: 150, height: 36, 'background-color': 'data(colour)', 'border-width': 1, 'border-color': '#7d8794' },
          },
          { selector: 'edge', style: { width: 1.2, 'line-color': '#7d8794', 'target-arrow-color': '#7d8794', 'target-arrow-shape': 'triangle', 'curve-style': 'bezier', label: 'data(label)', 'font-size': 8 } },
        ],
        boxSelectionEnabled: false,
      });
      cy.on('tap', 'node', (event) => {
        const [kind = '', ns = '', ...name] = (event.target.id() as string).split('/');
        const resource = resourceOfKindRef(resources, kind);
        if (resource) navigate(link(['object', routeNameOf(resource), ns || '_', name.join('/')]));
      });
      destroy = () => cy.destroy();
    })
    .catch((error: Error) => {
      status.textContent = error.message;
      status.classList.add('error');
    });
  return () => {
    stopped = true;
    destroy();
  };
};
