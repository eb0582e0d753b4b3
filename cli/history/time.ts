/**
 * How users name a moment on the command line (`get --at`, `diff --from/--to`, `audit
 * --since/--until`, `replay --to`, `debug reconcile --at`): the projection's one grammar
 * (`parseMoment` in projections/positions.ts). The position every verb prints is a list
 * resourceVersion (`42.17`: desired offsets, then observed, one per partition), pasteable
 * as it is; the event addresses `history` and `why` printed before (`desired/0/7`), RFC 3339
 * times, epoch milliseconds and relative times (`-5m`, `5m ago`, `-1h30m`, `now`) are read too.
 * A moment is checked here, so a typo fails before any request, and sent as typed: the
 * server resolves it against its own partitions and clock.
 */
import { InvalidMomentError, parseMoment, type Moment } from '../../projections/positions.ts';

export { InvalidMomentError, MOMENT_FORMS, parseMoment, type Moment } from '../../projections/positions.ts';

/** A moment the user typed, checked: `moment` parsed (relative times against now), `text` what is sent. */
export interface MomentArgument {
  readonly moment: Moment;
  readonly text: string;
}

/** Reads the value of `option` (e.g. `--at`); throws an error naming the option when it is no moment. */
export const momentArgument = (option: string, input: string, now: number = Date.now()): MomentArgument => {
  try {
    return { moment: parseMoment(input, now), text: input.trim() };
  } catch (error) {
    if (error instanceof InvalidMomentError) throw new Error(`${option}: ${error.message}`);
    throw error;
  }
};

/** RFC 3339 in UTC to the second: `2024-05-01T12:00:00Z`. */
export const formatTime = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
