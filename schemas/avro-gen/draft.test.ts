import { readdirSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { REGISTERED_KINDS, STORED_KINDS } from '../kinds/registry.ts';
import { compileDraftConverters, loadDraftVersion, readAttributes } from './draft-convert.ts';
import { DRAFT_DIR, DRAFT_README, GENERATED_VERSION, generateDraft, withCompatibilitySection } from './draft.ts';
import { avroFieldName, avroNameOf, generateObjectSchemas, JSON_VALUE } from './generate.ts';
import { loadApiDocument } from './openapi.ts';

const document = loadApiDocument();
const draft = loadDraftVersion(DRAFT_DIR, GENERATED_VERSION);
const kindRecords = STORED_KINDS.map((kind) => ({ kind, type: draft.version.types[avroNameOf(kind.definition)] }));

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, `${entry.parentPath}/${entry.name}`))
    .sort();
}

describe('the generated draft', () => {
  it('is what the generator writes (run `npm run schemas:avro-gen` if not)', () => {
    const generated = generateDraft();
    const dir = fileURLToPath(DRAFT_DIR);
    expect(filesUnder(dir)).toEqual([...generated.files.keys()].sort());
    for (const [path, text] of generated.files) {
      expect(readFileSync(new URL(path, DRAFT_DIR), 'utf8'), path).toBe(text);
    }
    const readme = readFileSync(DRAFT_README, 'utf8');
    expect(readme).toBe(withCompatibilitySection(readme, generated.compatibilitySection));
  });

  it('is a version directory the registry loads, rooted at the envelope', () => {
    expect(draft.version.type.name).toBe('logplane.event.EventEnvelope');
    expect(draft.version.fingerprintHex).toMatch(/^[0-9a-f]{16}$/);
  });

  it.each(kindRecords)('has a record for $kind.group/$kind.kind that parses on its own', ({ kind, type }) => {
    expect(type, kind.definition).toBeDefined();
    const standalone = avro.Type.forSchema((type as avro.Type).schema() as avro.Schema);
    expect(standalone.name).toBe(avroNameOf(kind.definition));
    expect(draft.kinds.get(standalone.name as string)).toEqual(expect.objectContaining({ kind: kind.kind, group: kind.group }));
    const fields = (type as avro.types.RecordType).fields.map((field) => field.name);
    const properties = Object.keys(document.definitions[kind.definition]?.properties ?? {}).filter((name) => name !== 'kind');
    expect(fields).toEqual(properties);
  });

  it('puts every kind in the KubeObject union of ObjectCreated and ObjectUpdated, in registry order', () => {
    const body = (draft.version.types['logplane.event.EventEnvelope'] as avro.types.RecordType).field('body').type as avro.types.WrappedUnionType;
    for (const name of ['logplane.event.ObjectCreated', 'logplane.event.ObjectUpdated']) {
      const record = body.types.find((branch) => branch.name === name) as avro.types.RecordType;
      const union = record.field('object').type as avro.types.WrappedUnionType;
      expect(union.types.map((branch) => branch.name)).toEqual(STORED_KINDS.map((kind) => avroNameOf(kind.definition)));
    }
    const deleted = body.types.find((branch) => branch.name === 'logplane.event.ObjectDeleted') as avro.types.RecordType;
    const kinds = (deleted.field('kind').type as avro.types.EnumType).symbols;
    expect(kinds.slice(0, 7)).toEqual(['Namespace', 'Node', 'Pod', 'Service', 'Endpoints', 'ReplicaSet', 'Deployment']);
    expect(new Set(kinds)).toEqual(new Set(STORED_KINDS.map((kind) => kind.kind)));
  });

  it('has no record for a kind served from another kind\'s storage (events.k8s.io/v1 Event is core Event)', () => {
    const served = REGISTERED_KINDS.filter((kind) => kind.storageRef !== kind.ref);
    expect(served.map((kind) => `${kind.ref} → ${kind.storageRef}`)).toEqual(['Event.events.k8s.io → Event']);
    for (const kind of served) expect(draft.version.types[avroNameOf(kind.definition)], kind.ref).toBeUndefined();
  });

  it('maps every definition of the document to a distinct valid Avro name', () => {
    const names = Object.keys(document.definitions).map(avroNameOf);
    expect(new Set(names).size).toBe(names.length);
    expect(avroNameOf('io.k8s.api.core.v1.PodSpec')).toBe('logplane.k8s.core.v1.PodSpec');
    expect(avroNameOf('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta')).toBe('logplane.k8s.meta.v1.ObjectMeta');
    expect(avroNameOf('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps')).toBe('logplane.k8s.apiextensions.v1.JSONSchemaProps');
    expect(avroFieldName('x-kubernetes-preserve-unknown-fields')).toBe('x_kubernetes_preserve_unknown_fields');
    expect(avroFieldName('$ref')).toBe('_ref');
  });

  it('keeps a kind nested in another definition as Embedded<Kind>, with its kind field', () => {
    const template = draft.version.types['logplane.k8s.core.v1.EmbeddedPersistentVolumeClaim'] as avro.types.RecordType;
    expect(template.fields.map((field) => field.name)).toContain('kind');
    const spec = draft.version.types['logplane.k8s.apps.v1.StatefulSetSpec'] as avro.types.RecordType;
    expect(JSON.stringify(spec.field('volumeClaimTemplates').type.schema())).toContain('EmbeddedPersistentVolumeClaim');
  });

  it('uses the JSON value type for RawExtension and FieldsV1', () => {
    const revision = draft.version.types['logplane.k8s.apps.v1.ControllerRevision'] as avro.types.RecordType;
    expect(JSON.stringify(revision.field('data').type.schema())).toContain(JSON_VALUE);
    const managed = draft.version.types['logplane.k8s.meta.v1.ManagedFieldsEntry'] as avro.types.RecordType;
    expect(JSON.stringify(managed.field('fieldsV1').type.schema())).toContain(JSON_VALUE);
  });
});

