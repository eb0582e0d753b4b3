/**
 * Writes the Events kubelet records (kubelet/events.ts) as core/v1 Events, through the same
 * recorder and correlator the controllers use (projections/event-recorder.ts: a repeat
 * counts, similar ones aggregate, the spam filter drops the rest), with source `kubelet` on
 * the node's host and the pod as involvedObject (fieldPath `spec.containers{X}`).
 *
 * Recording never waits: `record` puts the Event on a bounded queue (beyond `maxQueued` it is
 * dropped and counted, as client-go's broadcaster drops on a full channel), and batches leave
 * one at a time, each appended and folded into the agent's projection before the next one is
 * correlated (so a repeat finds the Event it repeats).
 */
import type { Logger } from 'pino';
import type { EventLog } from '../log/port.ts';
import { appendAndWait, createRecorder, type Projection } from '../projections/index.ts';
import type { EventBody, Pod } from '../schemas/index.ts';
import { containerFieldPath, type KubeletEvent } from './kubelet/events.ts';

/** kubelet's event source component. */
export const KUBELET_COMPONENT = 'kubelet';

export interface EventReporterOptions {
  readonly log: EventLog;
  readonly projection: Projection;
  readonly logger: Logger;
  /** Events waiting at most (default 1,000); more are dropped. */
  readonly maxQueued?: number;
  /** How long the first Event of a batch waits for others (default 200 ms). */
  readonly batchMs?: number;
  /** Clock of the Events' timestamps; default `Date.now`. */
  readonly now?: () => number;
}

export interface EventReporter {
  /** Queues `event` about `pod` (the pod as the agent knows it) on `node`; never blocks. */
  record(node: string, pod: Pod, event: KubeletEvent): void;
  /** Events dropped because the queue was full, so far. */
  dropped(): number;
  /** Writes what is queued, then stops. */
  close(): Promise<void>;
}

interface Queued {
  readonly node: string;
  readonly pod: Pod;
  readonly event: KubeletEvent;
}

/** Events written in one append at most. */
const MAX_BATCH = 500;

/** Starts a reporter; see the module comment. */
export const createEventReporter = (options: EventReporterOptions): EventReporter => {
  const { log, projection, logger } = options;
  const maxQueued = options.maxQueued ?? 1_000;
  const batchMs = options.batchMs ?? 200;
  const now = options.now ?? Date.now;
  const queue: Queued[] = [];
  let droppedCount = 0;
  let timer: NodeJS.Timeout | undefined;
  let sending: Promise<void> | undefined;
  let closed = false;

  const send = async (): Promise<void> => {
    const batch = queue.splice(0, MAX_BATCH);
    const byNode = new Map<string, Queued[]>();
    for (const item of batch) byNode.set(item.node, [...(byNode.get(item.node) ?? []), item]);
    for (const [node, items] of byNode) {
      const recorder = createRecorder(projection.view(), now(), { component: KUBELET_COMPONENT, host: node });
      for (const { pod, event } of items) recorder.event(pod, event.type, event.reason, event.message, containerFieldPath(event.container, pod));
      const commands: EventBody[] = recorder.commands();
      if (commands.length === 0) continue;
      try {
        await appendAndWait(log, projection, commands, { actor: { type: 'node', name: node } });
      } catch (error) {
        logger.warn({ node, events: commands.length, error: String(error) }, 'kubelet events not written');
      }
    }
  };

  const schedule = (delayMs: number): void => {
    if (timer !== undefined || sending !== undefined || closed || queue.length === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      sending = send().finally(() => {
        sending = undefined;
        schedule(0);
      });
    }, delayMs);
    timer.unref();
  };

  return {
    record: (node, pod, event) => {
      if (closed) return;
      if (queue.length >= maxQueued) {
        if (droppedCount++ % 100 === 0) logger.warn({ dropped: droppedCount, maxQueued }, 'kubelet event queue full; dropping events');
        return;
      }
      queue.push({ node, pod, event });
      schedule(batchMs);
    },
    dropped: () => droppedCount,
    close: async () => {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      await sending;
      while (queue.length > 0) await send();
    },
  };
};
