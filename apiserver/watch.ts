/**
 * Watch: `?watch=true` streams newline-delimited JSON events `{type, object}` (ADDED,
 * MODIFIED, DELETED, BOOKMARK, ERROR), chunked, one write per event.
 *
 * Where it starts:
 * - no resourceVersion or "0": a synthetic ADDED for every current object, then live;
 * - a list resourceVersion (a position vector): every change after it, replayed from the
 *   projection's change feed with each object as it was at that point (from its version
 *   history), then live — without gap or duplicate, because the replay ends exactly at
 *   the cursor the live subscription starts from (both happen in one synchronous step,
 *   and the projection commits and publishes synchronously too);
 * - `sendInitialEvents=true` (kube's watch-list): a synthetic ADDED for every current
 *   object (at least as new as the resourceVersion), whatever the resourceVersion's age;
 * - a position older than the watch window (below): an ERROR event carrying a 410
 *   Expired Status, "too old resource version: X (Y)", so informers re-list.
 *
 * What "too old" means here. The projection keeps every change since offset 0 (nothing is
 * pruned), so lists and `resourceVersionMatch=Exact` reads at any past position always
 * work and never get 410. Watches, like kube's watch cache with its capacity, replay at
 * most `watchWindow` changes per topic partition: a position is too old when, on some
 * partition, more than `watchWindow` changes (of any kind) lie between it and the
 * projection's cursor. Y is the oldest position a watch can still start from, per
 * partition one past the change that is `watchWindow + 1` back (0 when there are fewer), as
 * kube prints the oldest resourceVersion its cache serves. With several partitions an
 * object's resourceVersion ("D.O") is not a cluster position and is answered the same way.
 *
 * As in kube-apiserver (the cacher answers "to match the uncached watch implementation"),
 * a resourceVersion that does not parse is a 400 reply, while every failure after it
 * parsed (too old, too large) is a 200 stream with one ERROR event, then the end.
 *
 * Label and field selectors filter events; an object that stops matching is sent as
 * DELETED and one that starts matching as ADDED, as kube-apiserver does.
 *
 * A client that does not read cannot make the server hold more than
 * `slowWatches.maxBufferedBytes` for it (beyond the initial events, which are the current
 * state and are sent whole): the event that would exceed it is not written; the watch ends
 * with an ERROR event (410 Expired: re-list), as kube's watch cache closes an unresponsive
 * watcher. Any ended watch whose last bytes are not taken within `drainGraceMs` has its
 * connection destroyed, so nothing stays pinned.
 */
import type { Subscription } from 'rxjs';
import {
  FOLDED_TOPICS,
  formatVector,
  objectAt,
  parseObjectVersion,
  parseVector,
  type ChangeType,
  type PositionVector,
  type ProjectionStore,
} from '../projections/index.ts';
import { assertNever, type KubeObject } from '../schemas/index.ts';
import { catchUp, keyOf, type Reply, type RequestContext, type ServerContext } from './context.ts';
import { ApiError, apiErrors } from './errors.ts';
import { negotiate, type Representation } from './http.ts';
import { waitForPosition } from './handlers/read.ts';
import { servedBody, toServed } from './conversion/index.ts';
import { apiVersionOf, type ResourceInfo } from './resources.ts';
import { queryBool } from './query.ts';
import { parseSelection, pinnedName, type Selection } from './selection.ts';
import { failureStatus, type Status } from './status.ts';
import { parseIncludeObject, partialMetadata, toTable } from './tables.ts';
import { customTableOf } from './custom-resources/printer-columns.ts';

export type WatchEventType = ChangeType | 'BOOKMARK' | 'ERROR';

/** One event as sent on the wire. */
export interface WatchEvent {
  readonly type: WatchEventType;
  readonly object: unknown;
}

/**
 * Whether a request asks for a watch, with apimachinery's query-string bool conversion
 * ({@link queryBool}): `watch=true`, `watch=True` (the Python client), `watch=1`, `?watch`.
 */
