/**
 * The history pages: why an object is as it is (its causation chains, with the scheduler's
 * reasons for a binding), the audit feed, the diff between two moments, and replay.
 */
import { get, streamLines } from '../api.ts';
import { h, replace } from '../dom.ts';
import type { Resource } from '../resources.ts';
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
}

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
  const resource = resources.find((r) => r.kind === kind);
  return resource ? h('a', { href: link(['object', resource.plural, namespace || '_', name], { at: position }) }, key) : key;
};

const timelineLink = (event: PositionedEvent): HTMLElement =>
  h('a', { href: link(['timeline'], { focus: String(event.time), ns: parseKey(event.key).namespace }), title: 'this moment on the timeline' }, new Date(event.time).toISOString());

const rationaleView = (rationale: Rationale): HTMLElement =>
  h(
    'div',
    { class: 'rationale', 'data-testid': 'rationale' },
    h('p', {}, `${rationale.feasibleNodes} of ${rationale.totalNodes} nodes feasible`),
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

/** Shows why `kind/namespace/name` is as it is: every causation chain, newest first. */
export const showWhy = (container: HTMLElement, resources: readonly Resource[], kind: string, namespace: string, name: string): (() => void) => {
  replace(container, h('h2', {}, `Why ${kind} ${namespace ? `${namespace}/` : ''}${name}`), h('p', { class: 'status' }, 'loading ...'));
  get<{ chains: readonly (readonly CauseLink[])[] }>(`/logplane/v1/why/${historyPath(kind, namespace, name)}`)
    .then(({ chains }) => {
      replace(
        container,
        h('h2', {}, `Why ${kind} ${namespace ? `${namespace}/` : ''}${name}`),
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
                h('div', { class: 'meta' }, timelineLink(cause.event), ' · position ', keyLink(resources, cause.event.key, cause.event.position), cause.event.decidedAt ? ` · decided at ${cause.event.decidedAt}` : ''),
                cause.rationale ? rationaleView(cause.rationale) : null,
              ),
            ),
          ),
        ),
      );
    })
    .catch(fail(container));
  return () => undefined;
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
