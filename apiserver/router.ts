/**
 * Maps a request path to what it addresses, with kube-apiserver's URL layout:
 * `/api/v1/namespaces/{ns}/pods/{name}/status`, `/apis/apps/v1/deployments` (all
 * namespaces), `/api/v1/nodes/{name}`, the legacy `/api/v1/watch/...` prefix, discovery,
 * OpenAPI, health and metrics.
 */
import { findReviewResource, REVIEW_GROUP_VERSIONS, type ReviewResource } from './authorization/review-resources.ts';
import { METRICS_GROUP_VERSION, type MetricsTarget } from './metrics-api.ts';
import { BUILT_IN_RESOURCES, type ServedResources } from './custom-resources/served.ts';
import type { GroupVersion, ResourceInfo, SubresourceInfo } from './resources.ts';

/** A resource, collection or subresource a request addresses. */
export interface ResourceTarget {
  readonly resource: ResourceInfo;
  /** Set for namespaced requests; undefined for cluster-scoped kinds and all-namespace lists. */
  readonly namespace: string | undefined;
  /** Undefined for a collection. */
  readonly name: string | undefined;
  readonly subresource: SubresourceInfo['name'] | undefined;
}

export type Route =
  | { readonly type: 'health'; readonly check: 'healthz' | 'readyz' | 'livez' }
  | { readonly type: 'metrics' }
  | { readonly type: 'version' }
  | { readonly type: 'apiVersions' }
  | { readonly type: 'apiGroupList' }
  | { readonly type: 'apiGroup'; readonly group: string }
  | { readonly type: 'resourceList'; readonly groupVersion: GroupVersion }
  | { readonly type: 'openapiV2' }
  /** OIDC discovery of the service-account issuer (`/.well-known/openid-configuration`, `/openid/v1/jwks`). */
  | { readonly type: 'oidc'; readonly document: 'configuration' | 'keys' }
  | { readonly type: 'openapiV3Index' }
  | { readonly type: 'openapiV3Document'; readonly groupVersion: GroupVersion }
  | { readonly type: 'resource'; readonly target: ResourceTarget; readonly watchPrefix: boolean }
  | { readonly type: 'bindings'; readonly namespace: string }
  /** A create-only review (SelfSubjectAccessReview …), answered by the authorizer, not stored. */
  | { readonly type: 'review'; readonly review: ReviewResource; readonly namespace: string | undefined }
  /** The resource metrics API (`metrics.k8s.io`, metrics-api.ts). */
  | { readonly type: 'resourceMetrics'; readonly target: MetricsTarget }
  | { readonly type: 'notFound' };

const NOT_FOUND: Route = { type: 'notFound' };

const decode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

const servedGroupVersion = (served: ServedResources, group: string, version: string): GroupVersion | undefined =>
  served.groupVersions.find((gv) => gv.group === group && gv.version === version);

/** Routes the segments after a group/version prefix. */
const routeResource = (served: ServedResources, gv: GroupVersion, segments: readonly string[]): Route => {
  let rest = segments;
  const watchPrefix = rest[0] === 'watch';
  if (watchPrefix) rest = rest.slice(1);
  const target = (resource: ResourceInfo, namespace: string | undefined, tail: readonly string[]): Route => {
    const [name, subresource, ...extra] = tail;
    if (extra.length > 0) return NOT_FOUND;
    if (name === '' || subresource === '') return NOT_FOUND;
    if (subresource !== undefined && !resource.subresources.some((s) => s.name === subresource)) return NOT_FOUND;
    return {
      type: 'resource',
      watchPrefix,
      target: { resource, namespace, name, subresource: subresource as SubresourceInfo['name'] | undefined },
    };
  };
  const [first, second, third, ...tail] = rest;
  if (first === undefined) return NOT_FOUND;
  if (first === 'namespaces' && second !== undefined && third !== undefined && gv.group === '' && third === 'bindings' && tail.length === 0) {
    return watchPrefix ? NOT_FOUND : { type: 'bindings', namespace: second };
  }
  if (first === 'namespaces' && second !== undefined && third !== undefined && third !== 'status') {
    const resource = served.find(gv.group, gv.version, third);
    if (!resource || !resource.namespaced) return NOT_FOUND;
    return target(resource, second, tail);
  }
  const resource = served.find(gv.group, gv.version, first);
  if (!resource) return NOT_FOUND;
  const nameAndSub = [second, third, ...tail].filter((s): s is string => s !== undefined);
  if (resource.namespaced && nameAndSub.length > 0) return NOT_FOUND;
  return target(resource, undefined, nameAndSub);
};

