/**
 * Consistent reads without one end-offsets query per read (kube's "consistent reads from
 * cache" asks etcd for its current revision; this asks the log for its end offsets).
 *
 * A read must see every write that completed before it began, so it may only use an answer
 * to a query *sent after it arrived*. Reads that arrive while a query is in flight therefore
 * share the next query, sent as soon as the current one returns: at most one query in
 * flight, each read waits at most two round trips, and under load the log answers one
 * query per round trip instead of one (two, with both topics) per read.
 */
import type { EventLog } from '../log/port.ts';
import type { PositionVector } from '../projections/index.ts';

/** Resolves with the log's end offsets as of some moment after the call. */
export type LogBarrier = () => Promise<PositionVector>;

export const createLogBarrier = (log: EventLog): LogBarrier => {
  const query = async (): Promise<PositionVector> => {
    const [desired, observed] = await Promise.all([log.endOffsets('desired'), log.endOffsets('observed')]);
    return { desired, observed };
  };
  /** The query in flight: sent before any read that arrives now, so those must not use it. */
  let inFlight: Promise<PositionVector> | undefined;
  /** The query that the reads arriving during `inFlight` share, sent when it settles. */
  let following: Promise<PositionVector> | undefined;
  const send = (): Promise<PositionVector> => {
    const sent = query();
    inFlight = sent;
    const clear = (): void => {
      if (inFlight === sent) inFlight = undefined;
    };
    sent.then(clear, clear);
    return sent;
  };
  return () => {
    if (!inFlight) return send();
    following ??= inFlight.then(
      () => undefined,
      () => undefined,
    ).then(() => {
      following = undefined;
      return send();
    });
    return following;
  };
};
