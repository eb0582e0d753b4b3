import { describe, expect, it } from 'vitest';
import { joinPages, laneKeyOf, readPages, TooManyPagesError, type HistoryPage } from './history-pages.ts';
import type { Version } from './timeline-model.ts';

const version = (position: string, time: number): Version => ({
  position,
  time,
  actor: { type: 'user', name: 'admin' },
  eventType: 'ObjectUpdated',
  verdict: { type: 'accepted' },
  change: 'MODIFIED',
  object: { kind: 'Pod', metadata: { name: 'p' } },
});

const page = (items: HistoryPage['items'], next?: string): HistoryPage => ({ metadata: { resourceVersion: '9.9', ...(next === undefined ? {} : { continue: next }) }, items });

describe('laneKeyOf', () => {
  it.each([
    ['Pod/default/web', 'Pod/default/web'],
    ['Job.batch/default/nightly', 'Job/default/nightly'],
    ['EndpointSlice.discovery.k8s.io/default/echo-abc', 'EndpointSlice/default/echo-abc'],
    ['Node//node-1', 'Node//node-1'],
    ['Pod/default/name.with.dots', 'Pod/default/name.with.dots'],
  ])('%s → %s', (key, lane) => {
    expect(laneKeyOf(key)).toBe(lane);
  });
});

describe('joinPages', () => {
  it("joins an object's versions split across pages, in order, and keeps each object once", () => {
    const histories = joinPages([
      page([{ key: 'Pod/default/a', versions: [version('1.0', 1)] }, { key: 'Pod/default/b', versions: [version('2.0', 2), version('3.0', 3)] }], 't1'),
      page([{ key: 'Pod/default/b', versions: [version('4.0', 4)] }, { key: 'Job.batch/default/j', versions: [version('5.0', 5)] }]),
    ]);
    expect(histories.map((h) => [h.key, h.versions.map((v) => v.position)])).toEqual([
      ['Pod/default/a', ['1.0']],
      ['Pod/default/b', ['2.0', '3.0', '4.0']],
      ['Job/default/j', ['5.0']],
    ]);
  });
});

describe('readPages', () => {
  it('follows continue until a page has none, sending each token once', async () => {
    const asked: (string | undefined)[] = [];
    const pages = await readPages(async (token) => {
      asked.push(token);
      return token === undefined ? page([], 'a') : token === 'a' ? page([], 'b') : page([]);
    }, 10);
    expect(asked).toEqual([undefined, 'a', 'b']);
    expect(pages).toHaveLength(3);
  });

  it('stops a listing that does not end after the most pages allowed', async () => {
    await expect(readPages(async () => page([], 'again'), 5)).rejects.toBeInstanceOf(TooManyPagesError);
  });
});
