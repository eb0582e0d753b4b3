import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventIdTime, newEventId } from './event-id.ts';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newEventId', () => {
  it('is a UUIDv7 that carries the time it was made', () => {
    const before = Date.now();
    const id = newEventId();
    const after = Date.now();
    expect(id).toMatch(V7);
    expect(eventIdTime(id)).toBeGreaterThanOrEqual(before);
    expect(eventIdTime(id)).toBeLessThanOrEqual(after);
  });

  it('carries exactly the time it is given, also one in the past', () => {
    const past = Date.UTC(2026, 0, 5, 10, 0, 1);
    expect(eventIdTime(newEventId(past))).toBe(past);
    expect(eventIdTime(newEventId(past + 0.7))).toBe(past);
    expect(eventIdTime(newEventId(Date.now()))).toBeGreaterThan(past);
  });

  it('gives increasing ids within one millisecond, and across milliseconds', () => {
    const now = Date.now() + 60_000;
    const ids = [...Array.from({ length: 2_000 }, () => newEventId(now)), ...Array.from({ length: 100 }, (_, i) => newEventId(now + 1 + i))];
    for (const id of ids) expect(id).toMatch(V7);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!, `${ids[i - 1]} < ${ids[i]}`).toBe(true);
  });

  it('stays unique past the counter of one millisecond', () => {
    const now = Date.now() + 120_000;
    const ids = Array.from({ length: 10_000 }, () => newEventId(now));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(eventIdTime(id)).toBe(now);
  });
});

describe('eventIdTime', () => {
  it('is undefined for ids that are not UUIDv7', () => {
    expect(eventIdTime(randomUUID())).toBeUndefined();
    expect(eventIdTime('e0000000-0000-4000-8000-000000000001')).toBeUndefined();
    expect(eventIdTime('not-an-id')).toBeUndefined();
  });
});