export const isWatchRequest = (query: URLSearchParams): boolean => queryBool(query, 'watch');

/** A change in log order, with the object as the watch should show it. */
interface Change {
  readonly type: ChangeType;
  readonly key: string;
  readonly object: KubeObject;
}

/** Where a watch starts; `unservable` is answered with one ERROR event carrying its Status. */
type Start =
  | { readonly type: 'current' }
  | { readonly type: 'position'; readonly position: PositionVector }
  | { readonly type: 'unservable'; readonly status: Status };

const parseStart = (server: ServerContext, rv: string): Start => {
  if (rv === '' || rv === '0') return { type: 'current' };
  try {
    return { type: 'position', position: parseVector(rv, server.projection.partitions) };
  } catch {
    if (parseObjectVersion(rv)) {
      // An object's resourceVersion is not a cluster position (several partitions): the client re-lists.
      return { type: 'unservable', status: expiredStatus(rv, watchFloor(server)) };
    }
    throw apiErrors.badRequest(`resourceVersion: Invalid value: "${rv}": not a list resourceVersion of this cluster`);
  }
};

const expiredStatus = (rv: string, floor: PositionVector): Status =>
  failureStatus('Expired', `too old resource version: ${rv} (${formatVector(floor)})`);

/**
 * The oldest position a watch can start from: per topic partition, one past the change
 * `watchWindow + 1` back from the cursor (0 when the partition holds fewer changes). Reads
 * up to `watchWindow + 1` keys per partition: computed only for the message of a 410.
 */
const watchFloor = (server: ServerContext): PositionVector => {
  const { store } = server.projection;
  const cursor = server.projection.cursor();
  const floorOf = (topicIndex: number, partition: number, end: number): number => {
    let floor = 0;
    let seen = 0;
    for (const key of store.changes.getKeys({ start: [topicIndex, partition, end], end: [topicIndex, partition, -1], reverse: true, limit: server.watchWindow + 1 })) {
      // A reverse range may include its start; the cursor itself holds no change yet.
      if (key[2] >= end) continue;
      seen++;
      if (seen === server.watchWindow + 1) floor = key[2] + 1;
    }
    return floor;
  };
  return {
    desired: cursor.desired.map((end, partition) => floorOf(0, partition, end)),
    observed: cursor.observed.map((end, partition) => floorOf(1, partition, end)),
  };
};

/**
 * Whether more than `watchWindow` changes lie after `position` on some topic partition:
 * counts forward from it, at most `watchWindow + 1` keys per partition (a recent position,
 * what a resuming informer sends, costs a few).
 */
const isTooOld = (server: ServerContext, position: PositionVector): boolean => {
  const { store } = server.projection;
  const cursor = server.projection.cursor();
  return FOLDED_TOPICS.some((topic, topicIndex) =>
    cursor[topic].some((end, partition) => {
      let count = 0;
      const start = position[topic][partition] ?? 0;
      for (const _ of store.changes.getKeys({ start: [topicIndex, partition, start], end: [topicIndex, partition, end], limit: server.watchWindow + 1 })) count++;
      return count > server.watchWindow;
    }),
  );
};

/**
 * The changes between two positions, for objects of `prefix`, merged across topics and
 * partitions by event time (order within a partition is kept), each object as it was
 * right after (or, for DELETED, right before) its change.
 */
