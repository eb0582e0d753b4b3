/**
 * The timeline: every object's versions on one time axis (vis-timeline), a lane per object
 * nested under its owner, filtered by namespace, kind, label and actor or narrowed to one
 * object. Clicking a span opens the object as it was at that version.
 */
import { Timeline, type DataGroup, type DataItem } from 'vis-timeline/standalone';
import 'vis-timeline/styles/vis-timeline-graph2d.min.css';
import { get } from '../api.ts';
import { assertNever } from '../assert-never.ts';
import { joinPages, readPages, type HistoryPage } from '../history-pages.ts';
import { h, replace } from '../dom.ts';
import { momentMillis, pastMoment } from '../moment.ts';
import type { Resource } from '../resources.ts';
import { currentRoute, link, navigate } from '../route.ts';
import { buildTimeline, filterHistories, parseKey, type Mark, type ObjectHistory, type Version } from '../timeline-model.ts';

/** Owners with more children than this start folded. */
const FOLD_ABOVE = 50;
/** Versions asked for per page of the bulk history (the server's largest page). */
const PAGE_LIMIT = 10_000;
/** Pages read at most (ten million versions): past that the timeline says the history is too long. */
const MAX_PAGES = 1_000;

/**
 * The histories of every object of `namespace` ('' for every object of the cluster), the
 * deleted ones among them: the bulk history API, page by page.
 */
const loadHistories = async (namespace: string): Promise<ObjectHistory[]> => {
  const base = `/logplane/v1/history?limit=${PAGE_LIMIT}${namespace ? `&namespace=${encodeURIComponent(namespace)}` : ''}`;
  const pages = await readPages((token) => get<HistoryPage>(token === undefined ? base : `${base}&continue=${encodeURIComponent(token)}`), MAX_PAGES);
  return joinPages(pages);
};

const describe = (version: Version): string =>
  `${version.eventType} by ${version.actor.type} ${version.actor.name} at ${new Date(version.time).toISOString()}, position ${version.position}` +
  (version.verdict.type === 'rejected' ? ` — rejected: ${version.verdict.message}` : '');

const itemOf = (mark: Mark, now: number): DataItem => {
  switch (mark.type) {
    case 'span':
      return {
        id: mark.id,
        group: mark.lane,
        start: mark.start,
        end: Math.max(mark.end ?? now, mark.start + 1),
        content: mark.state,
        title: `${mark.state}: ${describe(mark.version)}${mark.versions > 1 ? ` (and ${mark.versions - 1} more version(s) in this state)` : ''}`,
        className: `tone-${mark.tone}`,
        type: 'range',
      };
    case 'deleted':
      return { id: mark.id, group: mark.lane, start: mark.at, content: 'deleted', title: describe(mark.version), className: 'mark-deleted', type: 'point' };
    case 'rejected':
      return { id: mark.id, group: mark.lane, start: mark.at, content: 'rejected', title: describe(mark.version), className: 'mark-rejected', type: 'point' };
    case 'event':
      return {
        id: mark.id,
        group: mark.lane,
        start: mark.at,
        content: mark.reason || 'event',
        title: `${mark.warning ? 'Warning' : 'Normal'} ${mark.reason}: ${mark.message} (${describe(mark.version)})`,
        className: mark.warning ? 'mark-event mark-warning' : 'mark-event',
        type: 'point',
      };
    default:
      return assertNever(mark);
  }
};

const filterForm = (kinds: readonly string[]): HTMLFormElement => {
  const query = currentRoute().query;
  const input = (name: string, placeholder: string): HTMLInputElement => h('input', { name, placeholder, value: query.get(name) ?? '' });
  const kind = h('select', { name: 'kind' }, h('option', { value: '' }, 'every kind'), kinds.map((k) => h('option', { value: k, selected: query.get('kind') === k }, k)));
  const form = h('form', { class: 'filters' }, kind, input('label', 'label, e.g. app=echo'), input('actor', 'actor, e.g. admin'), input('key', 'one object: Kind/namespace/name'), h('button', { type: 'submit' }, 'Filter'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    navigate(link(['timeline'], Object.fromEntries(['kind', 'label', 'actor', 'key'].map((name) => [name, String(data.get(name) ?? '')]))));
  });
  return form;
};

