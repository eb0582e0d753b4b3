/**
 * The logplane dashboard: a login form (the token stays in this tab's sessionStorage), then
 * the cluster's resources as live tables and object pages, the timeline, why, audit, diff
 * and replay, and a time bar that puts every page into the past.
 */
import './style.css';
import { checkToken, get, whenUnauthorized, type KubeList } from './api.ts';
import { h, replace } from './dom.ts';
import { momentMillis, pastMoment } from './moment.ts';
import { discoverResources, resourceOfRoute, routeNameOf, type Resource } from './resources.ts';
import { currentRoute, link, navigate } from './route.ts';
import { clearToken, readToken, saveToken } from './session.ts';
import { showAudit, showDiff, showReplay, showWhy } from './views/history.ts';
import { showObject } from './views/object.ts';
import { showTable } from './views/table.ts';
import { showTimeline } from './views/timeline.ts';
import { showTopology } from './views/topology.ts';

const root = document.getElementById('app')!;

const showLogin = (message?: string): void => {
  const token = h('input', { type: 'password', name: 'token', autocomplete: 'current-password', placeholder: 'bearer token', required: true, 'aria-label': 'token' });
  const error = h('p', { class: 'status error', 'data-testid': 'login-error' }, message ?? '');
  const form = h(
    'form',
    { class: 'login', method: 'post', action: '#' },
    h('h1', {}, 'logplane'),
    h('p', {}, 'Log in with a token of this cluster (`logplane up` prints the admin token; it is also in the kubeconfig).'),
    token,
    h('button', { type: 'submit' }, 'Log in'),
    error,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = token.value.trim();
    void checkToken(value).then((ok) => {
      if (!ok) {
        error.textContent = 'The server refused this token.';
        return;
      }
      saveToken(value);
      void startApp();
    });
  });
  replace(root, form);
  token.focus();
};

/** The time bar: a slider from the cluster's first moment to now, a moment field, and "now". */
const timeBar = (clusterStart: number): HTMLElement => {
  const at = pastMoment();
  const now = Date.now();
  const atMillis = at === undefined ? now : momentMillis(at);
  const slider = h('input', { type: 'range', name: 'slider', min: String(clusterStart), max: String(now), step: '1', value: String(atMillis ?? now), 'aria-label': 'moment', 'data-testid': 'slider' });
  const shown = h('span', { class: 'moment', 'data-testid': 'moment' }, at === undefined ? 'now (live)' : atMillis !== undefined ? new Date(atMillis).toISOString() : at);
  const field = h('input', { name: 'at', placeholder: 'position (8.3), time, or 5m ago', value: at ?? '', 'aria-label': 'position or time' });
  const go = (value: string): void => navigate(link(currentRoute().path, { ...Object.fromEntries(currentRoute().query), at: value }));
  slider.addEventListener('input', () => {
    shown.textContent = new Date(Number(slider.value)).toISOString();
  });
  slider.addEventListener('change', () => go(Number(slider.value) >= Number(slider.max) ? '' : slider.value));
  const form = h('form', { class: 'timebar' }, slider, shown, field, h('button', { type: 'submit' }, 'Go'), h('button', { type: 'button', class: 'now' }, 'Now'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    go(field.value.trim());
  });
  form.querySelector('button.now')!.addEventListener('click', () => go(''));
  return form;
};

const namespaceSelect = (namespaces: readonly string[]): HTMLSelectElement => {
  const current = currentRoute().query.get('ns') ?? '';
  const select = h('select', { name: 'namespace', 'aria-label': 'namespace' }, h('option', { value: '' }, 'all namespaces'), namespaces.map((ns) => h('option', { value: ns, selected: ns === current }, ns)));
  select.addEventListener('change', () => navigate(link(currentRoute().path, { ...Object.fromEntries(currentRoute().query), ns: select.value })));
  return select;
};

const PAGES = [
  ['topology', 'Topology'],
  ['timeline', 'Timeline'],
  ['audit', 'Audit'],
  ['diff', 'Diff'],
  ['replay', 'Replay'],
] as const;

let cleanup: () => void = () => undefined;

