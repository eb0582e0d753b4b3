/**
 * The part of the Kubernetes OpenAPI v2 document (`schemas/k8s-api/swagger-v1.32.json`)
 * that the Avro generator reads: `definitions`, each a JSON schema with `properties`,
 * `required`, `$ref`, `items`, `additionalProperties` and kube's `x-kubernetes-*` markers.
 */
import { readFileSync } from 'node:fs';
import { SchemaError } from '../errors.ts';

/** The vendored API document. */
export const API_DOCUMENT = new URL('../k8s-api/swagger-v1.32.json', import.meta.url);

/** A group/version/kind as `x-kubernetes-group-version-kind` names it. */
export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** One JSON schema of the document: a definition or a property. */
export interface OpenApiSchema {
  readonly type?: string;
  readonly format?: string;
  readonly $ref?: string;
  readonly description?: string;
  readonly items?: OpenApiSchema;
  readonly additionalProperties?: OpenApiSchema | boolean;
  readonly properties?: Readonly<Record<string, OpenApiSchema>>;
  readonly required?: readonly string[];
  readonly allOf?: readonly OpenApiSchema[];
  readonly oneOf?: readonly OpenApiSchema[];
  readonly anyOf?: readonly OpenApiSchema[];
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-group-version-kind'?: readonly GroupVersionKind[];
}

/** The document: its definitions by name (`io.k8s.api.core.v1.Pod`). */
export interface ApiDocument {
  readonly definitions: Readonly<Record<string, OpenApiSchema>>;
}

const DEFINITION_REF = '#/definitions/';

/** Reads and parses the vendored document (or another one in the same shape). */
export function loadApiDocument(url: URL = API_DOCUMENT): ApiDocument {
  const document = JSON.parse(readFileSync(url, 'utf8')) as Partial<ApiDocument>;
  if (typeof document.definitions !== 'object' || document.definitions === null) {
    throw new SchemaError(`${url.pathname}: no "definitions"`);
  }
  return document as ApiDocument;
}

let vendored: ApiDocument | undefined;

/** The vendored document, parsed once per process (the apiserver's OpenAPI, conversions and server-side apply all read it). */
export const vendoredApiDocument = (): ApiDocument => (vendored ??= loadApiDocument());

/** The definition name a `$ref` points at (`#/definitions/X` → `X`). */
export function refName(ref: string): string {
  if (!ref.startsWith(DEFINITION_REF)) {
    throw new SchemaError(`unsupported $ref ${ref}: only ${DEFINITION_REF}… refs are followed`);
  }
  return ref.slice(DEFINITION_REF.length);
}

/** A definition by name; throws when the document lacks it. */
export function definitionOf(document: ApiDocument, name: string): OpenApiSchema {
  const definition = document.definitions[name];
  if (definition === undefined) {
    throw new SchemaError(`the API document has no definition ${name}`);
  }
  return definition;
}
