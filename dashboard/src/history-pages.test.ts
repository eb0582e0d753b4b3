import { describe, expect, it } from 'vitest';
import { laneKeyOf, readPages, TooManyPagesError, type HistoryPage } from './history-pages.ts';

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
