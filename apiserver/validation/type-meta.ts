/**
 * The type of a create or update body against its URL, as kube-apiserver's decoder judges
 * it (`runtime/serializer/json` Decode with the URL's kind as default, then the handler's
 * `AcceptsGroupVersion`): a missing `kind` or `apiVersion` is taken from the URL; a kind
 * the body's version does not register, or another kind than the URL's, cannot be decoded
 * into it (400 with the decoder's message); the URL's kind in another version of it is 400
 * "the API version in the data … does not match".
 */
import { kindByGroupKind } from '../../schemas/kinds/registry.ts';
import { ApiError, apiErrors } from '../errors.ts';
import { apiVersionOf, type ResourceInfo } from '../resources.ts';

/** The name kube-apiserver's scheme of built-in types has in its errors (`runtime.NewScheme()`'s call site). */
const SCHEME_NAME = 'k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30';

/** The Go package of a group's internal types (their name in a conversion error): `core`, `apps`, `rbac` … */
const internalPackage = (resource: ResourceInfo): string => {
  if (resource.group === '' || resource.group === 'events.k8s.io') return 'core';
  if (resource.group === 'internal.apiserver.k8s.io') return 'apiserverinternal';
  return resource.group.split('.')[0] ?? resource.group;
};

/** The first 30 bytes of a body, as kube's `summarizeData` shows it in an error. */
const summary = (body: unknown): string => {
  const text = JSON.stringify(body);
  return text.length > 30 ? `${text.slice(0, 30)} ...` : text;
};

/** Go's name of a JSON value's type in an unmarshal error. */
const jsonType = (value: unknown): string =>
  Array.isArray(value) ? 'array' : typeof value === 'object' ? 'object' : typeof value === 'boolean' ? 'bool' : typeof value;

const parseGroupVersion = (apiVersion: string): { group: string; version: string } => {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
};

/** Why a body's `apiVersion` and `kind` refuse it for `resource` (400 BadRequest), undefined when they fit. */
export const typeMetaError = (resource: ResourceInfo, body: Record<string, unknown>): ApiError | undefined => {
  const apiVersion = body['apiVersion'] ?? '';
  const kind = body['kind'] ?? '';
  for (const [field, value] of [['apiVersion', apiVersion], ['kind', kind]] as const) {
    if (typeof value !== 'string') {
      const detail = `couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonType(value)} into Go struct field .${field} of type string`;
      return apiErrors.badRequest(`the object provided is unrecognized (must be of type ${resource.kind}): ${detail} (${summary(body)})`);
    }
  }
  const expected = apiVersionOf(resource);
  const data = apiVersion === '' ? { group: resource.group, version: resource.version } : parseGroupVersion(apiVersion as string);
  const dataKind = kind === '' ? resource.kind : (kind as string);
  const dataVersion = data.group === '' ? data.version : `${data.group}/${data.version}`;
  const cannot = (detail: string): ApiError => apiErrors.badRequest(`${dataKind} in version ${JSON.stringify(data.version)} cannot be handled as a ${resource.kind}: ${detail}`);
  // A custom resource is decoded by its CRD's handler (apiextensions' crdHandler), not the scheme.
  if (resource.custom) {
    if (dataVersion !== expected) return apiErrors.badRequest(`the API version in the data (${dataVersion}) does not match the expected API version (${expected})`);
    if (dataKind !== resource.kind) return apiErrors.badRequest(`the kind in the data (${dataKind}) does not match the expected kind (${resource.kind})`);
    return undefined;
  }
  if (!kindByGroupKind(data.group, dataKind)?.versions.includes(data.version)) {
    return cannot(`no kind ${JSON.stringify(dataKind)} is registered for version ${JSON.stringify(dataVersion)} in scheme ${JSON.stringify(SCHEME_NAME)}`);
  }
  if (dataKind !== resource.kind) {
    return cannot(`converting (${data.version}.${dataKind}) to (${internalPackage(resource)}.${resource.kind}): unknown conversion`);
  }
  if (dataVersion !== expected) {
    return apiErrors.badRequest(`the API version in the data (${dataVersion}) does not match the expected API version (${expected})`);
  }
  return undefined;
};
