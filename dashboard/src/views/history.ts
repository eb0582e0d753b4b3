/**
 * The history pages: why an object is as it is (its causation chains, with the scheduler's
 * reasons for a binding), the audit feed, the diff between two moments, and replay.
 */
import cytoscape from 'cytoscape';
import { get, streamLines } from '../api.ts';
import { h, replace } from '../dom.ts';
import { resourceOfKindRef, routeNameOf, type Resource } from '../resources.ts';
import { currentRoute, link, navigate } from '../route.ts';
import { parseKey } from '../timeline-model.ts';
import { historyPath } from './object.ts';

interface PositionedEvent {
  readonly id: string;
  readonly key: string;
  readonly eventType: string;
  readonly time: number;
  readonly actor: { readonly type: string; readonly name: string };
  readonly verdict: { readonly type: string; readonly message?: string };
  readonly position: string;
  readonly decidedAt: string | null;
}

interface Rationale {
  readonly filtered: readonly { node: string; reasons: readonly string[] }[];
  readonly scores: readonly { node: string; score: number; plugins: readonly { name: string; score: number }[] }[];
  readonly feasibleNodes: number;
  readonly totalNodes: number;
  /** The preemption the binding followed (schema v9), absent (or null) otherwise. */
  readonly preemption?: Preemption | null;
}

interface Preemption {
  readonly nominatedNode: string;
  readonly reason: string;
  readonly victims: readonly { namespace: string; name: string; uid: string | null; priority: number }[];
}

/** The preemption a binding followed, as `logplane why` prints it. */
const preemptionView = (preemption: Preemption): HTMLElement =>
  h(
    'p',
    { class: 'preemption', 'data-testid': 'preemption' },
    `preempted ${preemption.victims.length} pod${preemption.victims.length === 1 ? '' : 's'} on node "${preemption.nominatedNode}"`,
    preemption.victims.length > 0 ? `: ${preemption.victims.map((v) => `${v.namespace}/${v.name} (priority ${v.priority})`).join(', ')}` : '',
    `; because ${preemption.reason}`,
  );

interface CauseLink {
  readonly event: PositionedEvent;
  readonly rationale?: Rationale;
  readonly summary: string;
}

const fail = (target: HTMLElement) => (error: Error): void => {
  replace(target, h('p', { class: 'status error' }, error.message));
};

/** A link to the object an event key names, as it was at `position`. */
const keyLink = (resources: readonly Resource[], key: string, position: string): HTMLElement | string => {
  const { kind, namespace, name } = parseKey(key);
  const resource = resourceOfKindRef(resources, kind);
  const text = `${key} at ${position}`;
  return resource ? h('a', { href: link(['object', routeNameOf(resource), namespace || '_', name], { at: position }), title: 'the object as it was then' }, text) : text;
};

const timelineLink = (event: PositionedEvent): HTMLElement =>
  h('a', { href: link(['timeline'], { focus: String(event.time), ns: parseKey(event.key).namespace }), title: 'this moment on the timeline' }, new Date(event.time).toISOString());

const rationaleView = (rationale: Rationale): HTMLElement =>
  h(
    'div',
    { class: 'rationale', 'data-testid': 'rationale' },
    h('p', {}, `${rationale.feasibleNodes} of ${rationale.totalNodes} nodes feasible`),
    rationale.preemption ? preemptionView(rationale.preemption) : null,
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, h('th', {}, 'NODE'), h('th', {}, 'SCORE'), h('th', {}, 'PLUGINS'))),
      h(
        'tbody',
        {},
        rationale.scores.map((s) => h('tr', {}, h('td', {}, s.node), h('td', {}, String(s.score)), h('td', {}, s.plugins.map((p) => `${p.name} ${p.score}`).join(', ')))),
        rationale.filtered.map((f) => h('tr', { class: 'filtered' }, h('td', {}, f.node), h('td', {}, 'filtered'), h('td', {}, f.reasons.join('; ')))),
      ),
    ),
  );

interface ReconcileReply {
  readonly commands: readonly unknown[];
  readonly recorded: readonly unknown[];
  readonly identical: boolean;
}

/**
 * A button that re-runs `controller`'s decision for `key` on the view at `at` (the position
 * the decision read) and shows the commands it gives now beside the ones it gave then.
 */
