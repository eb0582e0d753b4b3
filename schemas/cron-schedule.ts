/**
 * CronJob schedules as kube-controller-manager 1.32 reads them (robfig/cron v3's
 * `ParseStandard` behind `formatSchedule`): five fields (minute, hour, day of month,
 * month, day of week; names and `?` allowed), the descriptors `@yearly`, `@annually`,
 * `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly` and `@every <duration>`, a
 * `TZ=`/`CRON_TZ=` prefix, and `spec.timeZone` as the zone the fields are read in.
 *
 * The grammar is read here as robfig reads it, with its messages (so cron-parser's
 * extensions — seconds, `L`, `W`, `#` — are refused), and each field is handed to
 * cron-parser as `*` or the explicit list of its values, so the day-of-month/day-of-week
 * rule is robfig's; the next activation is cron-parser's, in the schedule's zone.
 * Everything is a pure function of its arguments: no default zone of the machine.
 */
import { CronExpressionParser } from 'cron-parser';

/** A parsed schedule: the first activation strictly after `afterMs`, or undefined when there is none within 5 years (robfig's limit). */
export interface Schedule {
  readonly next: (afterMs: number) => number | undefined;
  /** The zone its fields are read in (IANA name; 'UTC' by default). */
  readonly timeZone: string;
}

/** A schedule, or why it cannot be one (robfig's message). */
export type ParsedSchedule = { readonly type: 'ok'; readonly schedule: Schedule } | { readonly type: 'invalid'; readonly message: string };

const DESCRIPTORS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface FieldBounds {
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  /** The value of the first name (months count from 1). */
  readonly firstName?: number;
}

const FIELDS: readonly FieldBounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTH_NAMES, firstName: 1 },
  { min: 0, max: 6, names: DAY_NAMES, firstName: 0 },
];

/** Five years, robfig's search limit for a next activation. */
const SEARCH_LIMIT_MS = 5 * 366 * 24 * 3600 * 1000;

class ScheduleError extends Error {}

/** Go's strconv.Atoi as robfig's `mustParseInt` uses it. */
const parseInteger = (text: string): number => {
  if (!/^[+-]?\d+$/.test(text)) throw new ScheduleError(`failed to parse int from ${text}: strconv.Atoi: parsing "${text}": invalid syntax`);
  const value = Number(text);
  if (value < 0) throw new ScheduleError(`negative number (${value}) not allowed: ${text}`);
  return value;
};

const parseIntOrName = (text: string, bounds: FieldBounds): number => {
  const index = bounds.names?.indexOf(text.toLowerCase()) ?? -1;
  return index >= 0 ? index + (bounds.firstName ?? 0) : parseInteger(text);
};

/** The values one comma-separated part of a field selects, and whether it is robfig's "star" (`*` or `?` with step 1). */
interface FieldRange {
  readonly values: readonly number[];
  readonly star: boolean;
}

/** robfig's `getRange`: one comma-separated part of a field, with its checks and messages. */
const parseRange = (expr: string, bounds: FieldBounds): FieldRange => {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = (rangeAndStep[0] ?? '').split('-');
  const single = lowAndHigh.length === 1;
  let start: number;
  let end: number;
  let star = false;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = bounds.min;
    end = bounds.max;
    star = true;
  } else {
    start = parseIntOrName(lowAndHigh[0] ?? '', bounds);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1] ?? '', bounds);
    else throw new ScheduleError(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = parseInteger(rangeAndStep[1] ?? '');
    if (single) end = bounds.max;
    if (step > 1) star = false;
  } else if (rangeAndStep.length > 2) {
    throw new ScheduleError(`too many slashes: ${expr}`);
  }
  if (start < bounds.min) throw new ScheduleError(`beginning of range (${start}) below minimum (${bounds.min}): ${expr}`);
  if (end > bounds.max) throw new ScheduleError(`end of range (${end}) above maximum (${bounds.max}): ${expr}`);
  if (start > end) throw new ScheduleError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new ScheduleError(`step of range should be a positive number: ${expr}`);
  const values: number[] = [];
  for (let value = start; value <= end; value += step) values.push(value);
  return { values, star };
};

/**
 * A field as cron-parser reads it the way robfig means it: `*` for a star field, else the
 * explicit list of its values. (robfig ANDs day of month and day of week when either is a
 * star — `*` or `?`, with a step of 1 if any — and ORs them otherwise; cron-parser ORs
 * unless one is literally `*`, and refuses a list that selects a value twice.)
 */
const normalizedField = (field: string, bounds: FieldBounds): string => {
  const ranges = field.split(',').map((part) => parseRange(part, bounds));
  if (ranges.some((range) => range.star)) return '*';
  return [...new Set(ranges.flatMap((range) => range.values))].sort((a, b) => a - b).join(',');
};

