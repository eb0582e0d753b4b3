import { describe, expect, it } from 'vitest';
import { formatVector, InvalidMomentError, momentVector, parseMoment, parseVector, type Moment } from './positions.ts';

const NOW = Date.parse('2024-05-01T12:00:00Z');

describe('parseMoment', () => {
  it.each<[string, Moment]>([
    // The one printed format: a list resourceVersion (desired offsets, then observed).
    ['7.0', { type: 'position', offsets: [7, 0] }],
    ['0.0', { type: 'position', offsets: [0, 0] }],
    ['42.17', { type: 'position', offsets: [42, 17] }],
    ['53.56', { type: 'position', offsets: [53, 56] }],
    ['42.7.19.3', { type: 'position', offsets: [42, 7, 19, 3] }],
    [' 42.17 ', { type: 'position', offsets: [42, 17] }],
    // What history and why printed before: the address of one event.
    ['desired/0/7', { type: 'event', topic: 'desired', partition: 0, offset: 7 }],
    ['observed/2/130', { type: 'event', topic: 'observed', partition: 2, offset: 130 }],
    // Times.
    ['2024-05-01T11:00:00Z', { type: 'time', ms: Date.parse('2024-05-01T11:00:00Z'), form: 'rfc3339' }],
    ['2024-05-01T11:00:00.250Z', { type: 'time', ms: Date.parse('2024-05-01T11:00:00.250Z'), form: 'rfc3339' }],
    ['2024-05-01T13:00:00+02:00', { type: 'time', ms: Date.parse('2024-05-01T11:00:00Z'), form: 'rfc3339' }],
    ['2024-05-01t11:00:00z', { type: 'time', ms: Date.parse('2024-05-01T11:00:00Z'), form: 'rfc3339' }],
    ['2024-05-01 11:00:00Z', { type: 'time', ms: Date.parse('2024-05-01T11:00:00Z'), form: 'rfc3339' }],
    ['1714564800000', { type: 'time', ms: 1714564800000, form: 'epoch' }],
    ['42', { type: 'time', ms: 42, form: 'epoch' }],
    // Relative times.
    ['now', { type: 'time', ms: NOW, form: 'relative' }],
    ['-500ms', { type: 'time', ms: NOW - 500, form: 'relative' }],
    ['-30s', { type: 'time', ms: NOW - 30_000, form: 'relative' }],
    ['-5m', { type: 'time', ms: NOW - 300_000, form: 'relative' }],
    ['-2h', { type: 'time', ms: NOW - 7_200_000, form: 'relative' }],
    ['-1d', { type: 'time', ms: NOW - 86_400_000, form: 'relative' }],
    ['-1w', { type: 'time', ms: NOW - 604_800_000, form: 'relative' }],
    ['-1h30m', { type: 'time', ms: NOW - 5_400_000, form: 'relative' }],
    ['-1.5h', { type: 'time', ms: NOW - 5_400_000, form: 'relative' }],
    ['5m ago', { type: 'time', ms: NOW - 300_000, form: 'relative' }],
    ['1h30m ago', { type: 'time', ms: NOW - 5_400_000, form: 'relative' }],
    ['10s  ago', { type: 'time', ms: NOW - 10_000, form: 'relative' }],
    [' -5m ', { type: 'time', ms: NOW - 300_000, form: 'relative' }],
  ])('reads %j', (input, expected) => {
    expect(parseMoment(input, NOW)).toEqual(expected);
  });

  it.each([
    '',
    ' ',
    'yesterday',
    'ago',
    '5m',
    '+5m',
    '-5x',
    '-',
    '5 m ago',
    '5m ago ago',
    '-5m ago',
    'in 5m',
    '42.',
    '.42',
    '42..1',
    '42.-1',
    '1.5e3',
    'pos:42',
    '99999999999999999999.0',
    '99999999999999999',
    'desired/0',
    'desired/0/7/1',
    'desired/-1/7',
    'desired/0/x',
    'heartbeats/0/7',
    'DESIRED/0/7',
    '2024-05-01',
    '2024-05-01T11:00:00',
    '2024-13-01T00:00:00Z',
    '2024-05-01T25:00:00Z',
    '2024-05-32T00:00:00Z',
  ])('rejects %j', (input) => {
    expect(() => parseMoment(input, NOW)).toThrow(InvalidMomentError);
  });

  it('names the input and the accepted forms', () => {
    expect(() => parseMoment('yesterday', NOW)).toThrow(
      '"yesterday" is not a moment: expected a position (a resourceVersion such as 42.17, or an event such as desired/0/7), a time (RFC 3339',
    );
  });
});

describe('positions as list resourceVersions', () => {
  it.each<[number, string]>([
    [1, '7.0'],
    [1, '53.56'],
    [3, '1.2.3.4.5.6'],
  ])('on %i partition(s), %s reads back as it prints', (partitions, text) => {
    const moment = parseMoment(text);
    if (moment.type !== 'position') throw new Error('not a position');
    const vector = momentVector(moment, text, partitions);
    expect(vector).toEqual(parseVector(text, partitions));
    expect(formatVector(vector)).toBe(text);
  });

  it.each<[number, string]>([
    [1, '1.2.3'],
    [1, '1.2.3.4'],
    [2, '7.0'],
  ])('on %i partition(s), %s has the wrong number of offsets', (partitions, text) => {
    const moment = parseMoment(text);
    if (moment.type !== 'position') throw new Error('not a position');
    expect(() => momentVector(moment, text, partitions)).toThrow(`has ${partitions * 2} dot-separated offsets`);
  });
});
