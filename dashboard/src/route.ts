/**
 * The page's address lives in the URL's fragment: `#/pods?ns=default&at=8.3`. `at` (a
 * moment in any form the history API accepts) puts every page into the past and is kept
 * when moving between pages. The token is never part of it.
 */
export interface Route {
  /** Path segments after `#/`, decoded. */
  readonly path: readonly string[];
  readonly query: URLSearchParams;
}

export const currentRoute = (): Route => {
  const hash = location.hash.replace(/^#\/?/, '');
  const [pathText = '', queryText = ''] = hash.split('?', 2);
  const path = pathText
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
  return { path, query: new URLSearchParams(queryText) };
};

/**
 * The fragment of a page: `segments` and `query`, with the current `at` and `ns` unless
 * `query` sets them (an empty string removes one).
 */
export const link = (segments: readonly string[], query: Readonly<Record<string, string>> = {}): string => {
  const current = currentRoute().query;
  const params = new URLSearchParams();
  for (const keep of ['ns', 'at']) {
    const value = current.get(keep);
    if (value !== null && !(keep in query)) params.set(keep, value);
  }
  for (const [name, value] of Object.entries(query)) if (value !== '') params.set(name, value);
  const text = params.toString();
  return `#/${segments.map(encodeURIComponent).join('/')}${text ? `?${text}` : ''}`;
};

export const navigate = (fragment: string): void => {
  location.hash = fragment;
};