const rerunButton = (controller: string, key: string, at: string): HTMLElement => {
  const result = h('div', { class: 'rerun' });
  const button = h('button', { type: 'button', 'data-testid': 'rerun' }, `Re-run the ${controller} decision at ${at}`);
  button.addEventListener('click', () => {
    button.disabled = true;
    get<ReconcileReply>(`/logplane/v1/debug/reconcile?${new URLSearchParams({ controller, key, at }).toString()}`)
      .then((reply) =>
        replace(
          result,
          h('p', { 'data-testid': 'rerun-verdict', class: reply.identical ? 'same' : 'error' }, reply.identical ? 'Same commands as it appended then.' : 'Different commands from the ones it appended then.'),
          h('div', { class: 'side-by-side' }, h('div', {}, h('h4', {}, 'now'), h('pre', {}, JSON.stringify(reply.commands, null, 2))), h('div', {}, h('h4', {}, 'then'), h('pre', {}, JSON.stringify(reply.recorded, null, 2)))),
        ),
      )
      .catch(fail(result))
      .finally(() => {
        button.disabled = false;
      });
  });
  return h('div', {}, button, result);
};

/**
 * The causation chains as one graph (cytoscape): an event per node, an edge from each event
 * to its cause, the newest events on top; clicking an event opens its object at its moment.
 */
const causationGraph = (target: HTMLElement, resources: readonly Resource[], chains: readonly (readonly CauseLink[])[]): (() => void) => {
  const nodes = new Map<string, CauseLink>();
  const edges = new Set<string>();
  for (const chain of chains) {
    chain.forEach((cause, index) => {
      nodes.set(cause.event.id, cause);
      const next = chain[index + 1];
      if (next) edges.add(`${cause.event.id}>${next.event.id}`);
    });
  }
  const heads = new Set(chains.map((chain) => chain[0]?.event.id).filter((id): id is string => id !== undefined));
  const graph = cytoscape({
    container: target,
    elements: [
      ...[...nodes.values()].map((cause) => ({
        data: { id: cause.event.id, label: `${cause.summary}\n${new Date(cause.event.time).toISOString()} · ${cause.event.position}` },
        classes: cause.event.verdict.type === 'rejected' ? 'rejected' : heads.has(cause.event.id) ? 'head' : '',
      })),
      ...[...edges].map((edge) => {
        const [source, targetId] = edge.split('>');
        return { data: { id: edge, source: source!, target: targetId! } };
      }),
    ],
    layout: { name: 'breadthfirst', directed: true, roots: [...heads], spacingFactor: 1.1, padding: 10 },
    style: [
      {
        selector: 'node',
        style: {
          shape: 'round-rectangle',
          label: 'data(label)',
          'text-wrap': 'wrap',
          'text-max-width': '260px',
          'text-valign': 'center',
          'font-size': 10,
          width: 280,
          height: 48,
          'background-color': '#ffffff',
          'border-width': 1,
          'border-color': '#7d8794',
        },
      },
      { selector: 'node.head', style: { 'border-color': '#2e8540', 'border-width': 2 } },
      { selector: 'node.rejected', style: { 'border-color': '#a4262c', 'border-width': 2 } },
      { selector: 'edge', style: { width: 1.5, 'line-color': '#7d8794', 'target-arrow-color': '#7d8794', 'target-arrow-shape': 'triangle', 'curve-style': 'bezier' } },
    ],
    userZoomingEnabled: true,
    boxSelectionEnabled: false,
  });
  graph.on('tap', 'node', (event) => {
    const cause = nodes.get(event.target.id() as string);
    if (!cause) return;
    const { kind, namespace, name } = parseKey(cause.event.key);
    const resource = resourceOfKindRef(resources, kind);
    if (resource) navigate(link(['object', routeNameOf(resource), namespace || '_', name], { at: cause.event.position }));
  });
  return () => graph.destroy();
};

