/**
 * The timeline: every object's versions on one time axis (vis-timeline), a lane per object
 * nested under its owner, filtered by namespace, kind, label and actor or narrowed to one
 * object. Clicking a span opens the object as it was at that version. It reads the bulk
 * history's timeline view (what the spans draw, not whole objects) and gives vis-timeline
 * only the items of the lanes in view and the time range around the visible one
 * (`timeline-window.ts`), updated as the view is panned, zoomed, scrolled or unfolded.
 */
import * as vis from 'vis-timeline/standalone';
import { Timeline, type DataGroup, type DataGroupCollectionType, type DataItem, type DataItemCollectionType } from 'vis-timeline/standalone';
import 'vis-timeline/styles/vis-timeline-graph2d.min.css';
import { get } from '../api.ts';
import { assertNever } from '../assert-never.ts';
import { laneKeyOf, readPages, type HistoryPage } from '../history-pages.ts';
import { h, replace } from '../dom.ts';
import { momentMillis, pastMoment } from '../moment.ts';
import { routeNameOf, type Resource } from '../resources.ts';
import { currentRoute, link, navigate } from '../route.ts';
import { buildTimeline, filterTimelines, joinTimelines, parseKey, type Lane, type Mark, type MarkEvent, type ObjectTimeline } from '../timeline-model.ts';
import { byLane, clampRange, coarsen, isCluster, itemsInWindow, lanesAround, paddedRange, windowChange, type Cluster, type Placed } from '../timeline-window.ts';

/** Owners with more children than this start folded. */
const FOLD_ABOVE = 50;
/** Versions asked for per page of the bulk history (the server's largest page). */
const PAGE_LIMIT = 10_000;
/** Pages read at most (ten million versions): past that the timeline says the history is too long. */
const MAX_PAGES = 1_000;

/** The parts of vis-data's DataSet (which the standalone bundle exports, but whose types are not installed) used here. */
interface DataSetOf<T> {
  readonly length: number;
  add(items: T[]): unknown;
  remove(ids: string[]): unknown;
  getIds(): (string | number)[];
  on(event: 'update', listener: () => void): void;
}
const { DataSet } = vis as unknown as { DataSet: new <T>(items: T[]) => DataSetOf<T> };
/** A DataSet as the Timeline takes it (its declared type names vis-data's). */
const asCollection = <C extends DataItemCollectionType | DataGroupCollectionType>(set: DataSetOf<unknown>): C => set as unknown as C;

/** Lanes drawn before the first measure of which are in view (more than a screen holds). */
const INITIAL_LANES = 40;
/** Lanes drawn beyond the visible ones, either side. */
const LANE_MARGIN = 10;
/** At least CLUSTER_LEAST items one after another on a lane within this many pixels are drawn as one cluster. */
const CLUSTER_PX = 4;
const CLUSTER_LEAST = 8;
/** The widest zoom: four weeks. */
const ZOOM_MAX = 1000 * 60 * 60 * 24 * 28;

type Drawable = Placed & { readonly mark: Mark };

const clusterItem = (cluster: Cluster<Drawable>): DataItem => ({
  id: cluster.id,
  group: cluster.lane,
  start: cluster.start,
  end: Math.max(cluster.end, cluster.start + 1),
  content: String(cluster.members.length),
  title: `${cluster.members.length} versions and marks from ${new Date(cluster.start).toISOString()} to ${new Date(cluster.end).toISOString()}: click or zoom in to see them`,
  className: 'cluster',
  type: 'range',
});

/**
 * The timeline of every object of `namespace` ('' for every object of the cluster), the
 * deleted ones among them: the bulk history's timeline view, page by page.
 */
const loadTimelines = async (namespace: string): Promise<ObjectTimeline[]> => {
  const base = `/logplane/v1/history?view=timeline&limit=${PAGE_LIMIT}${namespace ? `&namespace=${encodeURIComponent(namespace)}` : ''}`;
  const pages = await readPages((token) => get<HistoryPage<ObjectTimeline>>(token === undefined ? base : `${base}&continue=${encodeURIComponent(token)}`), MAX_PAGES);
  return joinTimelines(
    pages.flatMap((page) => page.items),
    laneKeyOf,
  );
};

const describe = (event: MarkEvent, rejected?: string): string =>
  `${event.eventType} by ${event.actor.type} ${event.actor.name} at ${new Date(event.time).toISOString()}, position ${event.at}` + (rejected === undefined ? '' : ` — rejected: ${rejected}`);