describe('recursive definitions (a CustomResourceDefinition with JSONSchemaProps)', () => {
  const crd = generateObjectSchemas(document, ['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition']);
  const registry: Record<string, avro.Type> = {};
  for (const file of crd.files) {
    avro.Type.forSchema(file.schema as unknown as avro.Schema, { registry });
  }
  const type = registry['logplane.k8s.apiextensions.v1.CustomResourceDefinition'] as avro.Type;
  const { toAvro, fromAvro } = compileDraftConverters(readAttributes(crd.files.map((file) => file.schema)), type);

  it('refer to themselves by name', () => {
    const props = registry['logplane.k8s.apiextensions.v1.JSONSchemaProps'] as avro.types.RecordType;
    expect(JSON.stringify(props.field('properties').type.schema({ noDeref: true }))).toContain('"values":"logplane.k8s.apiextensions.v1.JSONSchemaProps"');
  });

  it('round-trip a nested schema with renamed fields and JSON values', () => {
    const crontab = {
      apiVersion: 'apiextensions.k8s.io/v1',
      metadata: { name: 'crontabs.stable.example.com' },
      spec: {
        group: 'stable.example.com',
        names: { kind: 'CronTab', plural: 'crontabs' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    required: ['cronSpec'],
                    properties: {
                      cronSpec: { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$' },
                      replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
                      extra: { 'x-kubernetes-preserve-unknown-fields': true, 'x-kubernetes-int-or-string': false },
                    },
                    'x-kubernetes-validations': [{ rule: 'self.replicas <= 10', message: 'too many' }],
                  },
                },
                items: { type: 'string' },
                enum: ['a', 1, 2.5, null, { nested: [true] }],
                $ref: '#/definitions/x',
              },
            },
          },
        ],
      },
    };
    const decoded = fromAvro(type.fromBuffer(type.toBuffer(toAvro(crontab))));
    expect(decoded).toStrictEqual(crontab);
  });
});
