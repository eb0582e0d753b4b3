import { describe, expect, it } from 'vitest';
import { formatTime, MomentParseError, momentQueryValue, parseMoment, parseTime, type Moment } from './time.ts';

const NOW = Date.parse('2024-05-01T12:00:00Z');

describe('parseMoment', () => {
  it.each<[string, Moment]>([
    ['2024-05-01T11:00:00Z', { type: 'time', ms: Date.parse('2024-05-01T11:00:00Z'), form: 'rfc3339' }],
    ['2024-05-01T11:00:00.250Z', { type: 'time', ms: Date.parse('2024-05-01T11:00:00.250Z'), form: 'rfc3339' }],
    ['2024-05-01T13:00:00+02:00', { type: 'time', ms: Date.parse('2024-05-01T11:00:00Z'), form: 'rfc3339' }],
    ['2024-05-01 11:00:00Z', { type: 'time', ms: Date.parse('2024-05-01T11:00:00Z'), form: 'rfc3339' }],
    ['1714564800000', { type: 'time', ms: 1714564800000, form: 'epoch' }],
    ['42', { type: 'time', ms: 42, form: 'epoch' }],
    ['-30s', { type: 'time', ms: NOW - 30_000, form: 'relative' }],
    ['-5m', { type: 'time', ms: NOW - 300_000, form: 'relative' }],
    ['-2h', { type: 'time', ms: NOW - 7_200_000, form: 'relative' }],
    ['-1d', { type: 'time', ms: NOW - 86_400_000, form: 'relative' }],
    ['-1h30m', { type: 'time', ms: NOW - 5_400_000, form: 'relative' }],
    ['-500ms', { type: 'time', ms: NOW - 500, form: 'relative' }],
    ['now', { type: 'time', ms: NOW, form: 'relative' }],
    ['0.0', { type: 'position', resourceVersion: '0.0' }],
    ['42.17', { type: 'position', resourceVersion: '42.17' }],
    ['42.7.19.3', { type: 'position', resourceVersion: '42.7.19.3' }],
    [' -5m ', { type: 'time', ms: NOW - 300_000, form: 'relative' }],
  ])('%s', (input, expected) => {
    expect(parseMoment(input, NOW)).toEqual(expected);
  });

  it.each(['', 'yesterday', '5m', '+5m', '-5x', '42.', '.42', '42..1', '2024-13-01T00:00:00Z', '2024-05-01', '2024-05-01T25:00:00Z', 'pos:42', '1.5e3', '-'])(
    'rejects %j',
    (input) => {
      expect(() => parseMoment(input, NOW)).toThrow(MomentParseError);
    },
  );

  it('needs a time, not a position, for --since', () => {
    expect(parseTime('-1h', NOW)).toBe(NOW - 3_600_000);
    expect(() => parseTime('42.17', NOW)).toThrow(/is a position/);
  });

  it('sends times as epoch ms and positions as they are', () => {
    expect(momentQueryValue(parseMoment('-5m', NOW))).toBe(String(NOW - 300_000));
    expect(momentQueryValue(parseMoment('42.17', NOW))).toBe('42.17');
  });

  it('formats times as RFC 3339 UTC to the second', () => {
    expect(formatTime(Date.parse('2024-05-01T12:00:00.999Z'))).toBe('2024-05-01T12:00:00Z');
  });
});
