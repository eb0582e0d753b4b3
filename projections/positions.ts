/**
 * Log positions and resourceVersions.
 *
 * A projection folds two topics (desired, observed) of P partitions each. Its position is
 * a vector of 2P cursors (the next offset to apply): desired partitions first, then
 * observed. As a resourceVersion it is the cursors joined by dots, so with one partition a
 * list's resourceVersion reads "42.17" (42 desired events and 17 observed events applied).
 *
 * An object's own resourceVersion uses the same format but counts only the events that
 * touched it, in its own partition: "D.O" where D = 1 + offset of the last desired event
 * that changed it and O = 1 + offset of the last observed one (0 if none). It is a pure
 * function of the log, so every replica of the projection serves the same value.
 *
 * One way to name a moment, everywhere (CLI verbs, `/logplane/v1`, the dashboard): a list
 * resourceVersion. `history`, `why`, `audit`, `diff` and `get --at` print the position of an
 * event as the list resourceVersion just after it (see `eventPosition` in history.ts), so
 * the object the event made exists at the printed position, and any resourceVersion a list
 * or watch returned can be pasted where a moment is asked for. `parseMoment` reads that and
 * every other form logplane ever printed or took: an event address (`desired/0/7`, what
 * `history` and `why` printed before), an RFC 3339 time, epoch milliseconds, and a time
 * relative to now (`-5m`, `5m ago`, `-1h30m`, `now`).
 */
import type { Topic } from '../log/port.ts';
import { ProjectionError } from './errors.ts';

/** The topics a projection folds, in vector order. */
export const FOLDED_TOPICS = ['desired', 'observed'] as const satisfies readonly Topic[];
export type FoldedTopic = (typeof FOLDED_TOPICS)[number];

/** Per folded topic, the next offset to apply for each partition. */
export interface PositionVector {
  readonly desired: readonly number[];
  readonly observed: readonly number[];
}

/** The version of one object: offsets (+1) of the last desired and observed events that touched it. */
export interface ObjectVersion {
  readonly desired: number;
  readonly observed: number;
}

export const zeroVector = (partitions: number): PositionVector => ({
  desired: Array.from({ length: partitions }, () => 0),
  observed: Array.from({ length: partitions }, () => 0),
});

export const formatVector = (v: PositionVector): string => [...v.desired, ...v.observed].join('.');

export const formatObjectVersion = (v: ObjectVersion): string => `${v.desired}.${v.observed}`;

const parseNumbers = (rv: string): number[] | undefined => {
  if (!/^\d+(\.\d+)*$/.test(rv)) return undefined;
  return rv.split('.').map(Number);
};

/** Parses a resourceVersion of an object ("D.O"); undefined when it is not one. */
export const parseObjectVersion = (rv: string): ObjectVersion | undefined => {
  const numbers = parseNumbers(rv);
  if (numbers?.length !== 2) return undefined;
  return { desired: numbers[0]!, observed: numbers[1]! };
};

/**
 * Parses a list/watch resourceVersion for a log of `partitions` partitions.
 * Throws a `ProjectionError` naming the value when it is malformed.
 */
export const parseVector = (rv: string, partitions: number): PositionVector => {
  const numbers = parseNumbers(rv);
  if (numbers?.length !== partitions * 2) {
    throw new ProjectionError(
      `resourceVersion "${rv}" is not a position of this cluster: expected ${partitions * 2} dot-separated offsets`,
      false,
      { resourceVersion: rv },
    );
  }
  return { desired: numbers.slice(0, partitions), observed: numbers.slice(partitions) };
};

/** True when `a` and `b` are the same position (a cache kept at a projection's cursor is valid for a view at `b`). */
export const sameVector = (a: PositionVector, b: PositionVector): boolean =>
  a === b ||
  (a.desired.length === b.desired.length &&
    a.observed.length === b.observed.length &&
    a.desired.every((offset, p) => offset === b.desired[p]) &&
    a.observed.every((offset, p) => offset === b.observed[p]));

/** True when every cursor of `a` is ≥ the matching cursor of `b`. */
export const vectorCovers = (a: PositionVector, b: PositionVector): boolean =>
  FOLDED_TOPICS.every((t) => b[t].every((offset, p) => (a[t][p] ?? 0) >= offset));

export const topicIndex = (topic: FoldedTopic): number => FOLDED_TOPICS.indexOf(topic);

