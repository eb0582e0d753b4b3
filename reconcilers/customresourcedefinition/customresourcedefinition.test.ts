/**
 * The CustomResourceDefinition controller's decisions on a real projection: names accepted
 * and the CRD Established (condition times kept while the status holds), a naming conflict
 * with another CRD of the group, and the finalizer: a deleted CRD's objects deleted first,
 * then the CRD released, so the fold completes its deletion.
 */
import { describe, expect, it } from 'vitest';
import { CUSTOM_RESOURCE_DEFINITION_FINALIZER } from '../../projections/fold.ts';
import { createProjection, type Projection } from '../../projections/projection.ts';
import { tempProjections } from '../../projections/temp-projections.ts';
import { makeEvent, toBatches } from '../../projections/testing.ts';
import { keyOfBody } from '../../projections/writer.ts';
import { createCustomObjectCodec, customContentSchema, type StructuralSchema } from '../../schemas/custom/index.ts';
import type { CustomResourceDefinition, EventBody, KubeObject } from '../../schemas/index.ts';
import { crdKeysFor, decideCustomResourceDefinition } from './index.ts';

const temp = tempProjections('logplane-crd-');
const NOW = Date.UTC(2026, 11, 7, 12, 0, 0);
const SCHEMA: StructuralSchema = { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } };

const crd = (name: string, plural: string, kind: string, shortNames: string[] = []): CustomResourceDefinition => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${name}` },
  spec: {
    group: 'ops.example.com',
    scope: 'Cluster',
    names: { plural, kind, shortNames },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: SCHEMA as never } }],
  },
});

const start = (): { projection: Projection; apply: (...bodies: EventBody[]) => void } => {
  const projection = createProjection({ dir: temp.dir() });
  temp.track(projection);
  let next = 0;
  const apply = (...bodies: EventBody[]): void => {
    const events = bodies.map((body) => makeEvent(keyOfBody(body), body));
    for (const batch of toBatches('desired', events, 1, [next])) projection.applyBatch(batch);
    next += events.length;
  };
  return { projection, apply };
};

/** Applies a status command as the observed topic would: folded through a second offset sequence. */
const applyStatus = (projection: Projection, bodies: readonly EventBody[], offset: number): void => {
  const events = bodies.filter((body) => body.type === 'ObjectUpdated' && body.subresource === 'status').map((body) => makeEvent(keyOfBody(body), body));
  for (const batch of toBatches('observed', events, 1, [offset])) projection.applyBatch(batch);
};

const KEY = 'CustomResourceDefinition.apiextensions.k8s.io//backups.ops.example.com';

describe('the CustomResourceDefinition controller', () => {
  it('accepts the names, establishes the CRD and records the stored version, then has nothing more to do', () => {
    const { projection, apply } = start();
    apply({ type: 'ObjectCreated', object: crd('backups.ops.example.com', 'backups', 'Backup', ['bk']) as KubeObject });
    const decision = decideCustomResourceDefinition(KEY, projection.view(), NOW);
    expect(decision.commands).toHaveLength(1);
    const status = (decision.commands[0] as { object: CustomResourceDefinition }).object.status;
    expect(status).toEqual({
      conditions: [
        { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found', lastTransitionTime: '2026-12-07T12:00:00Z' },
        { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted', lastTransitionTime: '2026-12-07T12:00:00Z' },
      ],
      acceptedNames: { plural: 'backups', singular: 'backup', kind: 'Backup', listKind: 'BackupList', shortNames: ['bk'] },
      storedVersions: ['v1'],
    });
    applyStatus(projection, decision.commands, 0);
    // Later decisions keep the conditions (and their times) and write nothing.
    expect(decideCustomResourceDefinition(KEY, projection.view(), NOW + 60_000).commands).toEqual([]);
  });

  it('refuses names another CRD of the group has accepted', () => {
    const { projection, apply } = start();
    apply({ type: 'ObjectCreated', object: crd('backups.ops.example.com', 'backups', 'Backup', ['bk']) as KubeObject });
    applyStatus(projection, decideCustomResourceDefinition(KEY, projection.view(), NOW).commands, 0);
    apply({ type: 'ObjectCreated', object: crd('snapshots.ops.example.com', 'snapshots', 'Snapshot', ['bk']) as KubeObject });
    const decision = decideCustomResourceDefinition('CustomResourceDefinition.apiextensions.k8s.io//snapshots.ops.example.com', projection.view(), NOW);
    const status = (decision.commands[0] as { object: CustomResourceDefinition }).object.status;
    expect(status?.conditions).toEqual([
      expect.objectContaining({ type: 'NamesAccepted', status: 'False', reason: 'MultipleNamesNotAllowed', message: '"bk" is already in use' }),
      expect.objectContaining({ type: 'Established', status: 'False', reason: 'NotAccepted' }),
    ]);
  });

  it('deletes a deleted CRD\'s objects, then releases it, and the fold completes the deletion', () => {
    const { projection, apply } = start();
    apply({ type: 'ObjectCreated', object: crd('backups.ops.example.com', 'backups', 'Backup') as KubeObject });
    const codec = createCustomObjectCodec(customContentSchema({ group: 'ops.example.com', version: 'v1', kind: 'Backup', schema: SCHEMA }));
    apply(
      { type: 'SchemaRegistered', resource: 'backups.ops.example.com', group: 'ops.example.com', version: 'v1', kind: 'Backup', fingerprint: codec.fingerprint, schema: JSON.stringify(codec.schema) },
      { type: 'CustomObjectCreated', object: { apiVersion: 'ops.example.com/v1', kind: 'Backup', metadata: { name: 'nightly' }, schema: codec.fingerprint, content: codec.encode({ spec: { size: 3 } }) } },
      { type: 'ObjectDeleted', kind: 'CustomResourceDefinition', namespace: null, name: 'backups.ops.example.com', expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null },
    );
    expect(projection.view().get(KEY)?.metadata.finalizers).toEqual([CUSTOM_RESOURCE_DEFINITION_FINALIZER]);
    const first = decideCustomResourceDefinition(KEY, projection.view(), NOW);
    const deletions = first.commands.filter((command) => command.type === 'CustomObjectDeleted');
    expect(deletions).toEqual([expect.objectContaining({ apiVersion: 'ops.example.com/v1', kind: 'Backup', name: 'nightly', namespace: null })]);
    const seen: string[] = [];
    const subscription = projection.changes$.subscribe((change) => seen.push(...crdKeysFor(change, projection.view())));
    apply(...deletions);
    subscription.unsubscribe();
    // The object's deletion wakes the CRD's key.
    expect(seen).toEqual([KEY]);
    const second = decideCustomResourceDefinition(KEY, projection.view(), NOW);
    const release = second.commands.find((command) => command.type === 'ObjectUpdated' && command.subresource === null);
    expect(release).toBeDefined();
    apply(release as EventBody);
    expect(projection.view().get(KEY)).toBeUndefined();
  });
});
