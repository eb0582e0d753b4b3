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
    expect(registry.versions.map((version) => version.name)).toEqual(['v1', 'v2']);
    expect(registry.current.name).toBe('v2');
  });

  // A released version must never change: its fingerprint is in events that are kept
  // forever. Add a new version directory instead, and pin its fingerprint here.
  it.each([
    ['v1', '644bbe197b238b1d'],
    ['v2', '109d536d5bf6eaf9'],
  ])('%s keeps its fingerprint', (name, fingerprint) => {
    expect(registry.versions.find((version) => version.name === name)?.fingerprintHex).toBe(fingerprint);
  });

  it('finds a version by the fingerprint in a header', () => {
    for (const version of registry.versions) {
      expect(registry.find(version.header)).toBe(version);
    }
    expect(registry.find(Buffer.from([0xc3, 0x01, 1, 2, 3, 4, 5, 6, 7, 8]))).toBeUndefined();
  });

  it.each(registry.versions.map((version) => [version.name, version] as const))(
    '%s: object union and Kind enum list exactly KINDS',
    (_name, version) => {
      const created = version.types['logplane.event.ObjectCreated'];
      const kind = version.types['logplane.k8s.Kind'];
      if (created === undefined || kind === undefined) {
        throw new Error('ObjectCreated or Kind missing');
      }
      const createdView = viewOf(created);
      const objectView = createdView.type === 'record' ? viewOf(createdView.fields[0]?.type ?? created) : createdView;
      expect(objectView.type === 'union' && objectView.branches.map((branch) => shortName(branch.name ?? ''))).toEqual(KINDS);
      const kindView = viewOf(kind);
      expect(kindView.type === 'enum' && kindView.symbols).toEqual(KINDS);
    },
  );
});

describe('schema registry guards', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  /** A copy of schemas/avro/ plus a v3 made from v2 by `edit` of ObjectMeta.avsc. */
  function withV3(edit: (objectMeta: string) => string): URL {
    const dir = mkdtempSync(join(tmpdir(), 'logplane-schemas-'));
    dirs.push(dir);
    cpSync(new URL('./avro/', import.meta.url), dir, { recursive: true });
    cpSync(join(dir, 'v2'), join(dir, 'v3'), { recursive: true });
    const objectMeta = join(dir, 'v3', 'k8s', 'ObjectMeta.avsc');
    writeFileSync(objectMeta, edit(readFileSync(objectMeta, 'utf8')));
    return pathToFileURL(`${dir}/`);
  }

  it('loads a new version that adds an optional field, and reads older ones with it', () => {
    const root = withV3((text) =>
      text.replace('{"name": "uid",', '{"name": "selfLink", "type": ["null", "string"], "default": null},\n    {"name": "uid",'),
    );
    const loaded = loadSchemaRegistry(root);
    expect(loaded.versions.map((version) => version.name)).toEqual(['v1', 'v2', 'v3']);
    expect(loaded.current.name).toBe('v3');
  });

  it('refuses a new version that cannot read older events (a field without a default)', () => {
    const root = withV3((text) => text.replace('{"name": "uid",', '{"name": "selfLink", "type": "string"},\n    {"name": "uid",'));
    expect(() => loadSchemaRegistry(root)).toThrow(/v1 cannot be read with v3/);
  });

  it('refuses a new version that changes nothing a reader sees', () => {
    const root = withV3((text) => text.replace('Metadata every persisted object carries.', 'Metadata.'));
    expect(() => loadSchemaRegistry(root)).toThrow(SchemaError);
    expect(() => loadSchemaRegistry(root)).toThrow(/v3 has the same fingerprint as v2/);
  });
});