/**
 * A moment as a user or client named it, before it is resolved against a projection:
 * a list resourceVersion (offsets, desired partitions first), the address of one event
 * (`desired/0/7`), or a time (epoch ms; relative times already resolved against `now`).
 */
export type Moment =
  | { readonly type: 'position'; readonly offsets: readonly number[] }
  | { readonly type: 'event'; readonly topic: FoldedTopic; readonly partition: number; readonly offset: number }
  | { readonly type: 'time'; readonly ms: number; readonly form: 'rfc3339' | 'epoch' | 'relative' };

/** What a moment may be written as, for error messages and help texts. */
export const MOMENT_FORMS =
  'a position (a resourceVersion such as 42.17, or an event such as desired/0/7), a time (RFC 3339 such as ' +
  '2024-05-01T12:00:00Z, or epoch milliseconds) or a relative time (-5m, 5m ago, -1h30m, now)';

/** The text is none of the forms `parseMoment` reads. */
export class InvalidMomentError extends ProjectionError {
  override readonly name = 'InvalidMomentError';
  constructor(readonly input: string, detail = `expected ${MOMENT_FORMS}`) {
    super(`${JSON.stringify(input)} is not a moment: ${detail}`, false, { input });
  }
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const DURATION = '((?:\\d+(?:\\.\\d+)?(?:ms|s|m|h|d|w))+)';
const RELATIVE_BEFORE = new RegExp(`^-${DURATION}$`);
const RELATIVE_AGO = new RegExp(`^${DURATION}\\s+ago$`);
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const EVENT = /^(desired|observed)\/(\d+)\/(\d+)$/;
/** The latest time a JavaScript Date holds. */
const MAX_TIME = 8.64e15;

const safeNumber = (digits: string, input: string): number => {
  const value = Number(digits);
  if (!Number.isSafeInteger(value)) throw new InvalidMomentError(input, `${digits} is too large for an offset`);
  return value;
};

/**
 * Reads a moment in any accepted form (surrounding spaces ignored); relative times are
 * resolved against `now`. Bare digits are epoch milliseconds: a position always has at
 * least two offsets. Throws {@link InvalidMomentError}.
 */
export const parseMoment = (input: string, now: number = Date.now()): Moment => {
  const text = input.trim();
  if (text === 'now') return { type: 'time', ms: now, form: 'relative' };
  const relative = RELATIVE_BEFORE.exec(text) ?? RELATIVE_AGO.exec(text);
  if (relative) {
    let before = 0;
    for (const [, amount, unit] of relative[1]!.matchAll(DURATION_PART)) before += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
    return { type: 'time', ms: Math.round(now - before), form: 'relative' };
  }
  if (/^\d+$/.test(text)) {
    const ms = Number(text);
    if (ms > MAX_TIME) throw new InvalidMomentError(input, `${text} is too large for epoch milliseconds`);
    return { type: 'time', ms, form: 'epoch' };
  }
  if (/^\d+(\.\d+)+$/.test(text)) return { type: 'position', offsets: text.split('.').map((n) => safeNumber(n, input)) };
  const event = EVENT.exec(text);
  if (event) {
    return { type: 'event', topic: event[1] as FoldedTopic, partition: safeNumber(event[2]!, input), offset: safeNumber(event[3]!, input) };
  }
  const rfc = RFC3339.exec(text);
  if (rfc) {
    const [, year, month, day, hour, minute, second] = rfc.map(Number) as [number, number, number, number, number, number, number];
    const ms = Date.parse(text.replace(' ', 'T'));
    const valid = year > 0 && month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 60;
    if (!valid || Number.isNaN(ms)) throw new InvalidMomentError(input, `${text} is not a valid RFC 3339 time`);
    return { type: 'time', ms, form: 'rfc3339' };
  }
  throw new InvalidMomentError(input);
};

/**
 * The vector a `position` moment names on a log of `partitions` partitions. Throws
 * {@link InvalidMomentError} when it has another number of offsets.
 */
export const momentVector = (moment: Extract<Moment, { type: 'position' }>, input: string, partitions: number): PositionVector => {
  if (moment.offsets.length !== partitions * 2) {
    throw new InvalidMomentError(
      input,
      `a position of this cluster has ${partitions * 2} dot-separated offsets (desired, then observed, ${partitions === 1 ? 'one partition' : `${partitions} partitions`} each), not ${moment.offsets.length}`,
    );
  }
  return { desired: moment.offsets.slice(0, partitions), observed: moment.offsets.slice(partitions) };
};
