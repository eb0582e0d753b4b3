/**
 * The bulk history (`GET /logplane/v1/history?namespace=NS`, and its timeline view): pages
 * read by following `continue`, and the lane keys of its object keys. Pure but for the page
 * reader it is given.
 */

/** One page of a bulk listing, as the server sends it. */
export interface HistoryPage<Item = unknown> {
  readonly metadata: { readonly resourceVersion: string; readonly continue?: string };
  readonly items: readonly Item[];
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

/** Too many pages: the listing would not end (a server that keeps answering `continue`). */
export class TooManyPagesError extends Error {}

/**
 * Every page of a listing: `readPage(undefined)`, then `readPage(token)` with each page's
 * `continue` until a page has none; at most `maxPages`.
 */
export const readPages = async <Page extends HistoryPage>(readPage: (token: string | undefined) => Promise<Page>, maxPages: number): Promise<Page[]> => {
  const pages: Page[] = [];
  let token: string | undefined;
  do {
    if (pages.length === maxPages) throw new TooManyPagesError(`the history did not end after ${maxPages} pages`);
    const page = await readPage(token);
    pages.push(page);
    token = page.metadata.continue;
  } while (token !== undefined);
  return pages;
};