/** Shows why `kind/namespace/name` is as it is: every causation chain, newest first. */
export const showWhy = (container: HTMLElement, resources: readonly Resource[], kind: string, namespace: string, name: string): (() => void) => {
  replace(container, h('h2', {}, `Why ${kind} ${namespace ? `${namespace}/` : ''}${name}`), h('p', { class: 'status' }, 'loading ...'));
  let destroyGraph: () => void = () => undefined;
  let stopped = false;
  get<{ chains: readonly (readonly CauseLink[])[] }>(`/logplane/v1/why/${historyPath(kind, namespace, name)}`)
    .then(({ chains }) => {
      if (stopped) return;
      const graph = h('div', { class: 'causation-graph', 'data-testid': 'causation-graph' });
      replace(
        container,
        h('h2', {}, `Why ${kind} ${namespace ? `${namespace}/` : ''}${name}`),
        graph,
        h('h3', {}, 'Chains'),
        chains.map((chain) =>
          h(
            'ol',
            { class: 'chain' },
            chain.map((cause, index) =>
              h(
                'li',
                { class: `cause ${cause.event.verdict.type}` },
                index > 0 ? h('span', { class: 'arrow' }, '← ') : null,
                h('strong', {}, cause.summary),
                h('div', { class: 'meta' }, timelineLink(cause.event), ' · ', keyLink(resources, cause.event.key, cause.event.position), cause.event.decidedAt ? ` · decided at ${cause.event.decidedAt}` : ''),
                cause.rationale ? rationaleView(cause.rationale) : null,
                cause.event.decidedAt && cause.event.actor.type === 'controller' ? rerunButton(cause.event.actor.name, cause.event.key, cause.event.decidedAt) : null,
              ),
            ),
          ),
        ),
      );
      destroyGraph = causationGraph(graph, resources, chains);
      graph.dataset['nodes'] = String(new Set(chains.flat().map((c) => c.event.id)).size);
    })
    .catch(fail(container));
  return () => {
    stopped = true;
    destroyGraph();
  };
};

/** Shows the audit feed (who changed what, when, with which verdict), filtered by the page's query. */
export const showAudit = (container: HTMLElement, resources: readonly Resource[]): (() => void) => {
  const query = currentRoute().query;
  const field = (name: string, placeholder: string): HTMLInputElement => h('input', { name, placeholder, value: query.get(name) ?? '' });
  const all = h('input', { type: 'checkbox', name: 'all', checked: query.get('all') === 'true' });
  const form = h('form', { class: 'filters' }, field('user', 'user, e.g. admin'), field('kind', 'kind, e.g. Deployment'), field('since', 'since, e.g. 10m ago'), field('until', 'until'), h('label', {}, all, ' controllers and nodes too'), h('button', { type: 'submit' }, 'Filter'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    navigate(link(['audit'], { ...Object.fromEntries(['user', 'kind', 'since', 'until'].map((n) => [n, String(data.get(n) ?? '')])), all: all.checked ? 'true' : '' }));
  });
  const body = h('div', {}, h('p', { class: 'status' }, 'loading ...'));
  replace(container, h('h2', {}, 'Audit'), form, body);
  const params = new URLSearchParams({ limit: '500' });
  for (const name of ['user', 'kind', 'since', 'until', 'all']) {
    const value = query.get(name);
    if (value) params.set(name, value);
  }
  get<{ events: readonly PositionedEvent[] }>(`/logplane/v1/audit?${params.toString()}`)
    .then(({ events }) =>
      replace(
        body,
        h(
          'table',
          { class: 'audit' },
          h('thead', {}, h('tr', {}, ['TIME', 'ACTOR', 'EVENT', 'OBJECT (AT ITS POSITION)', 'VERDICT'].map((t) => h('th', {}, t)))),
          h(
            'tbody',
            {},
            events.map((e) =>
              h('tr', { class: e.verdict.type }, h('td', {}, timelineLink(e)), h('td', {}, `${e.actor.type} ${e.actor.name}`), h('td', {}, e.eventType), h('td', {}, keyLink(resources, e.key, e.position)), h('td', {}, e.verdict.type === 'rejected' ? `rejected: ${e.verdict.message ?? ''}` : 'accepted')),
            ),
          ),
        ),
        events.length === 0 ? h('p', { class: 'empty' }, 'No events match.') : null,
      ),
    )
    .catch(fail(body));
  return () => undefined;
};

interface ClusterDiff {
  readonly from: string;
  readonly to: string;
  readonly created: readonly { kind?: string; metadata: { name: string; namespace?: string } }[];
  readonly deleted: readonly { kind?: string; metadata: { name: string; namespace?: string } }[];
  readonly changed: readonly {
    after: { kind?: string; metadata: { name: string; namespace?: string } };
    diff: readonly { type: string; path: string; value?: unknown; from?: unknown; to?: unknown }[];
  }[];
}