const replayChanges = (store: ProjectionStore, from: PositionVector, to: PositionVector, prefix: string): Change[] => {
  type Entry = { readonly topicIndex: number; readonly partition: number; readonly offset: number; readonly key: string; readonly type: ChangeType; readonly time: number };
  const queues: Entry[][] = [];
  FOLDED_TOPICS.forEach((topic, topicIndex) => {
    to[topic].forEach((end, partition) => {
      const queue: Entry[] = [];
      const start = from[topic][partition] ?? 0;
      for (const { key, value } of store.changes.getRange({ start: [topicIndex, partition, start], end: [topicIndex, partition, end] })) {
        if (!value.key.startsWith(prefix)) continue;
        const offset = key[2];
        const time = store.history.get([value.key, topicIndex, offset])?.time ?? 0;
        queue.push({ topicIndex, partition, offset, key: value.key, type: value.type, time });
      }
      if (queue.length > 0) queues.push(queue);
    });
  });
  const replay = { desired: [...from.desired], observed: [...from.observed] };
  const changes: Change[] = [];
  const heads = queues.map(() => 0);
  for (;;) {
    let best = -1;
    queues.forEach((queue, i) => {
      const head = queue[heads[i]!];
      if (head && (best < 0 || head.time < queues[best]![heads[best]!]!.time)) best = i;
    });
    if (best < 0) break;
    const entry = queues[best]![heads[best]!]!;
    heads[best]!++;
    const topic = FOLDED_TOPICS[entry.topicIndex]!;
    const before = entry.type === 'DELETED' ? objectAt(store, entry.key, replay) : undefined;
    replay[topic][entry.partition] = entry.offset + 1;
    const object = entry.type === 'DELETED' ? before : objectAt(store, entry.key, replay);
    if (object) changes.push({ type: entry.type, key: entry.key, object });
  }
  return changes;
};

/** Encodes objects of events in the representation the client negotiated. */
const renderer = (ctx: RequestContext, representation: Representation) => {
  const includeObject = parseIncludeObject(ctx.query.get('includeObject'));
  const { conversion, custom } = ctx.target.resource;
  return (object: KubeObject): unknown => {
    switch (representation.type) {
      case 'object':
        return toServed(conversion, object);
      case 'table':
        if (custom) return customTableOf(custom, [object], { includeObject, version: representation.version });
        return conversion ? servedBody(conversion, toTable([object], { kind: object.kind, includeObject, version: representation.version })) : toTable([object], { kind: object.kind, includeObject, version: representation.version });
      case 'partialMetadata':
        return partialMetadata(object, representation.version);
      default:
        return assertNever(representation, 'representation');
    }
  };
};

/** Turns changes into the events a selective watch sends, tracking which keys it has shown. */
const selectiveFilter = (selection: Selection, shown: Set<string>) => (change: Change): Change | undefined => {
  if (!selection.filters) return change;
  const matches = change.type !== 'DELETED' && selection.matches(change.object);
  const wasShown = shown.has(change.key);
  if (matches) {
    shown.add(change.key);
    return { ...change, type: wasShown ? 'MODIFIED' : 'ADDED' };
  }
  if (wasShown) {
    shown.delete(change.key);
    return { ...change, type: 'DELETED' };
  }
  return undefined;
};

/**
 * Where a watch from a parsed position starts: there (waiting briefly for a position the
 * client saw elsewhere), the current state for `sendInitialEvents` (which kube never
 * answers with 410), or unservable with the Status of a too large or too old position.
 */
const checkPosition = async (server: ServerContext, rv: string, position: PositionVector, sendInitialEvents: boolean): Promise<Start> => {
  try {
    await waitForPosition(server, position);
  } catch (error) {
    if (error instanceof ApiError) return { type: 'unservable', status: error.status };
    throw error;
  }
  if (sendInitialEvents) return { type: 'current' };
  return isTooOld(server, position) ? { type: 'unservable', status: expiredStatus(rv, watchFloor(server)) } : { type: 'position', position };
};

/** Answers a watch that cannot be served as kube's cacher does: 200, one ERROR event with `status`, the end. */
const sendErrorEvent = (server: ServerContext, ctx: RequestContext, status: Status): Reply => {
  server.metrics.watchEvents.inc({ resource: ctx.target.resource.plural, type: 'ERROR' });
  ctx.res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  ctx.res.end(`${JSON.stringify({ type: 'ERROR', object: status } satisfies WatchEvent)}\n`);
  return { type: 'streamed' };
};

