/**
 * kube's lossy Event pipeline, as a budget a decision reads from its view.
 *
 * A kube component does not write its Events itself: its recorder hands them to client-go's
 * broadcaster. The broadcaster queues up to 1,000 of them and drops what does not fit
 * (`maxQueuedEvents`, `DropIfChannelFull`). A client rate-limited to its connection's QPS and
 * burst drains that queue (kube-scheduler's `clientConnection`: 50 and 100). So under a burst a
 * component writes about burst + queue Events quickly, then QPS a second, and drops the rest.
 * Ten thousand pods scheduled in a few seconds leave on the order of a thousand `Scheduled`
 * Events, not ten thousand.
 *
 * A logplane decision is a pure function of its view and `now`, so the budget is a sliding
 * window over the view rather than a clock-driven queue. A source may write Events while fewer
 * than `burst + queue` of its Events have a last timestamp (whole seconds, as kube writes
 * them) in the last `(burst + queue) / qps` seconds. For kube-scheduler that is 1,100 in 22 s:
 * the same burst, and the same rate over any longer span. One round's decisions share what is
 * left, in decision order. An Event beyond the budget is dropped, as kube drops an Event that
 * finds the queue full. A replay or `debug reconcile` at the same view and `now` drops the same
 * ones.
 */
import { sameVector, type AppliedChange, type Projection, type View } from '../../projections/index.ts';
import type { Event, KubeObject } from '../../schemas/index.ts';

/** A component's Event client: its rate limit and its broadcaster's queue. */
export interface EventPipeline {
  /** Writes per second the client allows once its burst is spent. */
  readonly qps: number;
  /** Writes the client allows at once. */
  readonly burst: number;
  /** Events the broadcaster holds before it drops. */
  readonly queue: number;
}

/** kube-scheduler 1.32: `clientConnection` qps 50, burst 100; client-go's `maxQueuedEvents` 1,000. */
export const SCHEDULER_EVENT_PIPELINE: EventPipeline = { qps: 50, burst: 100, queue: 1000 };

/** What is left of a budget within one call to decide (a round's decisions share it). */
export interface EventAllowance {
  left: number;
}

/** The Event budget of a set of sources (a component's recorders share its client). */
export interface EventBudget {
  /** The Events the sources may still write in a decision at `now` on `view`. */
  allowance(view: View, now: number): EventAllowance;
  /** Keeps the count at the projection's cursor from its change feed; returns what detaches it. */
  attach(projection: Projection): () => void;
}

/** The whole second (epoch) an Event was last written at; undefined when it carries no time. */
const lastSecond = (event: Event): number | undefined => {
  const stamp = event.lastTimestamp ?? event.eventTime ?? event.firstTimestamp;
  if (!stamp) return undefined;
  const ms = Date.parse(stamp);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
};

/** Per-second counts of the sources' Events, kept from a projection's change feed. */
interface SecondCounts {
  readonly perSecond: Map<number, number>;
  readonly secondOf: Map<string, number>;
}

const countIn = (counts: SecondCounts, key: string, second: number | undefined): void => {
  const before = counts.secondOf.get(key);
  if (before === second) return;
  if (before !== undefined) {
    const n = (counts.perSecond.get(before) ?? 0) - 1;
    if (n > 0) counts.perSecond.set(before, n);
    else counts.perSecond.delete(before);
    counts.secondOf.delete(key);
  }
  if (second !== undefined) {
    counts.secondOf.set(key, second);
    counts.perSecond.set(second, (counts.perSecond.get(second) ?? 0) + 1);
  }
};

/** Creates the budget of the Events whose `source.component` is one of `sources`. */
export const createEventBudget = (sources: ReadonlySet<string>, pipeline: EventPipeline): EventBudget => {
  const limit = pipeline.burst + pipeline.queue;
  const windowSeconds = Math.ceil(limit / pipeline.qps);
  const ours = (object: KubeObject): object is Event => object.kind === 'Event' && sources.has(object.source?.component ?? '');
  /** The second of `event` when it is one of the sources' Events. */
  const secondOf = (object: KubeObject): number | undefined => (ours(object) ? lastSecond(object) : undefined);
  // Events stamped after `now` (another member's clock ahead) count too: they were written.
  const inWindow = (second: number, now: number): boolean => second > Math.floor(now / 1000) - windowSeconds;

  const countView = (view: View, now: number): number => {
    let n = 0;
    for (const object of view.list('Event')) {
      const second = secondOf(object);
      if (second !== undefined && inWindow(second, now)) n += 1;
    }
    return n;
  };

  let attached: { readonly projection: Projection; readonly counts: SecondCounts } | undefined;
  const countAttached = (counts: SecondCounts, now: number): number => {
    let n = 0;
    for (const [second, count] of counts.perSecond) if (inWindow(second, now)) n += count;
    return n;
  };

  return {
    allowance: (view, now) => {
      const used = attached && sameVector(view.position, attached.projection.cursor()) ? countAttached(attached.counts, now) : countView(view, now);
      return { left: Math.max(0, limit - used) };
    },
    attach: (projection) => {
      const counts: SecondCounts = { perSecond: new Map(), secondOf: new Map() };
      const apply = (change: AppliedChange): void => {
        if (change.object.kind !== 'Event') return;
        countIn(counts, change.key, change.type === 'DELETED' ? undefined : secondOf(change.object));
      };
      // The change feed is emitted synchronously after each committed batch: subscribed
      // before the first count, the counts follow the projection's cursor from here on.
      const subscription = projection.changes$.subscribe(apply);
      const view = projection.view();
      for (const key of view.keys('Event')) {
        const object = view.get(key);
        if (object) countIn(counts, key, secondOf(object));
      }
      const current = { projection, counts };
      attached = current;
      return () => {
        subscription.unsubscribe();
        if (attached === current) attached = undefined;
      };
    },
  };
};
