/**
 * The served versions that are conversions of a stored kind, and the three places the
 * apiserver applies them: a request body becomes the stored shape before admission
 * (`storedFromServed`), a stored object becomes the served shape in every answer
 * (`servedBody`, for objects, lists and Tables) and before a patch applies to it.
 */
import { vendoredApiDocument } from '../../schemas/avro-gen/openapi.ts';
import { autoscalingV1HorizontalPodAutoscaler } from './autoscaling-v1.ts';
import { eventsV1Event } from './events.ts';
import { isJsonObject, type Conversion, type JsonObject } from './types.ts';

export type { Conversion } from './types.ts';

const CONVERSIONS: readonly Conversion[] = [eventsV1Event, autoscalingV1HorizontalPodAutoscaler];

const byGroupVersionKind: ReadonlyMap<string, Conversion> = new Map(CONVERSIONS.map((conversion) => [`${conversion.group}/${conversion.version}/${conversion.kind}`, conversion]));

/** The conversion that serves `kind` at `group`/`version` from another stored version, if there is one. */
export const conversionOf = (group: string, version: string, kind: string): Conversion | undefined => byGroupVersionKind.get(`${group}/${version}/${kind}`);

const topLevelFields = new Map<string, ReadonlySet<string>>();

/** The top-level fields of the served version (its definition in the vendored API document). */
const servedFields = (conversion: Conversion): ReadonlySet<string> => {
  let fields = topLevelFields.get(conversion.definition);
  if (fields === undefined) {
    const definition = vendoredApiDocument().definitions[conversion.definition];
    fields = new Set(Object.keys(definition?.properties ?? {}));
    topLevelFields.set(conversion.definition, fields);
  }
  return fields;
};

/**
 * A request body of the served version as the stored kind, and the top-level fields the
 * served version does not have (dropped: fieldValidation decides whether they are an error,
 * as for the fields nested deeper, which the stored kind's schema check reports).
 */
export const storedFromServed = (conversion: Conversion, body: JsonObject): { stored: JsonObject; unknownFields: string[] } => {
  const fields = servedFields(conversion);
  const unknownFields = Object.keys(body).filter((field) => !fields.has(field));
  const known: JsonObject = {};
  for (const [field, value] of Object.entries(body)) {
    if (fields.has(field)) Object.defineProperty(known, field, { value, enumerable: true, writable: true, configurable: true });
  }
  return { stored: conversion.toStored(known), unknownFields };
};

const servedApiVersion = (conversion: Conversion): string => (conversion.group === '' ? conversion.version : `${conversion.group}/${conversion.version}`);

/** An object of the stored kind not yet converted (a body already in the served version stays as it is). */
const isStored = (conversion: Conversion, value: unknown): boolean =>
  isJsonObject(value) && value['kind'] === conversion.kind && isJsonObject(value['metadata']) && (conversion.everyRead === true || value['apiVersion'] !== servedApiVersion(conversion));

/** An answer's body as the served version shows it: an object, a list's items, a Table's row objects; anything else (Status) as is. */
export const servedBody = (conversion: Conversion, body: unknown): unknown => {
  if (!isJsonObject(body)) return body;
  if (isStored(conversion, body)) return conversion.fromStored(body);
  // A list of the kind (a custom resource's list kind is its CRD's `listKind`).
  if (Array.isArray(body['items'])) {
    return { ...body, items: body['items'].map((item) => (isStored(conversion, item) ? conversion.fromStored(item as JsonObject) : item)) };
  }
  if (body['kind'] === 'Table' && Array.isArray(body['rows'])) {
    return {
      ...body,
      rows: body['rows'].map((row) => (isJsonObject(row) && isStored(conversion, row['object']) ? { ...row, object: conversion.fromStored(row['object'] as JsonObject) } : row)),
    };
  }
  return body;
};

/** A stored object as a resource's version shows it (the object itself for the stored version). */
export const toServed = (conversion: Conversion | undefined, object: object): object =>
  conversion && isStored(conversion, object) ? conversion.fromStored(object as JsonObject) : object;
