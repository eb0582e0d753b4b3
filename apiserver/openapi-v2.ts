/**
 * `/openapi/v2`: the Swagger 2.0 definitions of every served kind and of everything they
 * reach, from the vendored Kubernetes 1.32 API document, as JSON and as the protobuf
 * kubectl and client-go ask for (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`,
 * gnostic's `openapi.v2.Document`).
 *
 * kubectl reads it to validate on the client what server-side field validation cannot:
 * the items of a `kind: List` (each against its kind's definition, found by the
 * `x-kubernetes-group-version-kind` extension); Helm validates manifests with it too.
 * The definitions are what those readers use; `paths` is left empty (the v3 documents
 * describe the operations, and kubectl's v2 readers never look at paths).
 *
 * The protobuf is written with protobufjs from a descriptor of the gnostic messages those
 * readers decode: the field numbers are gnostic's wire format; fields no reader here needs
 * (security, parameters, responses, xml …) are not written. Vendor-extension, default,
 * example and enum values are `Any { yaml }` texts, written as JSON (a YAML subset), as
 * gnostic's parsers read them.
 */
import { createHash } from 'node:crypto';
import protobuf from 'protobufjs';
import { vendoredApiDocument } from '../schemas/avro-gen/openapi.ts';
import { RESOURCES } from './resources.ts';

