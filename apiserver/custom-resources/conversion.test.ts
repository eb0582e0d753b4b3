import { describe, expect, it } from 'vitest';
import type { CustomResourceDefinition } from '../../schemas/index.ts';
import { noneConversion } from './conversion.ts';

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', kind: 'Widget' },
    versions: [
      { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, legacy: { type: 'string' } } } } } } },
      { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, color: { type: 'string', default: 'blue' } } } } } } },
    ],
  },
} as unknown as CustomResourceDefinition;

const object = (apiVersion: string, spec: Record<string, unknown>) => ({ apiVersion, kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec });

describe('None conversion of a custom resource', () => {
  const beta = noneConversion(crd, crd.spec.versions[0]!, 'Widget');
  const v1 = noneConversion(crd, crd.spec.versions[1]!, 'Widget');

  it('stores a write at another version at the storage version, pruned and defaulted by its schema', () => {
    expect(beta.toStored(object('example.com/v1beta1', { size: 2, legacy: 'x' }))).toEqual(object('example.com/v1', { size: 2, color: 'blue' }));
  });

  it('keeps a write at the storage version as it is', () => {
    const written = object('example.com/v1', { size: 2, color: 'red' });
    expect(v1.toStored(written)).toBe(written);
  });

  it('shows a stored object at the served version, by that version\'s schema, without changing the stored one', () => {
    const stored = object('example.com/v1', { size: 3, color: 'red' });
    expect(beta.fromStored(stored)).toEqual(object('example.com/v1beta1', { size: 3 }));
    expect(stored.spec).toEqual({ size: 3, color: 'red' });
    // An object stored at a version that is no longer the storage version is shown at the requested one.
    expect(v1.fromStored(object('example.com/v1beta1', { size: 4 }))).toEqual(object('example.com/v1', { size: 4, color: 'blue' }));
  });

  it('reads an object stored before a schema change by the current schema: a removed field is gone, a new default filled in, at every version', () => {
    // Stored at v1 when v1 had `legacy` and no `color`.
    const stored = object('example.com/v1', { size: 5, legacy: 'old' });
    expect(v1.fromStored(stored)).toEqual(object('example.com/v1', { size: 5, color: 'blue' }));
    // Read at v1beta1 (which has `legacy`), it is pruned by the stored version's schema first, as kube decodes from storage.
    expect(beta.fromStored(stored)).toEqual(object('example.com/v1beta1', { size: 5 }));
  });
});