/** Routes the segments after `/apis/metrics.k8s.io/v1beta1`: `nodes[/NAME]`, `pods`, `namespaces/NS/pods[/NAME]`. */
const routeMetrics = (tail: readonly string[]): Route => {
  const [first, second, third, fourth, ...extra] = tail;
  if (extra.length > 0 || tail.some((segment) => segment === '')) return NOT_FOUND;
  if (first === 'nodes' && third === undefined) return { type: 'resourceMetrics', target: { resource: 'nodes', namespace: undefined, name: second } };
  if (first === 'pods' && second === undefined) return { type: 'resourceMetrics', target: { resource: 'pods', namespace: undefined, name: undefined } };
  if (first === 'namespaces' && second !== undefined && third === 'pods') return { type: 'resourceMetrics', target: { resource: 'pods', namespace: second, name: fourth } };
  return NOT_FOUND;
};

/** Routes a URL path (without the query) to what `served` holds (by default the built-in kinds only). */
export const route = (pathname: string, served: ServedResources = BUILT_IN_RESOURCES): Route => {
  const raw = pathname.replace(/\/+$/, '').split('/').slice(1);
  const segments: string[] = [];
  for (const s of raw) {
    const decoded = decode(s);
    if (decoded === undefined) return NOT_FOUND;
    segments.push(decoded);
  }
  const [head, ...rest] = segments;
  switch (head) {
    case 'healthz':
    case 'readyz':
    case 'livez':
      return { type: 'health', check: head };
    case 'metrics':
      return rest.length === 0 ? { type: 'metrics' } : NOT_FOUND;
    case '.well-known':
      return rest.length === 1 && rest[0] === 'openid-configuration' ? { type: 'oidc', document: 'configuration' } : NOT_FOUND;
    case 'openid':
      return rest.length === 2 && rest[0] === 'v1' && rest[1] === 'jwks' ? { type: 'oidc', document: 'keys' } : NOT_FOUND;
    case 'version':
      return rest.length === 0 ? { type: 'version' } : NOT_FOUND;
    case 'api': {
      if (rest.length === 0) return { type: 'apiVersions' };
      const gv = servedGroupVersion(served, '', rest[0]!);
      if (!gv) return NOT_FOUND;
      return rest.length === 1 ? { type: 'resourceList', groupVersion: gv } : routeResource(served, gv, rest.slice(1));
    }
    case 'apis': {
      if (rest.length === 0) return { type: 'apiGroupList' };
      const [group, version, ...tail] = rest;
      if (version === undefined) {
        return [...served.groupVersions, ...REVIEW_GROUP_VERSIONS, METRICS_GROUP_VERSION].some((gv) => gv.group === group) ? { type: 'apiGroup', group: group! } : NOT_FOUND;
      }
      if (group === METRICS_GROUP_VERSION.group && version === METRICS_GROUP_VERSION.version) {
        return tail.length === 0 ? { type: 'resourceList', groupVersion: METRICS_GROUP_VERSION } : routeMetrics(tail);
      }
      const reviewGroupVersion = REVIEW_GROUP_VERSIONS.find((gv) => gv.group === group && gv.version === version);
      if (reviewGroupVersion) {
        if (tail.length === 0) return { type: 'resourceList', groupVersion: reviewGroupVersion };
        if (tail.length === 1) {
          const review = findReviewResource(group!, version, tail[0]!, false);
          return review ? { type: 'review', review, namespace: undefined } : NOT_FOUND;
        }
        const local = tail.length === 3 && tail[0] === 'namespaces' ? findReviewResource(group!, version, tail[2]!, true) : undefined;
        return local ? { type: 'review', review: local, namespace: tail[1]! } : NOT_FOUND;
      }
      const gv = servedGroupVersion(served, group!, version);
      if (!gv || gv.group === '') return NOT_FOUND;
      return tail.length === 0 ? { type: 'resourceList', groupVersion: gv } : routeResource(served, gv, tail);
    }
    case 'openapi': {
      const [version, ...tail] = rest;
      if (version === 'v2' && tail.length === 0) return { type: 'openapiV2' };
      if (version !== 'v3') return NOT_FOUND;
      if (tail.length === 0) return { type: 'openapiV3Index' };
      if (tail[0] === 'api' && tail.length === 2) {
        const gv = servedGroupVersion(served, '', tail[1]!);
        return gv ? { type: 'openapiV3Document', groupVersion: gv } : NOT_FOUND;
      }
      if (tail[0] === 'apis' && tail.length === 3) {
        const gv = servedGroupVersion(served, tail[1]!, tail[2]!);
        return gv && gv.group !== '' ? { type: 'openapiV3Document', groupVersion: gv } : NOT_FOUND;
      }
      return NOT_FOUND;
    }
    default:
      return NOT_FOUND;
  }
};
