/**
 * The timeline: every object's versions on one time axis (vis-timeline), a lane per object
 * nested under its owner, filtered by namespace, kind, label and actor or narrowed to one
 * object. Clicking a span opens the object as it was at that version.
 */
import { Timeline, type DataGroup, type DataItem } from 'vis-timeline/standalone';
import 'vis-timeline/styles/vis-timeline-graph2d.min.css';
import { get, type KubeObject } from '../api.ts';
import { h, replace } from '../dom.ts';
import { momentMillis, pastMoment } from '../moment.ts';
import type { Resource } from '../resources.ts';
import { currentRoute, link, navigate } from '../route.ts';
import { buildTimeline, filterHistories, parseKey, type Mark, type ObjectHistory, type Version } from '../timeline-model.ts';
import { historyPath } from './object.ts';

const HISTORY_CONCURRENCY = 6;
/** Owners with more children than this start folded. */
const FOLD_ABOVE = 50;
/** Events the audit feed is asked for: the objects of these events are the lanes. */
const EVENT_LIMIT = 10_000;

/**
 * The histories of the objects of `namespace` ('' for every object): those that exist now
 * and those the latest events touched (deleted ones among them).
 */
const loadHistories = async (namespace: string): Promise<ObjectHistory[]> => {
  const [{ events }, present] = await Promise.all([
    get<{ events: readonly { key: string }[] }>(`/logplane/v1/audit?all=true&limit=${EVENT_LIMIT}`),
    get<{ objects: readonly KubeObject[] }>(`/logplane/v1/at?at=now${namespace ? `&namespace=${encodeURIComponent(namespace)}` : ''}`),
  ]);
  const presentKeys = present.objects.map((o) => `${o.kind ?? ''}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
  const keys = [...new Set([...presentKeys, ...events.map((e) => e.key)])].filter((key) => namespace === '' || parseKey(key).namespace === namespace);
  const histories: ObjectHistory[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < keys.length) {
      const key = keys[next++]!;
      const { kind, namespace: ns, name } = parseKey(key);
      const { versions } = await get<{ versions: Version[] }>(`/logplane/v1/history/${historyPath(kind, ns, name)}`);
      histories.push({ key, versions });
    }
  };
  await Promise.all(Array.from({ length: HISTORY_CONCURRENCY }, worker));
  return histories;
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
        title: `${mark.state}: ${describe(mark.version)}`,
        className: `tone-${mark.tone}`,
        type: 'range',
      };
    case 'deleted':
      return { id: mark.id, group: mark.lane, start: mark.at, content: 'deleted', title: describe(mark.version), className: 'mark-deleted', type: 'point' };
    case 'rejected':
      return { id: mark.id, group: mark.lane, start: mark.at, content: 'rejected', title: describe(mark.version), className: 'mark-rejected', type: 'point' };
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
      const times = marks.map((m) => (m.type === 'span' ? m.start : m.at));
      const start = times.length > 0 ? Math.min(...times) : now - 60_000;
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
