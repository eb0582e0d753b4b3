/**
 * Node liveness from the heartbeats topic: each `NodeHeartbeat` is a renewal of the node's
 * Lease in `kube-node-lease` (node-agent/node-lease.ts). Heartbeats are not history (the
 * topic has time-bounded retention), so they are tracked in memory, not folded into the
 * projection.
 */
import type { Subscription } from 'rxjs';
import type { EventLog } from '../../log/port.ts';
import { decodeEvent } from '../../schemas/index.ts';

export interface HeartbeatTracker {
  /** Epoch ms of the last heartbeat seen from `node` (undefined: none seen since start). */
  lastSeen(node: string): number | undefined;
  /** When tracking started (nodes never heard from get their grace from here). */
  readonly since: number;
  /** The oldest time tracked: heartbeats from here on were read; nothing is known of the time before. */
  readonly horizon: number;
  close(): void;
}

/** Follows the heartbeats topic from `windowMs` ago. */
export const trackHeartbeats = async (log: EventLog, now: () => number, windowMs: number): Promise<HeartbeatTracker> => {
  const since = now();
  const lastSeen = new Map<string, number>();
  const horizon = since - windowMs;
  const start = await log.offsetsForTime('heartbeats', horizon);
  const subscription: Subscription = log
    .subscribe('heartbeats', Object.fromEntries(start.map((offset, p) => [p, offset])))
    .subscribe((batch) => {
      for (const record of batch.records) {
        try {
          const event = decodeEvent(record.value);
          if (event.body.type !== 'NodeHeartbeat') continue;
          const previous = lastSeen.get(event.body.node) ?? 0;
          lastSeen.set(event.body.node, Math.max(previous, event.body.time));
        } catch {
          // An undecodable heartbeat only means one missed beat; liveness is judged on the next.
        }
      }
    });
  return { lastSeen: (node) => lastSeen.get(node), since, horizon, close: () => subscription.unsubscribe() };
};
