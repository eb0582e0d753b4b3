import { describe, expect, it } from 'vitest';
import { newEventId } from './event-id.ts';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millisOf = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('newEventId', () => {
  it('is a UUIDv7 whose timestamp is the time it was made', () => {
    const before = Date.now();
    const id = newEventId();
    const after = Date.now();
    expect(id).toMatch(V7);
    expect(millisOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisOf(id)).toBeLessThanOrEqual(after + 1);
  });

  it('gives ids in increasing order, also many within one millisecond and when the clock goes back', () => {
    const now = Date.now() + 60_000;
    const ids = [
      ...Array.from({ length: 10_000 }, () => newEventId(now)),
      ...Array.from({ length: 100 }, () => newEventId(now - 5_000)),
      ...Array.from({ length: 100 }, (_, i) => newEventId(now + 1 + i)),
    ];
    for (const id of ids) expect(id).toMatch(V7);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!, `${ids[i - 1]} < ${ids[i]}`).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('carries random bits: no two of 1,000 ids share their last 62', () => {
    const tails = new Set(Array.from({ length: 1_000 }, () => newEventId().slice(19)));
    expect(tails.size).toBe(1_000);
  });
});
