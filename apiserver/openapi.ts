/**
 * A minimal OpenAPI v3: the `/openapi/v3` index and one document per group/version that
 * declares, for every kind, a PATCH operation with the `fieldValidation` query parameter
 * and the `x-kubernetes-group-version-kind` extension. That is what kubectl's
 * `--validate=strict` (its default) looks for before leaving validation to the server, so
 * `kubectl create -f` and `kubectl apply -f` work without `--validate=false`.
 *
 * `components.schemas` holds every kind's schema from the vendored API document, and every
 * custom resource's from its CRD version (as apiextensions-apiserver publishes it), so
 * `kubectl explain` works for both. The PATCH operations deliberately do not list the strategic
 * merge patch media type: kubectl then computes `apply` patches from its built-in types.
 */
import { createHash } from 'node:crypto';
import { vendoredApiDocument } from '../schemas/avro-gen/openapi.ts';
import { BUILT_IN_RESOURCES, type ServedResources } from './custom-resources/served.ts';
import type { GroupVersion, ResourceInfo } from './resources.ts';

/**
 * The schemas of a group/version's kinds and of every definition they reach, from the
 * vendored Kubernetes 1.32 API document (OpenAPI v2 definitions, `$ref`s rewritten to
 * `#/components/schemas/`), as kube-apiserver publishes them in its v3 documents: what
 * `kubectl explain` reads.
 */
const componentSchemas = (definitions: readonly string[]): Record<string, unknown> => {
  const all = vendoredApiDocument().definitions as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const visit = (name: string): void => {
    if (name in out || all[name] === undefined) return;
    const text = JSON.stringify(all[name]).replaceAll('"#/definitions/', '"#/components/schemas/');
    out[name] = JSON.parse(text) as unknown;
    for (const match of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) visit(match[1] as string);
  };
  definitions.forEach(visit);
  return out;
};

const QUERY_PARAMETERS = ['fieldValidation', 'fieldManager', 'dryRun', 'force'].map((name) => ({
  name,
  in: 'query',
  schema: { type: name === 'force' ? 'boolean' : 'string', uniqueItems: true },
}));

const prefixOf = (gv: GroupVersion): string => (gv.group === '' ? `/api/${gv.version}` : `/apis/${gv.group}/${gv.version}`);

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** A custom resource's component name, as apiextensions-apiserver names it: the group reversed, the version, the kind (`com.example.stable.v1.CronTab`). */
const customComponentName = (resource: ResourceInfo): string => `${resource.group.split('.').reverse().join('.')}.${resource.version}.${resource.kind}`;

/** A custom resource's schema as published: its CRD version's, with apiVersion, kind and metadata, and its group/version/kind. */
const customComponent = (resource: ResourceInfo): Record<string, unknown> => {
  const schema = structuredClone(resource.custom?.version.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) as Record<string, unknown>;
  const properties = {
    apiVersion: {
      type: 'string',
      description: 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
    },
    kind: {
      type: 'string',
      description: 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
    },
    metadata: { $ref: `#/components/schemas/${OBJECT_META}`, description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata" },
    ...((schema['properties'] as Record<string, unknown> | undefined) ?? {}),
  };
  return { ...schema, type: 'object', properties, 'x-kubernetes-group-version-kind': [{ group: resource.group, version: resource.version, kind: resource.kind }] };
};

/** The OpenAPI v3 document of one group/version of `served`. */
export const openapiDocument = (gv: GroupVersion, served: ServedResources = BUILT_IN_RESOURCES) => {
  const paths: Record<string, unknown> = {};
  const definitions: string[] = [];
  const custom: Record<string, unknown> = {};
  for (const resource of served.resources.filter((r) => r.group === gv.group && r.version === gv.version)) {
    const gvk = { group: resource.group, version: resource.version, kind: resource.kind };
    if (resource.custom) {
      custom[customComponentName(resource)] = customComponent(resource);
      definitions.push(OBJECT_META);
    } else {
      definitions.push(resource.definition);
    }
    const base = resource.namespaced ? `${prefixOf(gv)}/namespaces/{namespace}/${resource.plural}` : `${prefixOf(gv)}/${resource.plural}`;
    const response = { '200': { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } } };
    paths[base] = {
      get: { operationId: `list${resource.kind}`, 'x-kubernetes-action': 'list', 'x-kubernetes-group-version-kind': gvk, responses: response },
      post: {
        operationId: `create${resource.kind}`,
        'x-kubernetes-action': 'post',
        'x-kubernetes-group-version-kind': gvk,
        parameters: QUERY_PARAMETERS,
        requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
        responses: response,
      },
    };
    paths[`${base}/{name}`] = {
      get: { operationId: `read${resource.kind}`, 'x-kubernetes-action': 'get', 'x-kubernetes-group-version-kind': gvk, responses: response },
      put: {
        operationId: `replace${resource.kind}`,
        'x-kubernetes-action': 'put',
        'x-kubernetes-group-version-kind': gvk,
        parameters: QUERY_PARAMETERS,
        requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
        responses: response,
      },
      patch: {
        operationId: `patch${resource.kind}`,
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': gvk,
        parameters: QUERY_PARAMETERS,
        requestBody: {
          content: {
            'application/merge-patch+json': { schema: { type: 'object' } },
            'application/json-patch+json': { schema: { type: 'array' } },
          },
        },
        responses: response,
      },
      delete: { operationId: `delete${resource.kind}`, 'x-kubernetes-action': 'delete', 'x-kubernetes-group-version-kind': gvk, responses: response },
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes (logplane)', version: 'v1.32.0' },
    paths,
    components: { schemas: { ...componentSchemas(definitions), ...custom } },
  };
};

const hashOf = (value: unknown): string => createHash('sha512').update(JSON.stringify(value)).digest('hex').toUpperCase().slice(0, 128);

/** Documents by group/version and, for a custom group/version, the CRDs it is served from. */
const documents = new Map<string, { document: unknown; hash: string }>();
const DOCUMENTS_KEPT = 512;

/** The document of a group/version and its hash, built once (again when a CRD it serves changes). */
export const cachedOpenapiDocument = (gv: GroupVersion, served: ServedResources = BUILT_IN_RESOURCES): { document: unknown; hash: string } => {
  const crds = served.resources
    .filter((r) => r.group === gv.group && r.version === gv.version && r.custom)
    .map((r) => `${r.custom?.crd.metadata.uid}@${r.custom?.crd.metadata.resourceVersion}`);
  const key = `${gv.group}/${gv.version}/${crds.join(',')}`;
  let found = documents.get(key);
  if (!found) {
    const document = openapiDocument(gv, served);
    found = { document, hash: hashOf(document) };
    if (documents.size >= DOCUMENTS_KEPT) documents.clear();
    documents.set(key, found);
  }
  return found;
};

/** `/openapi/v3`: where each group/version document lives, with a content hash for client caches. */
export const openapiIndex = (served: ServedResources = BUILT_IN_RESOURCES) => ({
  paths: Object.fromEntries(
    served.groupVersions.map((gv) => {
      const path = gv.group === '' ? `api/${gv.version}` : `apis/${gv.group}/${gv.version}`;
      return [path, { serverRelativeURL: `/openapi/v3/${path}?hash=${cachedOpenapiDocument(gv, served).hash}` }];
    }),
  ),
});