/** The lanes shown before anything is unfolded or scrolled: every root, and the children of owners that start unfolded. */
const initiallyShown = (lanes: readonly Lane[]): string[] => {
  const byKey = new Map(lanes.map((lane) => [lane.key, lane]));
  const open = (lane: Lane): boolean => lane.children.length <= FOLD_ABOVE;
  return lanes
    .filter((lane) => {
      for (let parent = lane.parent ? byKey.get(lane.parent) : undefined; parent; parent = parent.parent ? byKey.get(parent.parent) : undefined) if (!open(parent)) return false;
      return true;
    })
    .map((lane) => lane.key);
};

/** The lanes whose labels are drawn, in display order, and which of them are in the chart's view. */
const measureLanes = (chart: HTMLElement): { shown: string[]; first: number; last: number } | undefined => {
  const panel = chart.querySelector('.vis-panel.vis-left');
  if (!panel) return undefined;
  const view = panel.getBoundingClientRect();
  const labels = [...chart.querySelectorAll<HTMLElement>('.vis-labelset .vis-label')]
    .map((label) => ({ lane: label.querySelector<HTMLElement>('[data-lane]')?.dataset['lane'], rect: label.getBoundingClientRect() }))
    .filter((label): label is { lane: string; rect: DOMRect } => label.lane !== undefined)
    .sort((a, b) => a.rect.top - b.rect.top);
  const inView = labels.flatMap((label, index) => (label.rect.bottom >= view.top && label.rect.top <= view.bottom ? [index] : []));
  return { shown: labels.map((l) => l.lane), first: inView[0] ?? 0, last: inView.at(-1) ?? -1 };
};