/**
 * The media type of the protobuf document. Clients ask for it by either spelling (client-go
 * by the older `@v1.0` one); the answer names the `.v1.0` one, as kube-openapi's handler
 * does, since `@` is not a token character and Go's `mime.ParseMediaType` refuses it.
 */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const PROTOBUF_TYPES = new Set([OPENAPI_V2_PROTOBUF, 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf']);

const field = (id: number, type: string, rule?: 'repeated') => ({ id, type, ...(rule ? { rule } : {}) });
const named = (value: string) => ({ fields: { name: field(1, 'string'), value: field(2, value) } });

/** The gnostic `openapi.v2` messages written here, by field number. */
const DESCRIPTOR = {
  nested: {
    openapi: {
      nested: {
        v2: {
          nested: {
            Document: { fields: { swagger: field(1, 'string'), info: field(2, 'Info'), paths: field(8, 'Paths'), definitions: field(9, 'Definitions') } },
            Info: { fields: { title: field(1, 'string'), version: field(2, 'string') } },
            Paths: { fields: { vendorExtension: field(1, 'NamedAny', 'repeated') } },
            Definitions: { fields: { additionalProperties: field(1, 'NamedSchema', 'repeated') } },
            Properties: { fields: { additionalProperties: field(1, 'NamedSchema', 'repeated') } },
            NamedSchema: named('Schema'),
            NamedAny: named('Any'),
            Any: { fields: { yaml: field(2, 'string') } },
            TypeItem: { fields: { value: field(1, 'string', 'repeated') } },
            ItemsItem: { fields: { schema: field(1, 'Schema', 'repeated') } },
            AdditionalPropertiesItem: { oneofs: { oneof: { oneof: ['schema', 'boolean'] } }, fields: { schema: field(1, 'Schema'), boolean: field(2, 'bool') } },
            Schema: {
              fields: {
                ref: field(1, 'string'),
                format: field(2, 'string'),
                title: field(3, 'string'),
                description: field(4, 'string'),
                default: field(5, 'Any'),
                multipleOf: field(6, 'double'),
                maximum: field(7, 'double'),
                exclusiveMaximum: field(8, 'bool'),
                minimum: field(9, 'double'),
                exclusiveMinimum: field(10, 'bool'),
                maxLength: field(11, 'int64'),
                minLength: field(12, 'int64'),
                pattern: field(13, 'string'),
                maxItems: field(14, 'int64'),
                minItems: field(15, 'int64'),
                uniqueItems: field(16, 'bool'),
                maxProperties: field(17, 'int64'),
                minProperties: field(18, 'int64'),
                required: field(19, 'string', 'repeated'),
                enum: field(20, 'Any', 'repeated'),
                additionalProperties: field(21, 'AdditionalPropertiesItem'),
                type: field(22, 'TypeItem'),
                items: field(23, 'ItemsItem'),
                allOf: field(24, 'Schema', 'repeated'),
                properties: field(25, 'Properties'),
                discriminator: field(26, 'string'),
                readOnly: field(27, 'bool'),
                example: field(30, 'Any'),
                vendorExtension: field(31, 'NamedAny', 'repeated'),
              },
            },
          },
        },
      },
    },
  },
};

let documentType: protobuf.Type | undefined;
/** The `openapi.v2.Document` message type, built from the descriptor once. */
const documentMessage = (): protobuf.Type => (documentType ??= protobuf.Root.fromJSON(DESCRIPTOR).lookupType('openapi.v2.Document'));

type JsonSchema = Readonly<Record<string, unknown>>;

/** The definitions of the served kinds and of every definition they reach (`#/definitions/` references). */
const servedDefinitions = (): Record<string, JsonSchema> => {
  const all = vendoredApiDocument().definitions as Record<string, JsonSchema>;
  const out: Record<string, JsonSchema> = {};
  const visit = (name: string): void => {
    if (Object.hasOwn(out, name) || !Object.hasOwn(all, name)) return;
    const definition = all[name] as JsonSchema;
    out[name] = definition;
    for (const match of JSON.stringify(definition).matchAll(/"#\/definitions\/([^"]+)"/g)) visit(match[1] as string);
  };
  for (const resource of RESOURCES) visit(resource.definition);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
};

/** The JSON Swagger document. */
export const openapiV2Document = () => ({
  swagger: '2.0',
  info: { title: 'Kubernetes', version: 'v1.32.0' },
  paths: {},
  definitions: servedDefinitions(),
});

const anyOf = (value: unknown) => ({ yaml: JSON.stringify(value) });
const NUMBER_FIELDS = ['multipleOf', 'maximum', 'minimum', 'maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties'] as const;
const SCALAR_FIELDS = ['format', 'title', 'description', 'pattern', 'discriminator', 'exclusiveMaximum', 'exclusiveMinimum', 'uniqueItems', 'readOnly'] as const;

/** One JSON schema as a gnostic `Schema` message object. */
const schemaMessage = (schema: JsonSchema): Record<string, unknown> => {
  const message: Record<string, unknown> = {};
  if (typeof schema.$ref === 'string') message.ref = schema.$ref;
  for (const name of [...SCALAR_FIELDS, ...NUMBER_FIELDS]) if (schema[name] !== undefined) message[name] = schema[name];
  if (schema.default !== undefined) message.default = anyOf(schema.default);
  if (schema.example !== undefined) message.example = anyOf(schema.example);
  if (Array.isArray(schema.required)) message.required = schema.required;
  if (Array.isArray(schema.enum)) message.enum = schema.enum.map(anyOf);
  if (typeof schema.additionalProperties === 'boolean') message.additionalProperties = { boolean: schema.additionalProperties };
  else if (schema.additionalProperties !== undefined) message.additionalProperties = { schema: schemaMessage(schema.additionalProperties as JsonSchema) };
  if (schema.type !== undefined) message.type = { value: Array.isArray(schema.type) ? schema.type : [schema.type] };
  if (schema.items !== undefined) message.items = { schema: (Array.isArray(schema.items) ? schema.items : [schema.items]).map((item: JsonSchema) => schemaMessage(item)) };
  if (Array.isArray(schema.allOf)) message.allOf = schema.allOf.map((part: JsonSchema) => schemaMessage(part));
  if (schema.properties !== undefined) {
    message.properties = { additionalProperties: Object.entries(schema.properties as Record<string, JsonSchema>).map(([name, value]) => ({ name, value: schemaMessage(value) })) };
  }
  const extensions = Object.entries(schema).filter(([name]) => name.startsWith('x-'));
  if (extensions.length > 0) message.vendorExtension = extensions.map(([name, value]) => ({ name, value: anyOf(value) }));
  return message;
};

/** The gnostic protobuf of `document` (a JSON Swagger document as `openapiV2Document` builds it). */
export const encodeOpenapiV2 = (document: ReturnType<typeof openapiV2Document>): Buffer => {
  const type = documentMessage();
  const message = {
    swagger: document.swagger,
    info: document.info,
    paths: {},
    definitions: { additionalProperties: Object.entries(document.definitions).map(([name, value]) => ({ name, value: schemaMessage(value) })) },
  };
  return Buffer.from(type.encode(type.fromObject(message)).finish());
};

/** Decodes a protobuf document back to message objects (tests). */
export const decodeOpenapiV2 = (bytes: Uint8Array): Record<string, unknown> =>
  documentMessage().toObject(documentMessage().decode(bytes), { longs: Number, defaults: false });

interface Served {
  readonly json: Buffer;
  readonly protobuf: Buffer;
  readonly etag: string;
}
let served: Served | undefined;

/** Both encodings, built once per process, and their ETag (a hash of the JSON, as kube's). */
const servedDocument = (): Served => {
  if (served === undefined) {
    const document = openapiV2Document();
    const json = Buffer.from(JSON.stringify(document));
    served = { json, protobuf: encodeOpenapiV2(document), etag: `"${createHash('sha512').update(json).digest('hex').toUpperCase()}"` };
  }
  return served;
};

/** What to send for an `Accept` header (and `If-None-Match`): the protobuf when asked for, else JSON; 304 when the client has it. */
export const openapiV2Reply = (accept: string | undefined, ifNoneMatch: string | undefined): { code: 200 | 304; contentType: string; body: Buffer; etag: string } => {
  const document = servedDocument();
  const wantsProtobuf = (accept ?? '').split(',').some((part) => PROTOBUF_TYPES.has(part.split(';')[0]!.trim()));
  const contentType = wantsProtobuf ? OPENAPI_V2_PROTOBUF : 'application/json';
  if (ifNoneMatch !== undefined && ifNoneMatch === document.etag) return { code: 304, contentType, body: Buffer.alloc(0), etag: document.etag };
  return { code: 200, contentType, body: wantsProtobuf ? document.protobuf : document.json, etag: document.etag };
};
