/**
 * kube's authorization attributes of a request, computed from its method, path and query as
 * kube-apiserver's `RequestInfoFactory` does (`k8s.io/apiserver/pkg/endpoints/request/requestinfo.go`):
 * `/api/v1/namespaces/a/pods/x/status` is a resource request (verb from the method, `list`/`watch`
 * for collections, `deletecollection`), everything else (discovery, `/version`, `/metrics`,
 * `/logplane/v1/…`) a non-resource request with the lowercased method as its verb.
 */
import { isWatchRequest } from '../watch.ts';

/** Who is asking. */
export interface Subject {
  readonly name: string;
  readonly uid?: string;
  readonly groups: readonly string[];
}

/** A request to an API resource. */
export interface ResourceAttributes {
  readonly type: 'resource';
  readonly user: Subject;
  readonly verb: string;
  readonly apiGroup: string;
  /** `*` (any) when a review leaves it out. */
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  /** `''` for cluster-scoped requests and lists across all namespaces. */
  readonly namespace: string;
  readonly name: string;
  /** A list's or watch's `fieldSelector` as sent (the Node authorizer reads `spec.nodeName=` from it). */
  readonly fieldSelector?: string;
}

/** A request to a path that is not an API resource. */
export interface NonResourceAttributes {
  readonly type: 'nonResource';
  readonly user: Subject;
  readonly verb: string;
  readonly path: string;
}

export type Attributes = ResourceAttributes | NonResourceAttributes;

/** Verbs that are a URL segment before the resource (kube's legacy `/api/v1/watch/…`, `/proxy/…`). */
const SPECIAL_VERBS: ReadonlySet<string> = new Set(['proxy', 'watch']);
/** Special verbs that take no subresource. */
const SPECIAL_VERBS_NO_SUBRESOURCES: ReadonlySet<string> = new Set(['proxy']);
/** Subresources of a namespace (`/api/v1/namespaces/x/status`) rather than resources in it. */
const NAMESPACE_SUBRESOURCES: ReadonlySet<string> = new Set(['status', 'finalize']);

const splitPath = (path: string): string[] => {
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? [] : trimmed.split('/');
};

const decode = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/** Whether a name may be a URL path segment (kube's `path.IsValidPathSegmentName`). */
const isPathSegmentName = (name: string): boolean => name !== '' && name !== '.' && name !== '..' && !/[/%]/.test(name);

/**
 * The name a list or watch is pinned to by `fieldSelector=metadata.name=x` (kube's
 * `RequiresExactMatch("metadata.name")`), so `resourceNames` rules cover `kubectl get pod x -w`.
 */
const pinnedName = (query: URLSearchParams): string => {
  const selector = query.get('fieldSelector');
  if (selector === null) return '';
  for (const term of selector.split(',')) {
    const match = /^\s*metadata\.name\s*==?\s*(.*?)\s*$/.exec(term);
    if (match && isPathSegmentName(match[1]!)) return match[1]!;
  }
  return '';
};

const RESOURCE_VERBS: Readonly<Record<string, string>> = { POST: 'create', GET: 'get', HEAD: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** The attributes kube-apiserver authorizes for a request by `user` (`pathname` undecoded, as on the wire). */
export const requestAttributes = (user: Subject, method: string, pathname: string, query: URLSearchParams): Attributes => {
  const nonResource: NonResourceAttributes = { type: 'nonResource', user, verb: method.toLowerCase(), path: decode(pathname) };
  let parts = splitPath(pathname).map(decode);
  if (parts.length < 3) return nonResource;
  const prefix = parts[0]!;
  if (prefix !== 'api' && prefix !== 'apis') return nonResource;
  parts = parts.slice(1);
  let apiGroup = '';
  if (prefix === 'apis') {
    if (parts.length < 3) return nonResource;
    apiGroup = parts[0]!;
    parts = parts.slice(1);
  }
  const apiVersion = parts[0]!;
  parts = parts.slice(1);
  let verb: string;
  let verbViaMethod = false;
  if (SPECIAL_VERBS.has(parts[0]!)) {
    if (parts.length < 2) return nonResource;
    verb = parts[0]!;
    parts = parts.slice(1);
  } else {
    verbViaMethod = true;
    verb = RESOURCE_VERBS[method] ?? '';
  }
  let namespace = '';
  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      namespace = parts[1]!;
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2]!)) parts = parts.slice(2);
    }
  }
  const resource = parts[0] ?? '';
  let name = parts.length >= 2 ? parts[1]! : '';
  const subresource = parts.length >= 3 && !SPECIAL_VERBS_NO_SUBRESOURCES.has(verb) ? parts[2]! : '';
  // A collection GET is a list or a watch (also `?watch=true`), and may be pinned to one name.
  if (verbViaMethod && name === '' && verb === 'get') {
    verb = isWatchRequest(query) ? 'watch' : 'list';
    name = pinnedName(query);
  }
  if (verbViaMethod && name === '' && verb === 'delete') verb = 'deletecollection';
  const fieldSelector = (verb === 'list' || verb === 'watch') ? query.get('fieldSelector') : null;
  return { type: 'resource', user, verb, apiGroup, apiVersion, resource, subresource, namespace, name, ...(fieldSelector !== null ? { fieldSelector } : {}) };
};
