/**
 * How users name a moment in history: an RFC 3339 time, epoch milliseconds, a time
 * relative to now (`-5m`, `-2h`, `-1h30m`, `now`), or a log position: a resourceVersion
 * vector such as `42.17` (a position always has a dot: one offset per partition of the
 * desired topic, then one per partition of the observed topic). Bare digits are epoch
 * milliseconds, as the history API reads them.
 */

/** A parsed moment: a point in time (epoch ms) or a log position. */
export type Moment =
  | { readonly type: 'time'; readonly ms: number; readonly form: 'rfc3339' | 'epoch' | 'relative' }
  | { readonly type: 'position'; readonly resourceVersion: string };

/** The input is none of the accepted forms. */
export class MomentParseError extends Error {
  override readonly name = 'MomentParseError';
  constructor(readonly input: string) {
    super(
      `invalid time or position ${JSON.stringify(input)}: expected an RFC 3339 time (2024-05-01T12:00:00Z), ` +
        'epoch milliseconds (1714564800000), a relative time (-5m, -2h, -30s, -1h30m, now) ' +
        'or a position (42.17)',
    );
  }
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const RELATIVE = /^-((?:\d+(?:\.\d+)?(?:ms|s|m|h|d|w))+)$/;
const RELATIVE_PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g;
const POSITION = /^\d+(\.\d+)+$/;

/** Parses a moment; relative times are resolved against `now`. Throws {@link MomentParseError}. */
export const parseMoment = (input: string, now: number = Date.now()): Moment => {
  const text = input.trim();
  if (text === 'now') return { type: 'time', ms: now, form: 'relative' };
  const relative = RELATIVE.exec(text);
  if (relative) {
    let offset = 0;
    for (const [, amount, unit] of relative[1]!.matchAll(RELATIVE_PART)) offset += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
    return { type: 'time', ms: Math.round(now - offset), form: 'relative' };
  }
  if (/^\d+$/.test(text)) return { type: 'time', ms: Number(text), form: 'epoch' };
  if (POSITION.test(text)) return { type: 'position', resourceVersion: text };
  const rfc = RFC3339.exec(text);
  if (rfc) {
    const [, year, month, day, hour, minute, second] = rfc.map(Number) as [number, number, number, number, number, number, number];
    const ms = Date.parse(text.replace(' ', 'T'));
    const valid = month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 60 && year > 0;
    if (!valid || Number.isNaN(ms)) throw new MomentParseError(input);
    return { type: 'time', ms, form: 'rfc3339' };
  }
  throw new MomentParseError(input);
};

/** Parses a moment that must be a time (`--since`, `--until`). */
export const parseTime = (input: string, now: number = Date.now()): number => {
  const moment = parseMoment(input, now);
  if (moment.type !== 'time') throw new Error(`${JSON.stringify(input)} is a position; a time is needed here (RFC 3339, epoch ms or -5m)`);
  return moment.ms;
};

/** How a moment is sent to the history API: epoch ms for times, the vector for positions. */
export const momentQueryValue = (moment: Moment): string => (moment.type === 'time' ? String(moment.ms) : moment.resourceVersion);

/** RFC 3339 in UTC to the second: `2024-05-01T12:00:00Z`. */
export const formatTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
