/**
 * A fix for kafkajs 2.2.4's request queue, applied when this adapter is loaded.
 *
 * After its first response, every kafkajs connection (the admin's, the producer's, each
 * consumer's) re-arms a timer forever: `scheduleCheckPendingRequests` computes
 * `throttledUntil - Date.now()`, negative while no broker throttles us, and with no pending
 * request it arms `setTimeout` with that (1 ms), whose `checkPendingRequests` finds nothing
 * to send and schedules again (tulios/kafkajs#1556, #1604, #1704; fix proposed in #1667,
 * unreleased). A `logplane up` process on Kafka spent 80 ms of CPU per second idle on
 * that loop (1 ms on the embedded log), and the event loop never slept.
 *
 * The replacement arms the timer only when a request is pending, with kafkajs' own delay
 * (the end of the broker's throttle, else 10 ms). Nothing else changes: with nothing
 * pending `checkPendingRequests` has nothing to do, and a request held back because too
 * many are in flight is still sent when a response frees a slot (`fulfillRequest` checks).
 */
import { createRequire } from 'node:module';

/** The part of kafkajs' `RequestQueue` the fix touches. */
interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs' `CHECK_PENDING_REQUESTS_INTERVAL`. */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

/** The fixed `scheduleCheckPendingRequests`. */
export function scheduleCheckPendingRequests(this: RequestQueueInternals): void {
  if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
  const untilUnthrottled = this.throttledUntil - Date.now();
  this.throttleCheckTimeoutId = setTimeout(
    () => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    },
    untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_REQUESTS_INTERVAL_MS,
  );
}

const require = createRequire(import.meta.url);

/**
 * Installs the fix on kafkajs 2.2.4 (the version it was written against and the last
 * release); any other version is left alone. Returns whether the fix is in place.
 */
export const fixKafkajsRequestQueue = (): boolean => {
  const { version } = require('kafkajs/package.json') as { version: string };
  if (version !== '2.2.4') return false;
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueInternals };
  RequestQueue.prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
  return true;
};

/** Whether the fix is installed (it is, once this module is loaded, on kafkajs 2.2.4). */
export const requestQueueFixed = fixKafkajsRequestQueue();