/** Go's time.ParseDuration, for `@every` (units ns … h, fractions, several terms). */
const GO_DURATION_UNITS_MS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const parseGoDuration = (text: string): number => {
  const match = /^([+-]?)((?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(text);
  if (!match || match[1] === '-') throw new ScheduleError(`failed to parse duration ${text}: time: invalid duration "${text}"`);
  let total = 0;
  for (const term of (match[2] ?? '').matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(term[1]) * (GO_DURATION_UNITS_MS[term[2] ?? ''] ?? 0);
  return total;
};

/** Whether `zone` names a time zone as Go's `time.LoadLocation` finds one ('' and 'UTC' are UTC; 'Local' is refused: it would depend on the machine). */
export const timeZoneError = (zone: string): string | undefined => {
  if (zone === '' || zone === 'UTC') return undefined;
  if (zone === 'Local') return 'unknown time zone Local';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return undefined;
  } catch {
    return `unknown time zone ${zone}`;
  }
};

const fiveFieldSchedule = (fields: readonly string[], timeZone: string): Schedule => {
  const expression = fields.map((field, i) => normalizedField(field, FIELDS[i] as FieldBounds)).join(' ');
  const next = (afterMs: number): number | undefined => {
    try {
      const at = CronExpressionParser.parse(expression, { currentDate: new Date(afterMs), tz: timeZone }).next().getTime();
      return at - afterMs <= SEARCH_LIMIT_MS ? at : undefined;
    } catch {
      return undefined;
    }
  };
  return { next, timeZone };
};

/**
 * Parses `spec` as robfig's `ParseStandard`, the `TZ=`/`CRON_TZ=` prefix included. Without
 * a prefix the fields are read in UTC (robfig reads them in the process' local zone, which
 * is UTC where kube-controller-manager runs; a decision must not depend on the machine).
 */
export const parseSchedule = (spec: string): ParsedSchedule => {
  try {
    if (spec.length === 0) throw new ScheduleError('empty spec string');
    let rest = spec;
    let zone = 'UTC';
    if (rest.startsWith('TZ=') || rest.startsWith('CRON_TZ=')) {
      const space = rest.indexOf(' ');
      const name = rest.slice(rest.indexOf('=') + 1, space < 0 ? undefined : space);
      const error = timeZoneError(name);
      if (error) throw new ScheduleError(`provided bad location ${name}: ${error}`);
      zone = name === '' ? 'UTC' : name;
      rest = space < 0 ? '' : rest.slice(space).trim();
    }
    if (rest.startsWith('@')) {
      if (rest.startsWith('@every ')) {
        const ms = parseGoDuration(rest.slice('@every '.length));
        // robfig's Every: at least a second, whole seconds.
        const delay = Math.max(1000, ms - (ms % 1000));
        return { type: 'ok', schedule: { next: (afterMs) => afterMs - (afterMs % 1000) + delay, timeZone: zone } };
      }
      const fields = DESCRIPTORS[rest];
      if (fields === undefined) throw new ScheduleError(`unrecognized descriptor: ${rest}`);
      return { type: 'ok', schedule: fiveFieldSchedule(fields.split(' '), zone) };
    }
    const fields = rest.split(/\s+/).filter((field) => field !== '');
    if (fields.length !== 5) throw new ScheduleError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
    return { type: 'ok', schedule: fiveFieldSchedule(fields, zone) };
  } catch (error) {
    if (error instanceof ScheduleError) return { type: 'invalid', message: error.message };
    throw error;
  }
};

/** The CronJob's schedule string as kube's `formatSchedule` hands it to the parser: `TZ=<timeZone> <schedule>` unless the schedule names a zone itself. */
export const formatSchedule = (schedule: string, timeZone: string | undefined): string => {
  if (schedule.includes('TZ')) return schedule;
  if (timeZone !== undefined && timeZoneError(timeZone) === undefined) return `TZ=${timeZone} ${schedule}`;
  return schedule;
};

/** Go's time.RFC3339 of `ms` in `timeZone` ("2026-12-02T01:00:00+01:00"; "Z" for a zero offset). */
export const rfc3339InZone = (ms: number, timeZone: string): string => {
  const zone = timeZone === '' ? 'UTC' : timeZone;
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    })
      .formatToParts(new Date(ms))
      .map((part) => [part.type, part.value]),
  ) as Record<string, string>;
  const offset = (parts['timeZoneName'] ?? 'GMT').replace(/^GMT/, '');
  const year = (parts['year'] ?? '').padStart(4, '0');
  const zero = offset === '' || /^[+-]00:00$/.test(offset);
  return `${year}-${parts['month']}-${parts['day']}T${parts['hour']}:${parts['minute']}:${parts['second']}${zero ? 'Z' : offset}`;
};
