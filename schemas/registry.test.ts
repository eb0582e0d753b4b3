import { describe, expect, it } from 'vitest';
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