const nameOf = (o: { kind?: string; metadata: { name: string; namespace?: string } }): string => `${o.kind ?? ''} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
const json = (value: unknown): string => JSON.stringify(value) ?? 'undefined';

/** Shows what was created, changed (field by field) and deleted between the moments `from` and `to`. */
export const showDiff = (container: HTMLElement): (() => void) => {
  const query = currentRoute().query;
  const from = h('input', { name: 'from', placeholder: 'from: a position, a time, 10m ago', value: query.get('from') ?? '' });
  const to = h('input', { name: 'to', placeholder: 'to (default now)', value: query.get('to') ?? '' });
  const form = h('form', { class: 'filters' }, from, to, h('button', { type: 'submit' }, 'Compare'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    navigate(link(['diff'], { from: from.value, to: to.value }));
  });
  const body = h('div', {});
  replace(container, h('h2', {}, 'Diff between two moments'), form, body);
  if (!query.get('from')) return () => undefined;
  const params = new URLSearchParams({ from: query.get('from')! });
  if (query.get('to')) params.set('to', query.get('to')!);
  get<ClusterDiff>(`/logplane/v1/diff?${params.toString()}`)
    .then((diff) =>
      replace(
        body,
        h('p', { class: 'status' }, `from position ${diff.from} to ${diff.to}`),
        h('h3', {}, `Created (${diff.created.length})`),
        h('ul', { class: 'created' }, diff.created.map((o) => h('li', {}, nameOf(o)))),
        h('h3', {}, `Changed (${diff.changed.length})`),
        h(
          'ul',
          { class: 'changed' },
          diff.changed.map((c) =>
            h(
              'li',
              {},
              nameOf(c.after),
              h('ul', { class: 'fields' }, c.diff.map((d) => h('li', { class: d.type }, d.type === 'changed' ? `${d.path}: ${json(d.from)} → ${json(d.to)}` : `${d.type} ${d.path}: ${json(d.value)}`))),
            ),
          ),
        ),
        h('h3', {}, `Deleted (${diff.deleted.length})`),
        h('ul', { class: 'deleted' }, diff.deleted.map((o) => h('li', {}, nameOf(o)))),
      ),
    )
    .catch(fail(body));
  return () => undefined;
};

/** Starts a replay into a fresh projection and shows its progress and result (admins only; the server says so otherwise). */
export const showReplay = (container: HTMLElement): (() => void) => {
  const controller = new AbortController();
  const progress = h('progress', { max: '1', value: '0' });
  const result = h('div', { class: 'replay-result' });
  const button = h('button', { type: 'button' }, 'Replay the log into a fresh projection');
  button.addEventListener('click', () => {
    button.disabled = true;
    replace(result);
    streamLines(
      'POST',
      '/logplane/v1/replay',
      (line) => {
        const message = JSON.parse(line) as { type: string; applied?: number; total?: number; events?: number; eventsPerSecond?: number; stateHash?: string; liveStateHash?: string | null; position?: string; message?: string };
        if (message.type === 'progress') {
          progress.max = message.total || 1;
          progress.value = message.applied ?? 0;
        } else if (message.type === 'result') {
          progress.value = progress.max;
          const same = message.liveStateHash === message.stateHash;
          replace(result, h('p', { 'data-testid': 'replay-result' }, `${message.events} events replayed (${Math.round(message.eventsPerSecond ?? 0)} events/s) to position ${message.position}; state hash ${message.stateHash} ${same ? '= the live projection\'s' : `≠ the live ${message.liveStateHash ?? '(not compared)'}`}`));
        } else if (message.type === 'error') {
          replace(result, h('p', { class: 'status error' }, message.message ?? 'replay failed'));
        }
      },
      controller.signal,
    )
      .catch(fail(result))
      .finally(() => {
        button.disabled = false;
      });
  });
  replace(container, h('h2', {}, 'Replay'), h('p', {}, 'Rebuilds a projection from offset 0 of the log and compares its state hash with the live one.'), button, ' ', progress, result);
  return () => controller.abort();
};
