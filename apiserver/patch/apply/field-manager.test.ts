/**
 * Field ownership across managers, with cases from structured-merge-diff's `merge` tests
 * (multiple appliers, conflicts, force, pruning of fields an applier stopped applying)
 * and kube's managedfields tests (conflict messages: conflict_test.go; capped update
 * managers: capmanagers_test.go; the last-applied migration: lastappliedmanager_test.go).
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../errors.ts';
import { fieldElement, setOf } from './fieldpath.ts';
import { conflictError, recordUpdate, serverSideApply, LAST_APPLIED_ANNOTATION } from './field-manager.ts';
import { capUpdateManagers, decodeManagedFields, encodeManagedFields, managerIdentifier, type ManagedFieldsEntry } from './managed-fields.ts';
import { mergeTypeOf } from './schema.ts';

const target = { type: mergeTypeOf('io.k8s.api.apps.v1.Deployment'), apiVersion: 'apps/v1', statusIsSubresource: true };
const T0 = Date.parse('2026-01-02T03:04:05.678Z');
const T1 = T0 + 60_000;

const deployment = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', ...metadata },
  spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } }, ...spec },
});

type Obj = ReturnType<typeof deployment> & {
  spec: { replicas?: number };
  metadata: { labels?: Record<string, string>; managedFields?: ManagedFieldsEntry[] };
};

const apply = (live: unknown, config: unknown, manager: string, force = false, time = T0) =>
  serverSideApply({ target, live, config, manager, force, time }) as { object: Obj; changed: boolean };

const entriesOf = (object: Obj): [string, string][] => (object.metadata.managedFields ?? []).map((e) => [e.manager!, e.operation!]);

const conflictOf = (run: () => unknown): ApiError => {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a conflict');
};

describe('server-side apply', () => {
  it('creates: the applier owns exactly what it applied, with the time of the request', () => {
    const { object, changed } = apply(undefined, deployment({ replicas: 2 }), 'kubectl');
    expect(changed).toBe(true);
    expect(object.metadata.managedFields).toEqual([
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: '2026-01-02T03:04:05Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:spec': {
            'f:replicas': {},
            'f:selector': {},
            'f:template': { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } },
          },
        },
      },
    ]);
  });

  it('re-applying the same configuration changes nothing, not even the time', () => {
    const first = apply(undefined, deployment({ replicas: 2 }), 'kubectl').object;
    const again = apply(first, deployment({ replicas: 2 }), 'kubectl', false, T1);
    expect(again.changed).toBe(false);
    expect(again.object).toEqual(first);
  });

  it("is a conflict to change another applier's field, kube's message naming manager and field; force takes it", () => {
    const first = apply(undefined, deployment({ replicas: 2 }), 'kubectl').object;
    const error = conflictOf(() => apply(first, deployment({ replicas: 5 }), 'ci'));
    expect(error.status).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message: 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.spec.replicas' }] },
    });
    const forced = apply(first, deployment({ replicas: 5 }), 'ci', true, T1).object;
    expect(forced.spec).toMatchObject({ replicas: 5 });
    const byManager = Object.fromEntries((forced.metadata.managedFields ?? []).map((e) => [e.manager, e.fieldsV1 as Record<string, Record<string, unknown>>]));
    expect(byManager['ci']!['f:spec']).toHaveProperty('f:replicas');
    expect(byManager['kubectl']!['f:spec']).not.toHaveProperty('f:replicas');
  });

  it('shares a field two appliers set to the same value, and keeps it when one of them drops it', () => {
    const first = apply(undefined, deployment({ replicas: 3 }), 'a').object;
    const shared = apply(first, deployment({ replicas: 3 }), 'b').object;
    expect(entriesOf(shared).sort()).toEqual([['a', 'Apply'], ['b', 'Apply']]);
    const dropped = apply(shared, deployment({}), 'a', false, T1).object;
    expect(dropped.spec.replicas).toBe(3);
    const alone = apply(first, deployment({}), 'a', false, T1).object;
    expect(alone.spec).not.toHaveProperty('replicas');
  });

  it('removes map entries and list items the applier stopped applying, and the emptied struct fields', () => {
    const withExtras = deployment({}, { labels: { app: 'web', tier: 'front' } });
    withExtras.spec.template.spec.containers.push({ name: 'sidecar', image: 'busybox' });
    const first = apply(undefined, withExtras, 'kubectl').object;
    const after = apply(first, deployment({}, { labels: { app: 'web' } }), 'kubectl', false, T1).object;
    expect(after.metadata.labels).toEqual({ app: 'web' });
    expect(after.spec.template.spec.containers.map((c: { name: string }) => c.name)).toEqual(['web']);
    const noLabels = apply(after, deployment({}), 'kubectl', false, T1).object;
    expect(noLabels.metadata).not.toHaveProperty('labels');
  });

  it('lists several conflicts grouped by manager, sorted (conflict_test.go)', () => {
    const error = conflictError([
      { manager: managerIdentifier({ manager: 'foo', operation: 'Update', apiVersion: 'v1', subresource: '' }), path: [fieldElement('spec'), fieldElement('replicas')] },
      { manager: managerIdentifier({ manager: 'bar', operation: 'Apply', apiVersion: 'v1', subresource: '' }), path: [fieldElement('metadata'), fieldElement('labels'), fieldElement('app')] },
    ]);
    expect(error.status.message).toBe('Apply failed with 2 conflicts: conflicts with "bar":\n- .metadata.labels.app\nconflicts with "foo" using v1:\n- .spec.replicas');
    const scale = conflictError([{ manager: managerIdentifier({ manager: 'foo', operation: 'Update', apiVersion: 'v1', subresource: 'scale' }), path: [fieldElement('spec'), fieldElement('replicas')] }]);
    expect(scale.status.message).toBe('Apply failed with 1 conflict: conflict with "foo" with subresource "scale" using v1: .spec.replicas');
  });

  it('refuses managedFields in the configuration, another apiVersion, and undeclared fields with 400', () => {
    expect(() => apply(undefined, { ...deployment({}), metadata: { name: 'web', managedFields: [] } }, 'x')).toThrow('metadata.managedFields must be nil');
    expect(() => apply(undefined, { ...deployment({}), apiVersion: 'apps/v1beta1' }, 'x')).toThrow('Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1');
    const error = conflictOf(() => apply(undefined, deployment({ bogus: 1 }), 'x'));
    expect(error.status).toMatchObject({ code: 400, message: 'failed to create typed patch object (apps/v1, Kind=Deployment): .spec.bogus: field not declared in schema' });
  });
});

describe('updates (operation Update)', () => {
  it('gives a create all the fields it set, and a later update what it changed, taking them from others', () => {
    const created = deployment({ replicas: 1 }) as Obj;
    created.metadata.managedFields = recordUpdate({ target, live: undefined, next: created, requested: undefined, manager: 'kubectl-create', time: T0 });
    expect(entriesOf(created)).toEqual([['kubectl-create', 'Update']]);
    expect(created.metadata.managedFields![0]!.fieldsV1).toMatchObject({ 'f:spec': { 'f:replicas': {} } });

    const scaled = structuredClone(created);
    scaled.spec = { ...scaled.spec, replicas: 4 } as typeof scaled.spec;
    scaled.metadata.managedFields = recordUpdate({ target, live: created, next: scaled, requested: scaled.metadata.managedFields, manager: 'scaler', time: T1 });
    const byManager = Object.fromEntries(scaled.metadata.managedFields.map((e) => [e.manager, e]));
    expect(byManager['scaler']).toMatchObject({ operation: 'Update', time: '2026-01-02T03:05:05Z', fieldsV1: { 'f:spec': { 'f:replicas': {} } } });
    expect(byManager['kubectl-create']!.fieldsV1).not.toHaveProperty(['f:spec', 'f:replicas']);
    expect(byManager['kubectl-create']!.time).toBe('2026-01-02T03:04:05Z');
  });

  it('leaves managedFields (and times) alone when an update changes nothing, and clears them on an empty list', () => {
    const created = deployment({ replicas: 1 }) as Obj;
    created.metadata.managedFields = recordUpdate({ target, live: undefined, next: created, requested: undefined, manager: 'a', time: T0 });
    const same = recordUpdate({ target, live: created, next: structuredClone(created), requested: created.metadata.managedFields, manager: 'b', time: T1 });
    expect(same).toEqual(created.metadata.managedFields);
    const reset = recordUpdate({ target, live: created, next: { ...created, metadata: { ...created.metadata, managedFields: [] } }, requested: [], manager: 'b', time: T1 });
    expect(reset).toEqual([]);
  });

  it('makes an applied field conflict for its applier after an update took it', () => {
    const applied = apply(undefined, deployment({ replicas: 2 }), 'kubectl').object;
    const edited = structuredClone(applied);
    edited.spec = { ...edited.spec, replicas: 7 } as typeof edited.spec;
    edited.metadata.managedFields = recordUpdate({ target, live: applied, next: edited, requested: edited.metadata.managedFields, manager: 'kubectl-edit', time: T1 });
    const error = conflictOf(() => apply(edited, deployment({ replicas: 2 }), 'kubectl', false, T1));
    expect(error.status.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.replicas');
  });
});

describe('client-side → server-side migration (lastappliedmanager_test.go)', () => {
  it("lets kubectl take over fields the last-applied annotation holds at their live values, and syncs the annotation", () => {
    const lastApplied = deployment({ replicas: 2 }, { annotations: {} });
    delete (lastApplied.metadata as { namespace?: string }).namespace;
    const live = deployment({ replicas: 2 }, { annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(lastApplied) } }) as Obj;
    live.metadata.managedFields = recordUpdate({ target, live: undefined, next: live, requested: undefined, manager: 'kubectl-client-side-apply', time: T0 });
    const migrated = apply(live, deployment({ replicas: 3 }), 'kubectl', false, T1).object as Obj & { metadata: { annotations: Record<string, string> } };
    expect(migrated.spec.replicas).toBe(3);
    expect(JSON.parse(migrated.metadata.annotations[LAST_APPLIED_ANNOTATION]!).spec.replicas).toBe(3);
    // Another manager gets no such pass.
    expect(conflictOf(() => apply(live, deployment({ replicas: 3 }), 'other', false, T1)).status.code).toBe(409);
  });

  it('still conflicts on a field whose live value differs from the annotation', () => {
    const live = deployment({ replicas: 9 }, { annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify(deployment({ replicas: 2 })) } }) as Obj;
    live.metadata.managedFields = recordUpdate({ target, live: undefined, next: live, requested: undefined, manager: 'kubectl-client-side-apply', time: T0 });
    const error = conflictOf(() => apply(live, deployment({ replicas: 3 }), 'kubectl', false, T1));
    expect(error.status.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas');
  });
});

describe('managedFields entries (capmanagers_test.go, managedfields.go)', () => {
  const entry = (manager: string, operation: string, time: string, field: string): ManagedFieldsEntry => ({
    manager,
    operation,
    apiVersion: 'v1',
    time,
    fieldsType: 'FieldsV1',
    fieldsV1: { [`f:${field}`]: {} },
  });

  it('sorts Apply before Update, then by time and manager', () => {
    const managed = decodeManagedFields([entry('z', 'Update', '2026-01-01T00:00:02Z', 'a'), entry('b', 'Update', '2026-01-01T00:00:01Z', 'b'), entry('y', 'Apply', '2026-01-01T00:00:09Z', 'c')]);
    expect(encodeManagedFields(managed).map((e) => e.manager)).toEqual(['y', 'b', 'z']);
  });

  it('merges the oldest update entries into ancient-changes beyond 10', () => {
    const entries = Array.from({ length: 12 }, (_, i) => entry(`m${String(i).padStart(2, '0')}`, 'Update', `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`, `f${i}`));
    const managed = decodeManagedFields([...entries, entry('applier', 'Apply', '2026-01-01T00:00:00Z', 'x')]);
    capUpdateManagers(managed);
    const encoded = encodeManagedFields(managed);
    expect(encoded.filter((e) => e.operation === 'Update')).toHaveLength(10);
    const ancient = encoded.find((e) => e.manager === 'ancient-changes')!;
    expect(ancient.fieldsV1).toEqual({ 'f:f0': {}, 'f:f1': {}, 'f:f2': {} });
    expect(ancient.time).toBe('2026-01-01T00:00:02Z');
    expect(encoded.map((e) => e.manager)).toContain('applier');
    expect(encoded.map((e) => e.manager)).not.toContain('m00');
  });

  it('refuses entries kube could not have written', () => {
    expect(() => decodeManagedFields([{ manager: 'a', operation: 'Patch', fieldsType: 'FieldsV1', fieldsV1: {} }])).toThrow(/operation must be Apply or Update/);
    expect(() => decodeManagedFields([{ manager: 'a', operation: 'Update', fieldsType: 'FieldsV2', fieldsV1: {} }])).toThrow(/fieldsType must be FieldsV1/);
    expect(setOf([fieldElement('a')]).members.has('f:a')).toBe(true);
  });
});
