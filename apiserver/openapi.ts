/**
 * A minimal OpenAPI v3: the `/openapi/v3` index and one document per group/version that
 * declares, for every kind, a PATCH operation with the `fieldValidation` query parameter
 * and the `x-kubernetes-group-version-kind` extension. That is what kubectl's
 * `--validate=strict` (its default) looks for before leaving validation to the server, so
 * `kubectl create -f` and `kubectl apply -f` work without `--validate=false`.
 *
 * `components.schemas` holds every kind's schema from the vendored API document, so
 * `kubectl explain` works. The PATCH operations deliberately do not list the strategic
 * merge patch media type: kubectl then computes `apply` patches from its built-in types.
 */
import { createHash } from 'node:crypto';
import { vendoredApiDocument } from '../schemas/avro-gen/openapi.ts';
import { GROUP_VERSIONS, RESOURCES, type GroupVersion } from './resources.ts';

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

/** The OpenAPI v3 document of one group/version. */
export const openapiDocument = (gv: GroupVersion) => {
  const paths: Record<string, unknown> = {};
  const definitions: string[] = [];
  for (const resource of RESOURCES.filter((r) => r.group === gv.group && r.version === gv.version)) {
    const gvk = { group: resource.group, version: resource.version, kind: resource.kind };
    definitions.push(resource.definition);
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
    components: { schemas: componentSchemas(definitions) },
  };
};

const hashOf = (value: unknown): string => createHash('sha512').update(JSON.stringify(value)).digest('hex').toUpperCase().slice(0, 128);

const documents = new Map<string, { document: unknown; hash: string }>();
/** The document of a group/version and its hash, built once. */
export const cachedOpenapiDocument = (gv: GroupVersion): { document: unknown; hash: string } => {
  const key = `${gv.group}/${gv.version}`;
  let found = documents.get(key);
  if (!found) {
    const document = openapiDocument(gv);
    found = { document, hash: hashOf(document) };
    documents.set(key, found);
  }
  return found;
};

/** `/openapi/v3`: where each group/version document lives, with a content hash for client caches. */
export const openapiIndex = () => ({
  paths: Object.fromEntries(
    GROUP_VERSIONS.map((gv) => {
      const path = gv.group === '' ? `api/${gv.version}` : `apis/${gv.group}/${gv.version}`;
      return [path, { serverRelativeURL: `/openapi/v3/${path}?hash=${cachedOpenapiDocument(gv).hash}` }];
    }),
  ),
});

