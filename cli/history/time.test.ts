import { describe, expect, it } from 'vitest';
import { formatTime, momentArgument } from './time.ts';

const NOW = Date.parse('2024-05-01T12:00:00Z');

describe('moment arguments', () => {
  it.each(['42.17', 'desired/0/7', '-5m', '5m ago', 'now', '2024-05-01T11:00:00Z', '1714564800000'])('sends %j as typed', (input) => {
    expect(momentArgument('--at', ` ${input} `, NOW).text).toBe(input);
  });

  it('parses relative times against now (the age column of get --at)', () => {
    expect(momentArgument('--at', '5m ago', NOW).moment).toEqual({ type: 'time', ms: NOW - 300_000, form: 'relative' });
  });

  it('names the option of a malformed moment', () => {
    expect(() => momentArgument('--since', 'yesterday', NOW)).toThrow(/^--since: "yesterday" is not a moment: expected a position/);
  });

  it('formats times as RFC 3339 UTC to the second', () => {
    expect(formatTime(Date.parse('2024-05-01T12:00:00.999Z'))).toBe('2024-05-01T12:00:00Z');
  });
});