/** Shows the timeline of `namespace` ('' for all) in `container`; returns its cleanup. */
export const showTimeline = (container: HTMLElement, resources: readonly Resource[], namespace: string): (() => void) => {
  const query = currentRoute().query;
  const status = h('p', { class: 'status' }, 'loading the history ...');
  const chart = h('div', { class: 'timeline', 'data-testid': 'timeline' });
  replace(container, h('h2', {}, `Timeline of ${namespace || 'all namespaces'}`), filterForm([...new Set(resources.map((r) => r.kind))]), status, chart);
  let timeline: Timeline | undefined;
  let stopped = false;
  const started = performance.now();
  void loadHistories(namespace)
    .then((histories) => {
      if (stopped) return;
      const loaded = performance.now();
      const selected = filterHistories(histories, {
        ...(query.get('kind') ? { kind: query.get('kind')! } : {}),
        ...(query.get('label') ? { label: query.get('label')! } : {}),
        ...(query.get('actor') ? { actor: query.get('actor')! } : {}),
        ...(query.get('key') ? { key: query.get('key')! } : {}),
      });
      const { lanes, marks } = buildTimeline(selected);
      const now = Date.now();
      const groups: DataGroup[] = lanes.map((lane) => ({
          id: lane.key,
          content: h('span', { class: 'lane', 'data-lane': lane.key, 'data-kind': lane.kind }, `${lane.kind} ${lane.name}`),
          order: lane.order,
          treeLevel: lane.depth + 1,
          // An owner of many (a ReplicaSet of a thousand pods) starts folded: click it to open.
          ...(lane.children.length > 0 ? { nestedGroups: [...lane.children], showNested: lane.children.length <= FOLD_ABOVE } : {}),
        }));
      const items: DataItem[] = marks.map((mark) => itemOf(mark, now));
      // A loop, not Math.min(...times): a long history has more marks than a call has room for arguments.
      let start = marks.length > 0 ? Number.POSITIVE_INFINITY : now - 60_000;
      for (const mark of marks) start = Math.min(start, mark.type === 'span' ? mark.start : mark.at);
      status.textContent = `${lanes.length} objects, ${marks.length} versions and marks; drag to pan, scroll to zoom, click a span to see the object then`;
      status.dataset['lanes'] = String(lanes.length);
      timeline = new Timeline(chart, items, groups, {
        groupOrder: 'order',
        stack: false,
        // A thousand lanes scroll inside the chart instead of making the page that long.
        verticalScroll: true,
        maxHeight: '75vh',
        zoomMin: 1000,
        zoomMax: 1000 * 60 * 60 * 24 * 28,
        start: start - (now - start) * 0.05 - 1000,
        end: now + (now - start) * 0.05 + 1000,
        orientation: 'top',
        tooltip: { followMouse: true },
        margin: { item: 2 },
      });
      status.dataset['loadMs'] = String(Math.round(loaded - started));
      status.dataset['drawMs'] = String(Math.round(performance.now() - loaded));
      const focus = momentMillis(query.get('focus') ?? pastMoment() ?? '');
      if (focus !== undefined) {
        timeline.addCustomTime(focus, 'moment');
        timeline.moveTo(focus, { animation: false });
      }
      timeline.on('select', ({ items: selectedIds }: { items: readonly string[] }) => {
        const mark = marks.find((m) => m.id === selectedIds[0]);
        if (!mark) return;
        const { kind, namespace: ns, name } = parseKey(mark.lane);
        const resource = resources.find((r) => r.kind === kind);
        if (resource) navigate(link(['object', resource.plural, ns || '_', name], { at: mark.version.position }));
      });
    })
    .catch((error: Error) => {
      status.textContent = `cannot load the history: ${error.message}`;
      status.classList.add('error');
    });
  return () => {
    stopped = true;
    timeline?.destroy();
  };
};
