import { describe, expect, it } from 'vitest';
import { createProjection, type Projection } from '../../projections/projection.ts';
import { makeEvent, toBatches } from '../../projections/testing.ts';
import type { EventBody, EventEnvelope, KubeObject } from '../../schemas/index.ts';
import { decideNamespace } from './index.ts';
import { tempProjections } from '../../projections/temp-projections.ts';

const temp = tempProjections('logplane-ns-');

const keyOf = (o: KubeObject): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const created = (o: KubeObject): EventEnvelope => makeEvent(keyOf(o), { type: 'ObjectCreated', object: o });
const deleted = (kind: KubeObject['kind'], namespace: string | null, name: string): EventEnvelope =>
  makeEvent(`${kind}/${namespace ?? ''}/${name}`, {
    type: 'ObjectDeleted', kind, namespace, name, expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null,
  });
const asEvents = (bodies: readonly EventBody[]): EventEnvelope[] =>
  bodies.map((body) => {
    const key = body.type === 'ObjectDeleted' ? `${body.kind}/${body.namespace ?? ''}/${body.name}` : body.type === 'ObjectUpdated' ? keyOf(body.object) : '';
    return makeEvent(key, body);
  });

describe('namespace deletion', () => {
  it('goes Terminating, refuses new content, deletes what is in it, then disappears', () => {
    const dir = temp.dir();
    const projection = createProjection({ dir });
    temp.track(projection);
    let next = 0;
    const apply = (events: EventEnvelope[]): void => {
      for (const batch of toBatches('desired', events, 1, [next])) projection.applyBatch(batch);
      next += events.length;
    };
    const service: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'team' }, spec: { ports: [{ port: 80 }] } };
    apply([created({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } }), created(service), deleted('Namespace', null, 'team')]);

    const terminating = projection.view().get('Namespace//team');
    expect(terminating?.metadata.finalizers).toEqual(['kubernetes']);
    expect((terminating as { status?: { phase?: string } }).status?.phase).toBe('Terminating');

    const late = created({ ...service, metadata: { name: 'late', namespace: 'team' } });
    apply([late]);
    expect(projection.store.events.get(late.id)?.verdict).toMatchObject({ type: 'rejected', reason: 'Forbidden' });

    const first = decideNamespace('Namespace//team', projection.view());
    expect(first.commands.map((c) => c.type === 'ObjectDeleted' && c.name)).toEqual(['web']);
    apply(asEvents(first.commands));
    const second = decideNamespace('Namespace//team', projection.view());
    expect(second.commands.map((c) => c.type)).toEqual(['ObjectUpdated']);
    apply(asEvents(second.commands));
    expect(projection.view().get('Namespace//team')).toBeUndefined();
    expect(decideNamespace('Namespace//team', projection.view()).commands).toEqual([]);
  });
});