const itemOf = (mark: Mark, now: number): DataItem => {
  switch (mark.type) {
    case 'span':
      return {
        id: mark.id,
        group: mark.lane,
        start: mark.start,
        end: Math.max(mark.end ?? now, mark.start + 1),
        content: mark.state,
        title: `${mark.state}: ${describe(mark.event)}${mark.versions > 1 ? ` (and ${mark.versions - 1} more version(s) in this state)` : ''}`,
        className: `tone-${mark.tone}`,
        type: 'range',
      };
    case 'deleted':
      return { id: mark.id, group: mark.lane, start: mark.at, content: 'deleted', title: describe(mark.event), className: 'mark-deleted', type: 'point' };
    case 'rejected':
      return { id: mark.id, group: mark.lane, start: mark.at, content: 'rejected', title: describe(mark.event, mark.message), className: 'mark-rejected', type: 'point' };
    case 'event':
      return {
        id: mark.id,
        group: mark.lane,
        start: mark.at,
        content: mark.reason || 'event',
        title: `${mark.warning ? 'Warning' : 'Normal'} ${mark.reason}: ${mark.message} (${describe(mark.event)})`,
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
  void loadTimelines(namespace)
    .then((objects) => {
      if (stopped) return;
      const loaded = performance.now();
      const selected = filterTimelines(objects, {
        ...(query.get('kind') ? { kind: query.get('kind')! } : {}),
        ...(query.get('label') ? { label: query.get('label')! } : {}),
        ...(query.get('actor') ? { actor: query.get('actor')! } : {}),
        ...(query.get('key') ? { key: query.get('key')! } : {}),
      });
      const { lanes, marks } = buildTimeline(selected);
      const built = performance.now();
      const now = Date.now();
      const groups = new DataSet<DataGroup>(
        lanes.map((lane) => ({
          id: lane.key,
          content: h('span', { class: 'lane', 'data-lane': lane.key, 'data-kind': lane.kind }, `${lane.kind} ${lane.name}`),
          order: lane.order,
          treeLevel: lane.depth + 1,
          // An owner of many (a ReplicaSet of a thousand pods) starts folded: click it to open.
          ...(lane.children.length > 0 ? { nestedGroups: [...lane.children], showNested: lane.children.length <= FOLD_ABOVE } : {}),
        })),
      );
      const byId = new Map(marks.map((mark) => [mark.id, mark]));
      const placed: Drawable[] = marks.map((mark) =>
        mark.type === 'span' ? { id: mark.id, lane: mark.lane, start: mark.start, end: Math.max(mark.end ?? now, mark.start + 1), mark } : { id: mark.id, lane: mark.lane, start: mark.at, end: mark.at, mark },
      );
      const index = byLane(placed);
      // A loop, not Math.min(...times): a long history has more marks than a call has room for arguments.
      let start = marks.length > 0 ? Number.POSITIVE_INFINITY : now - 60_000;
      for (const item of placed) start = Math.min(start, item.start);
      const whole = { start: start - (now - start) * 0.05 - 1000, end: now + (now - start) * 0.05 + 1000 };
      const focus = momentMillis(query.get('focus') ?? pastMoment() ?? '');
      const firstRange = clampRange(focus === undefined ? whole : { start: focus - (whole.end - whole.start) / 2, end: focus + (whole.end - whole.start) / 2 }, ZOOM_MAX);
      /** The clusters drawn, by id (a click on one zooms into it). */
      const clusters = new Map<string, Cluster<Drawable>>();
      /** What to draw of `lanesInView` around `range`: their items, a run too narrow for this zoom as one cluster. */
      const drawable = (lanesInView: readonly string[], range: { start: number; end: number }): (Drawable | Cluster<Drawable>)[] => {
        const narrowest = (CLUSTER_PX * (range.end - range.start)) / Math.max(100, chart.clientWidth - 200);
        const padded = paddedRange(range.start, range.end);
        return lanesInView.flatMap((lane) => coarsen(itemsInWindow(index, [lane], padded), narrowest, CLUSTER_LEAST));
      };
      const dataItem = (item: Drawable | Cluster<Drawable>): DataItem => {
        if (!isCluster(item)) return itemOf(item.mark, now);
        clusters.set(item.id, item);
        return clusterItem(item);
      };
      const items = new DataSet<DataItem>(drawable(initiallyShown(lanes).slice(0, INITIAL_LANES), firstRange).map(dataItem));
      status.textContent = `${lanes.length} objects, ${marks.length} versions and marks; drag to pan, scroll to zoom, click a span to see the object then`;
      status.dataset['lanes'] = String(lanes.length);
      status.dataset['marks'] = String(marks.length);
      const chartTimeline = new Timeline(chart, asCollection<DataItemCollectionType>(items), asCollection<DataGroupCollectionType>(groups), {
        groupOrder: 'order',
        stack: false,
        // A thousand lanes scroll inside the chart instead of making the page that long.
        verticalScroll: true,
        maxHeight: '75vh',
        zoomMin: 1000,
        zoomMax: ZOOM_MAX,
        ...whole,
        orientation: 'top',
        tooltip: { followMouse: true },
        margin: { item: 2 },
      });
      timeline = chartTimeline;
      status.dataset['loadMs'] = String(Math.round(loaded - started));
      status.dataset['drawMs'] = String(Math.round(performance.now() - loaded));
      status.dataset['buildMs'] = String(Math.round(built - loaded));
      if (focus !== undefined) {
        chartTimeline.addCustomTime(focus, 'moment');
        chartTimeline.moveTo(focus, { animation: false });
      }
      /** Gives vis-timeline the items of the lanes in view and around the visible range (after the frame that drew the last change). */
      let pending = false;
      const refill = (): void => {
        if (pending || stopped) return;
        pending = true;
        requestAnimationFrame(() => {
          pending = false;
          if (stopped) return;
          const lanesNow = measureLanes(chart);
          if (!lanesNow) return;
          const range = chartTimeline.getWindow();
          const wanted = drawable(lanesAround(lanesNow.shown, lanesNow.first, lanesNow.last, LANE_MARGIN), { start: range.start.getTime(), end: range.end.getTime() });
          const { add, remove } = windowChange(new Set(items.getIds().map(String)), wanted);
          if (remove.length > 0) items.remove(remove);
          for (const id of remove) clusters.delete(id);
          if (add.length > 0) items.add(add.map(dataItem));
          chart.dataset['drawn'] = String(items.length);
        });
      };
      chartTimeline.on('rangechanged', refill);
      chartTimeline.on('scrollSide', refill);
      chartTimeline.on('changed', refill);
      groups.on('update', refill);
      chartTimeline.on('select', ({ items: selectedIds }: { items: readonly string[] }) => {
        const cluster = clusters.get(selectedIds[0] ?? '');
        if (cluster) {
          const pad = Math.max(1000, (cluster.end - cluster.start) * 0.1);
          chartTimeline.setWindow(cluster.start - pad, cluster.end + pad);
          return;
        }
        const mark = byId.get(selectedIds[0] ?? '');
        if (!mark) return;
        const { kind, namespace: ns, name } = parseKey(mark.lane);
        // Lanes name kinds without their group (see laneKeyOf), as owner references do.
        const resource = resources.find((r) => r.kind === kind);
        if (resource) navigate(link(['object', routeNameOf(resource), ns || '_', name], { at: mark.event.at }));
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
