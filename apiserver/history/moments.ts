/**
 * Query parameters that name a moment (`at`, `from`, `to`, `since`, `until`), resolved to a
 * position of the projection. Every form `parseMoment` reads is accepted: a list
 * resourceVersion (`42.17`), an event address (`desired/0/7`, its position just after it),
 * a time (RFC 3339, epoch ms) or a relative time (`-5m`, `5m ago`, `now`, on the server's
 * clock). A malformed value, and a moment after the end of the log, is a 400 naming the
 * parameter; a position the log has but this projection has not folded yet is waited for.
 */
import type { EventLog } from '../../log/port.ts';
import {
  eventPosition,
  FOLDED_TOPICS,
  formatVector,
  InvalidMomentError,
  momentVector,
  parseMoment,
  vectorCovers,
  zeroVector,
  type Moment,
  type PositionVector,
  type Projection,
} from '../../projections/index.ts';
import { assertNever } from '../../schemas/assert-never.ts';

/** A request the history API answers with a Status of `code` (400 unless said otherwise). */
export class HistoryRequestError extends Error {
  constructor(
    message: string,
    readonly code = 400,
    readonly reason = 'BadRequest',
  ) {
    super(message);
  }
}

/** How long a position the log has is waited for before the request fails (504), by default. */
export const DEFAULT_WAIT_MS = 10_000;

export interface MomentContext {
  readonly projection: Projection;
  readonly log: EventLog;
  /** The server's clock (epoch ms). */
  readonly now: number;
  readonly waitMs: number;
}

const invalid = (parameter: string, input: string, detail: string): HistoryRequestError =>
  new HistoryRequestError(`${parameter}: Invalid value: ${JSON.stringify(input)}: ${detail}`);

/** Parses the value of `parameter`; a malformed one is a 400 naming it. */
export const parseMomentParameter = (parameter: string, input: string, now: number): Moment => {
  try {
    return parseMoment(input, now);
  } catch (error) {
    if (error instanceof InvalidMomentError) throw invalid(parameter, input, error.message);
    throw error;
  }
};

/** The log's end on each folded topic partition: the first offset not yet appended. */
const logEnd = async (log: EventLog): Promise<PositionVector> => {
  const [desired, observed] = await Promise.all(FOLDED_TOPICS.map((topic) => log.endOffsets(topic)));
  return { desired: desired!, observed: observed! };
};

/** Waits until the projection has folded `position`: 400 when the log does not reach it yet, 504 when folding it takes too long. */
const folded = async (parameter: string, input: string, position: PositionVector, what: string, context: MomentContext): Promise<void> => {
  const { projection } = context;
  if (vectorCovers(projection.cursor(), position)) return;
  const end = await logEnd(context.log);
  if (!vectorCovers(end, position)) {
    throw invalid(parameter, input, `${what} is in the future: the log ends at ${formatVector(end)}`);
  }
  try {
    await projection.waitFor(position, context.waitMs);
  } catch {
    throw new HistoryRequestError(
      `${parameter}: ${what} is not folded yet (current position: ${formatVector(projection.cursor())})`,
      504,
      'Timeout',
    );
  }
};

/** A moment as a bound: a time (a checked stamp, not in the future) or a position the projection has folded. */
export type ResolvedMoment = { readonly type: 'time'; readonly ms: number } | { readonly type: 'position'; readonly position: PositionVector };

/**
 * Resolves the value of `parameter` without turning a time into a position (what a time
 * filter such as the audit's `since` needs): times are checked to be no later than now,
 * positions and event addresses are resolved and folded.
 */
export const resolveBound = async (parameter: string, input: string, context: MomentContext): Promise<ResolvedMoment> => {
  const { projection } = context;
  const partitions = projection.partitions;
  const moment = parseMomentParameter(parameter, input, context.now);
  switch (moment.type) {
    case 'position': {
      let position: PositionVector;
      try {
        position = momentVector(moment, input, partitions);
      } catch (error) {
        if (error instanceof InvalidMomentError) throw invalid(parameter, input, error.message);
        throw error;
      }
      await folded(parameter, input, position, `position ${formatVector(position)}`, context);
      return { type: 'position', position };
    }
    case 'event': {
      const { topic, partition, offset } = moment;
      if (partition >= partitions) {
        throw invalid(parameter, input, `this cluster's topics have ${partitions === 1 ? 'one partition (0)' : `${partitions} partitions (0-${partitions - 1})`}`);
      }
      const zero = zeroVector(partitions);
      const through = { ...zero, [topic]: zero[topic].map((_, p) => (p === partition ? offset + 1 : 0)) };
      await folded(parameter, input, through, `event ${topic}/${partition}/${offset}`, context);
      const entry = projection.store.entryAt(FOLDED_TOPICS.indexOf(topic), partition, offset);
      if (!entry) throw invalid(parameter, input, `the projection holds no event at ${topic}/${partition}/${offset} (it could not be decoded)`);
      return { type: 'position', position: eventPosition(projection.store, partitions, { topic, partition, offset, time: entry.time }) };
    }
    case 'time':
      if (moment.ms > context.now) {
        throw invalid(parameter, input, `${new Date(moment.ms).toISOString()} is in the future (the server's time is ${new Date(context.now).toISOString()})`);
      }
      return { type: 'time', ms: moment.ms };
    default:
      return assertNever(moment, 'moment');
  }
};

/** Resolves the value of `parameter` to a position of the projection (a time: every event stamped no later than it). */
export const resolveMoment = async (parameter: string, input: string, context: MomentContext): Promise<PositionVector> => {
  const bound = await resolveBound(parameter, input, context);
  return bound.type === 'time' ? context.projection.positionAtTime(bound.ms) : bound.position;
};
