/**
 * The bulk history (`GET /logplane/v1/history?namespace=NS`): pages of objects' versions,
 * read by following `continue` and joined into one history per object, keyed the way the
 * timeline names lanes (`Kind/namespace/name`). Pure but for the page reader it is given.
 */
import type { ObjectHistory, Version } from './timeline-model.ts';

/** One page of the bulk history, as the server sends it. */
export interface HistoryPage {
  readonly metadata: { readonly resourceVersion: string; readonly continue?: string };
  readonly items: readonly { readonly key: string; readonly versions: readonly Version[] }[];
}

/**
 * The lane key of a history key: the log names a kind with its group (`Job.batch/ns/name`,
 * `EndpointSlice.discovery.k8s.io/ns/name`); lanes, owner references and the object pages
 * use the kind alone (`Job/ns/name`).
 */
export const laneKeyOf = (key: string): string => {
  const slash = key.indexOf('/');
  const ref = slash < 0 ? key : key.slice(0, slash);
  const dot = ref.indexOf('.');
  return dot < 0 ? key : `${ref.slice(0, dot)}${key.slice(slash < 0 ? key.length : slash)}`;
};

/** The histories of `pages` (in the order read): an object whose versions span pages gets them all, in order. */
export const joinPages = (pages: readonly HistoryPage[]): ObjectHistory[] => {
  const byKey = new Map<string, Version[]>();
  for (const page of pages) {
    for (const item of page.items) {
      const key = laneKeyOf(item.key);
      const versions = byKey.get(key);
      if (versions) versions.push(...item.versions);
      else byKey.set(key, [...item.versions]);
    }
  }
  return [...byKey].map(([key, versions]) => ({ key, versions }));
};

/** Too many pages: the listing would not end (a server that keeps answering `continue`). */
export class TooManyPagesError extends Error {}

/**
 * Every page of a listing: `readPage(undefined)`, then `readPage(token)` with each page's
 * `continue` until a page has none; at most `maxPages`.
 */
export const readPages = async (readPage: (token: string | undefined) => Promise<HistoryPage>, maxPages: number): Promise<HistoryPage[]> => {
  const pages: HistoryPage[] = [];
  let token: string | undefined;
  do {
    if (pages.length === maxPages) throw new TooManyPagesError(`the history did not end after ${maxPages} pages`);
    const page = await readPage(token);
    pages.push(page);
    token = page.metadata.continue;
  } while (token !== undefined);
  return pages;
};