const startApp = async (): Promise<void> => {
  let resources: Resource[];
  let namespaces: string[];
  let clusterStart: number;
  try {
    resources = await discoverResources();
    const list = await get<KubeList>('/api/v1/namespaces');
    namespaces = list.items.map((n) => n.metadata.name).sort();
    const created = list.items.map((n) => Date.parse(n.metadata.creationTimestamp ?? '')).filter((t) => !Number.isNaN(t));
    clusterStart = created.length > 0 ? Math.min(...created) : Date.now() - 3_600_000;
  } catch (error) {
    if (!readToken()) return;
    replace(root, h('p', { class: 'status error' }, `cannot reach the cluster: ${error instanceof Error ? error.message : String(error)}`));
    return;
  }
  const main = h('main', {});
  const header = h('header', {});
  const nav = h(
    'nav',
    {},
    h('h3', {}, 'Cluster'),
    h('ul', {}, resources.map((r) => h('li', {}, h('a', { href: link(['list', routeNameOf(r)]), 'data-plural': r.plural, 'data-route': routeNameOf(r) }, r.kind === 'Endpoints' ? 'Endpoints' : `${r.kind}s`)))),
    h('h3', {}, 'History'),
    h('ul', {}, PAGES.map(([path, title]) => h('li', {}, h('a', { href: link([path]) }, title)))),
  );
  const logout = h('button', { type: 'button', class: 'logout' }, 'Log out');
  logout.addEventListener('click', () => {
    cleanup();
    clearToken();
    showLogin();
  });
  replace(root, header, h('div', { class: 'body' }, nav, main));

  const render = (): void => {
    cleanup();
    const route = currentRoute();
    const namespace = route.query.get('ns') ?? '';
    const past = pastMoment();
    document.body.classList.toggle('past', past !== undefined);
    replace(
      header,
      h('a', { class: 'brand', href: link(['list', 'pods']) }, 'logplane'),
      namespaceSelect(namespaces),
      timeBar(clusterStart),
      past !== undefined ? h('span', { class: 'past-banner', 'data-testid': 'past-banner' }, 'viewing the past') : null,
      past !== undefined ? h('a', { class: 'diff-link', href: link(['diff'], { from: past, to: '', at: '' }) }, 'what changed since') : null,
      logout,
    );
    for (const a of nav.querySelectorAll<HTMLAnchorElement>('a[data-plural]')) a.href = link(['list', a.dataset['route']!]);
    for (const [index, a] of [...nav.querySelectorAll<HTMLAnchorElement>('a:not([data-plural])')].entries()) a.href = link([PAGES[index]![0]]);
    const [page = 'list', ...rest] = route.path;
        switch (page) {
      case 'list': {
        const resource = resourceOfRoute(resources, rest[0] ?? 'pods');
        cleanup = resource ? showTable(main, resource, namespace) : () => replace(main);
        if (!resource) replace(main, h('p', { class: 'status error' }, `the server serves no resource "${rest[0] ?? ''}"`));
        return;
      }
      case 'object': {
        const resource = resourceOfRoute(resources, rest[0]);
        const [, ns = '_', name = ''] = rest;
        if (!resource) {
          replace(main, h('p', { class: 'status error' }, `the server serves no resource "${rest[0] ?? ''}"`));
          cleanup = () => undefined;
          return;
        }
        cleanup = showObject(main, resources, resource, ns === '_' ? '' : ns, name);
        return;
      }
      case 'timeline':
        cleanup = showTimeline(main, resources, namespace);
        return;
      case 'topology':
        cleanup = showTopology(main, resources, namespace);
        return;
      case 'why': {
        const [kind = '', ns = '_', name = ''] = rest;
        cleanup = showWhy(main, resources, kind, ns === '_' ? '' : ns, name);
        return;
      }
      case 'audit':
        cleanup = showAudit(main, resources);
        return;
      case 'diff':
        cleanup = showDiff(main);
        return;
      case 'replay':
        cleanup = showReplay(main);
        return;
      default:
        replace(main, h('p', { class: 'status error' }, `no page "${page}"`));
        cleanup = () => undefined;
    }
  };
  window.onhashchange = render;
  render();
};

whenUnauthorized(() => {
  cleanup();
  showLogin('The session ended: log in again.');
});

if (readToken()) void startApp();
else showLogin();
