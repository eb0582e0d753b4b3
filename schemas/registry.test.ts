import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SchemaError } from './errors.ts';
import { KINDS } from './keys.ts';
import { loadSchemaRegistry } from './registry.ts';
import { shortName, viewOf } from './schema-view.ts';

const registry = loadSchemaRegistry();

describe('schema registry', () => {
  it('holds every released version, oldest first, and reads with the newest', () => {
    expect(registry.versions.map((version) => version.name)).toEqual(['v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8', 'v9']);
    expect(registry.current.name).toBe('v9');
  });

  // A released version must never change: its fingerprint is in events that are kept
  // forever. Add a new version directory instead, and pin its fingerprint here.
  it.each([
    ['v1', '644bbe197b238b1d'],
    ['v2', '109d536d5bf6eaf9'],
    ['v3', '1b8247e0d6b82eeb'],
    ['v4', 'b549e24dc65036b1'],
    ['v5', '22dd2ec1bc3f3637'],
    ['v6', '926caed7b83080b0'],
    ['v7', 'e9379f2f26edab71'],
    ['v8', 'abed738a5aaeba45'],
    ['v9', '0d7c1095f09db9d1'],
  ])('%s keeps its fingerprint', (name, fingerprint) => {
    expect(registry.versions.find((version) => version.name === name)?.fingerprintHex).toBe(fingerprint);
  });

  it('finds a version by the fingerprint in a header', () => {
    for (const version of registry.versions) {
      expect(registry.find(version.header)).toBe(version);
    }
    expect(registry.find(Buffer.from([0xc3, 0x01, 1, 2, 3, 4, 5, 6, 7, 8]))).toBeUndefined();
  });

  it.each(registry.versions.map((version, index) => [version.name, version, index] as const))(
    '%s: object union and Kind enum list the kinds it stores (each version a superset of the one before)',
    (_name, version, index) => {
      const created = version.types['logplane.event.ObjectCreated'];
      const kind = version.types['logplane.k8s.Kind'];
      if (created === undefined || kind === undefined) {
        throw new Error('ObjectCreated or Kind missing');
      }
      const createdView = viewOf(created);
      const objectView = createdView.type === 'record' ? viewOf(createdView.fields[0]?.type ?? created) : createdView;
      // v1–v4: the first seven kinds; v5–v7: every kind of the registry but CustomResourceDefinition (v8).
      const stored = index < 4 ? KINDS.slice(0, 7) : index < 7 ? KINDS.filter((kind) => kind !== 'CustomResourceDefinition') : KINDS;
      expect(objectView.type === 'union' && new Set(objectView.branches.map((branch) => shortName(branch.name ?? '')))).toEqual(new Set(stored));
      const kindView = viewOf(kind);
      expect(kindView.type === 'enum' && kindView.symbols).toEqual(stored);
    },
  );
});

describe('schema registry guards', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  const newest = registry.current.name;
  const next = `v${registry.versions.length + 1}`;

  type Json = Record<string, unknown>;
  type Field = { name: string } & Json;

  /** A copy of schemas/avro/ plus a next version made from the newest by `edit` of one file (parsed). */
  function withNext(edit: (schema: Json) => void, file = 'k8s/meta/v1/ObjectMeta.avsc'): URL {
    const dir = mkdtempSync(join(tmpdir(), 'logplane-schemas-'));
    dirs.push(dir);
    cpSync(new URL('./avro/', import.meta.url), dir, { recursive: true });
    cpSync(join(dir, newest), join(dir, next), { recursive: true });
    const path = join(dir, next, file);
    const before = readFileSync(path, 'utf8');
    const schema = JSON.parse(before) as Json;
    edit(schema);
    const after = JSON.stringify(schema, null, 2);
    expect(after).not.toBe(JSON.stringify(JSON.parse(before), null, 2));
    writeFileSync(path, after);
    return pathToFileURL(`${dir}/`);
  }

  const fieldsOf = (schema: Json): Field[] => schema['fields'] as Field[];
  /** Inserts `field` before the field named `before`. */
  const insertBefore = (schema: Json, before: string, field: Json): void => {
    const fields = fieldsOf(schema);
    fields.splice(fields.findIndex((f) => f.name === before), 0, field as Field);
  };

  /** Adds `field` to the envelope of the next version, before `correlationId`. */
  const withEnvelopeField = (field: Json): URL => withNext((schema) => insertBefore(schema, 'correlationId', field), 'event/EventEnvelope.avsc');

  it('loads a new version that adds an optional field, and reads older ones with it', () => {
    const root = withNext((schema) => insertBefore(schema, 'uid', { name: 'selfLink2', type: ['null', 'string'], default: null }));
    const loaded = loadSchemaRegistry(root);
    expect(loaded.versions.map((version) => version.name)).toEqual([...registry.versions.map((version) => version.name), next]);
    expect(loaded.current.name).toBe(next);
  });

  it('refuses a new version that cannot read older events (a field without a default)', () => {
    const root = withNext((schema) => insertBefore(schema, 'uid', { name: 'selfLink2', type: 'string' }));
    expect(() => loadSchemaRegistry(root)).toThrow(new RegExp(`v1 cannot be read with ${next}`));
  });

  it('refuses a new version that changes nothing a reader sees', () => {
    const root = withNext((schema) => {
      schema['doc'] = 'Metadata.';
    });
    expect(() => loadSchemaRegistry(root)).toThrow(SchemaError);
    expect(() => loadSchemaRegistry(root)).toThrow(new RegExp(`${next} has the same fingerprint as ${newest}`));
  });

  it('refuses a narrowing that older events cannot be resolved to (double → long)', () => {
    const narrow = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(narrow);
      else if (value !== null && typeof value === 'object') {
        const object = value as Json;
        if (object['name'] === 'score' && object['type'] === 'double') object['type'] = 'long';
        Object.values(object).forEach(narrow);
      }
    };
    const root = withNext(narrow, 'event/BindingRationale.avsc');
    // Every version since v3 has double scores; the loader names the oldest it cannot resolve.
    expect(() => loadSchemaRegistry(root)).toThrow(new RegExp(`v3 cannot be read with ${next}`));
  });

  it.each([
    ['not true', { name: 'traceId', type: ['null', 'string'], default: null, 'logplane.optional': 'yes' }, /must be true/],
    ['not nullable', { name: 'traceId', type: 'string', default: '', 'logplane.optional': true }, /needs a field of type \["null", T\]/],
    ['no null default', { name: 'traceId', type: ['string', 'null'], default: '', 'logplane.optional': true }, /with "default": null/],
  ])('refuses logplane.optional on a field that cannot be absent: %s', (_case, field, message) => {
    expect(() => loadSchemaRegistry(withEnvelopeField(field))).toThrow(message);
  });

  it('refuses logplane.optional on a logplane.k8s field (implied there)', () => {
    const root = withNext((schema) => {
      const uid = fieldsOf(schema).find((field) => field.name === 'uid');
      if (uid) uid['logplane.optional'] = true;
    });
    expect(() => loadSchemaRegistry(root)).toThrow(/implied for logplane.k8s records/);
  });
});