const keyPrefix = (resource: ResourceInfo, namespace: string | undefined): string =>
  resource.namespaced && namespace !== undefined ? `${resource.ref}/${namespace}/` : `${resource.ref}/`;

const positiveInteger = (query: URLSearchParams, name: string): number | undefined => {
  const text = query.get(name);
  if (text === null || text === '') return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw apiErrors.badRequest(`${name}: Invalid value: "${text}": must be a non-negative integer`);
  return value;
};

/** Serves a watch request until the client leaves, the timeout passes or the server closes. */
export const watchObjects = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const { resource, namespace } = ctx.target;
  const representation = negotiate(ctx.req.headers.accept);
  const selection = parseSelection(resource, ctx.query);
  const nameFromPath = ctx.target.name;
  const allowBookmarks = queryBool(ctx.query, 'allowWatchBookmarks');
  const sendInitialEvents = queryBool(ctx.query, 'sendInitialEvents');
  const sendInitialEventsEnd = allowBookmarks && sendInitialEvents;
  // timeoutSeconds=0 is "not set", as in kube: the server's own bound applies.
  const timeoutSeconds = Math.min(positiveInteger(ctx.query, 'timeoutSeconds') || server.maxWatchSeconds, server.maxWatchSeconds);
  const rv = ctx.query.get('resourceVersion') ?? '';
  const { projection } = server;
  let start = parseStart(server, rv);
  if (start.type === 'position') {
    start = await checkPosition(server, rv, start.position, sendInitialEvents);
  } else if (rv === '') {
    await catchUp(server);
  }
  if (start.type === 'unservable') return sendErrorEvent(server, ctx, start.status);

  const prefix = keyPrefix(resource, namespace);
  const pinned = nameFromPath ?? pinnedName(selection);
  const wanted = (key: string, object: KubeObject): boolean =>
    key.startsWith(prefix) && (nameFromPath === undefined || object.metadata.name === nameFromPath);
  const shown = new Set<string>();
  const select = selectiveFilter(nameFromPath === undefined ? selection : { ...selection, filters: true, matches: (o) => o.metadata.name === nameFromPath && selection.matches(o) }, shown);
  const render = renderer(ctx, representation);
  const res = ctx.res;
  const typeMeta = { kind: resource.kind, apiVersion: apiVersionOf(resource) };

  // The events of one projection batch are emitted synchronously: they are corked and leave
  // in one write on the next tick (before the writes' own HTTP responses, which wait for
  // promise callbacks), instead of one chunk and one syscall per event.
  const { slowWatches } = server;
  let corked = false;
  // The initial events are written in one synchronous step: while they drain, the bound is
  // what they left unsent; once the buffer is below the bound, the bound.
  let bound = slowWatches.maxBufferedBytes;
  let tooSlow = false;
  let initialPhase = true;
  const write = (event: WatchEvent): void => {
    server.metrics.watchEvents.inc({ resource: resource.plural, type: event.type });
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(() => {
        corked = false;
        res.uncork();
      });
    }
    res.write(`${JSON.stringify(event)}\n`);
  };
  const send = (event: WatchEvent): void => {
    if (tooSlow || res.writableEnded) return;
    const text = `${JSON.stringify(event)}\n`;
    const buffered = res.writableLength;
    if (buffered < slowWatches.maxBufferedBytes) bound = slowWatches.maxBufferedBytes;
    if (!initialPhase && buffered + Buffer.byteLength(text) > bound) {
      tooSlow = true;
      slowWatches.terminated(resource.plural);
      ctx.logger.warn(
        { resource: resource.plural, buffered, bound: slowWatches.maxBufferedBytes },
        'watch ended: the client does not read its events (too many unsent bytes)',
      );
      write({
        type: 'ERROR',
        object: failureStatus('Expired', `the watch client is too slow: ${buffered} bytes are unsent and the next event would exceed the bound of ${slowWatches.maxBufferedBytes}; re-list and watch again`),
      });
      finish();
      return;
    }
    write(event);
    slowWatches.buffered(res.writableLength);
  };
  const sendChange = (change: Change): void => {
    if (!wanted(change.key, change.object)) return;
    const selected = select(change);
    if (selected) send({ type: selected.type, object: render(selected.object) });
  };

  // From the cursor snapshot to the subscription everything is synchronous: no projection
  // batch can commit in between, so the initial events end exactly where live ones begin.
  const cursor = projection.cursor();
  let initial: Change[];
  if (start.type === 'current') {
    const view = projection.view();
    const objects = pinned !== undefined && (namespace !== undefined || !resource.namespaced)
      ? [view.get(keyOf(resource, namespace, pinned))].filter((o): o is KubeObject => o !== undefined)
      : view.list(resource.ref, resource.namespaced ? namespace : undefined);
    initial = objects.map((object) => ({ type: 'ADDED', key: keyOf(resource, object.metadata.namespace, object.metadata.name), object }));
  } else {
    if (selection.filters || nameFromPath !== undefined) {
      for (const object of projection.viewAt(start.position).list(resource.ref, resource.namespaced ? namespace : undefined)) {
        const key = keyOf(resource, object.metadata.namespace, object.metadata.name);
        if (wanted(key, object) && selection.matches(object)) shown.add(key);
      }
    }
    initial = replayChanges(projection.store, start.position, cursor, prefix);
  }

  ctx.req.socket.setNoDelay(true);
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Transfer-Encoding': 'chunked',
    'Cache-Control': 'no-cache, private',
  });
  // Send the headers now: a watch with nothing to report yet must still be established.
  res.flushHeaders();
  server.metrics.openWatches.inc({ resource: resource.plural });
  for (const change of initial) sendChange(change);
  if (sendInitialEventsEnd) {
    send({ type: 'BOOKMARK', object: { ...typeMeta, metadata: { resourceVersion: formatVector(cursor), annotations: { 'k8s.io/initial-events-end': 'true' } } } });
  }
  initialPhase = false;
  bound = Math.max(slowWatches.maxBufferedBytes, res.writableLength);

  let finished = false;
  let subscription: Subscription | undefined;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  const bookmarks = allowBookmarks
    ? setInterval(() => send({ type: 'BOOKMARK', object: { ...typeMeta, metadata: { resourceVersion: formatVector(projection.cursor()) } } }), server.bookmarkIntervalMs)
    : undefined;
  const timeout = setTimeout(() => finish(), timeoutSeconds * 1000);
  const onClosing = (): void => finish();
  function finish(): void {
    if (finished) return;
    finished = true;
    subscription?.unsubscribe();
    if (bookmarks) clearInterval(bookmarks);
    clearTimeout(timeout);
    server.closing.removeEventListener('abort', onClosing);
    server.metrics.openWatches.dec({ resource: resource.plural });
    if (!res.writableEnded) res.end();
    // A client that does not take the last bytes does not keep the connection (and them).
    if (!res.writableFinished) {
      const socket = ctx.req.socket;
      const grace = setTimeout(() => {
        ctx.logger.warn({ resource: resource.plural, unsent: res.writableLength, graceMs: slowWatches.drainGraceMs }, 'watch connection destroyed: the client did not take the last bytes in time');
        socket.destroy();
      }, slowWatches.drainGraceMs);
      grace.unref();
      res.once('finish', () => {
        clearTimeout(grace);
        if (tooSlow) socket.destroy();
      });
      res.once('close', () => clearTimeout(grace));
    } else if (tooSlow) {
      ctx.req.socket.destroy();
    }
    resolveDone();
  }
  server.closing.addEventListener('abort', onClosing);
  subscription = projection.changes$.subscribe({
    next: (change) => {
      if (finished || change.offset < (cursor[change.topic][change.partition] ?? 0)) return;
      sendChange(change);
    },
    complete: () => finish(),
  });
  if (finished) subscription.unsubscribe();
  res.on('close', () => finish());
  if (server.closing.aborted) finish();
  await done;
  return { type: 'streamed' };
};
