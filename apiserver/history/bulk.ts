/**
 * `GET /logplane/v1/history?namespace=NS&limit=N&continue=TOKEN`: the versions of every
 * object of a namespace (or of the cluster, without `namespace`) in one reply, paged as kube
 * lists are. `limit` bounds the versions of a page (an object's versions may continue on the
 * next page); `continue` carries on from where the previous page stopped, at the moment the
 * first page read (its `metadata.resourceVersion`), so a listing is consistent however long
 * the client takes. Read from the projection's per-object history (`historyPage`).
 */
import { formatVector, historyPage, parseVector, type HistoryPageQuery, type PositionVector, type Projection, type VersionSummary } from '../../projections/index.ts';
import { HistoryRequestError } from './moments.ts';

/** Versions in a page when the request names no `limit`. */
export const DEFAULT_HISTORY_LIMIT = 1_000;
/** The largest `limit` a request may ask for. */
export const MAX_HISTORY_LIMIT = 10_000;

/** The reply: kube's list shape, one item per object. */
export interface ObjectHistoryList {
  readonly kind: 'ObjectHistoryList';
  readonly apiVersion: 'logplane/v1';
  readonly metadata: { readonly resourceVersion: string; readonly continue?: string };
  readonly items: readonly { readonly key: string; readonly versions: readonly VersionSummary[] }[];
}

export interface ContinueToken {
  /** The position the listing reads. */
  readonly rv: string;
  /** The namespace it lists ('' for all). */
  readonly ns: string;
  readonly key: string;
  readonly skip: number;
}

/** kube's DNS-1123 label: the names a namespace may have. */
const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The `continue` of a page: where the next starts, and the moment the listing reads. */
export const encodeToken = (token: ContinueToken): string => Buffer.from(JSON.stringify(token)).toString('base64url');

const invalidContinue = (why: string): HistoryRequestError =>
  new HistoryRequestError(`continue: Invalid value: ${why}; start the listing again without "continue"`);

const decodeToken = (text: string, namespace: string, partitions: number): { upTo: PositionVector; key: string; skip: number } => {
  if (text.length > 4_096 || !/^[A-Za-z0-9_-]+$/.test(text)) throw invalidContinue('not a token this server issued');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalidContinue('not a token this server issued');
  }
  const token = parsed as Partial<Record<keyof ContinueToken, unknown>> | null;
  if (
    typeof token !== 'object' ||
    token === null ||
    typeof token.rv !== 'string' ||
    typeof token.ns !== 'string' ||
    typeof token.key !== 'string' ||
    typeof token.skip !== 'number' ||
    !Number.isSafeInteger(token.skip) ||
    token.skip < 0
  ) {
    throw invalidContinue('not a token this server issued');
  }
  if (token.ns !== namespace) throw invalidContinue(`the token continues the listing of namespace ${JSON.stringify(token.ns)}, not ${JSON.stringify(namespace)}`);
  let upTo: PositionVector;
  try {
    upTo = parseVector(token.rv, partitions);
  } catch {
    throw invalidContinue('not a token this server issued');
  }
  return { upTo, key: token.key, skip: token.skip };
};

/**
 * The parameters of a bulk listing (`namespace`, `limit`, `continue`), checked: bad ones are
 * 400s naming them. `upTo` is the moment the listing reads (the first page's, when continued).
 */
export const parseBulkQuery = (projection: Projection, query: URLSearchParams): { namespace: string; upTo: PositionVector; pageQuery: HistoryPageQuery } => {
  const namespace = query.get('namespace') ?? '';
  if (namespace !== '' && (namespace.length > 63 || !NAMESPACE_NAME.test(namespace))) {
    throw new HistoryRequestError(`namespace: Invalid value: ${JSON.stringify(namespace.slice(0, 100))}: a namespace is a DNS-1123 label (lowercase letters, digits and "-", at most 63)`);
  }
  const limitText = query.get('limit');
  const limit = limitText === null || limitText === '' ? DEFAULT_HISTORY_LIMIT : Number(limitText);
  if (!/^\d*$/.test(limitText ?? '') || !Number.isInteger(limit) || limit < 1 || limit > MAX_HISTORY_LIMIT) {
    throw new HistoryRequestError(`limit: Invalid value: ${JSON.stringify(limitText)}: must be an integer from 1 to ${MAX_HISTORY_LIMIT}`);
  }
  const continueText = query.get('continue');
  const resume = continueText === null || continueText === '' ? undefined : decodeToken(continueText, namespace, projection.partitions);
  const upTo = resume?.upTo ?? projection.cursor();
  return {
    namespace,
    upTo,
    pageQuery: {
      ...(namespace === '' ? {} : { namespace }),
      upTo,
      limit,
      ...(resume ? { resume: { key: resume.key, skip: resume.skip } } : {}),
    },
  };
};

/** The bulk history reply to `query` (the request's search parameters); bad parameters are 400s naming them. */
export const bulkHistory = (projection: Projection, query: URLSearchParams): ObjectHistoryList => {
  const { namespace, upTo, pageQuery } = parseBulkQuery(projection, query);
  const page = historyPage(projection.store, projection.partitions, pageQuery);
  const resourceVersion = formatVector(upTo);
  return {
    kind: 'ObjectHistoryList',
    apiVersion: 'logplane/v1',
    metadata: {
      resourceVersion,
      ...(page.next ? { continue: encodeToken({ rv: resourceVersion, ns: namespace, ...page.next }) } : {}),
    },
    items: page.items,
  };
};
