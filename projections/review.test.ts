import { describe, expect, it } from 'vitest';
import type { EventBody, EventEnvelope, KubeObject, Node, Pod, Service } from '../schemas/index.ts';
import { createProjection, type Projection } from './projection.ts';
import { makeEvent, toBatches } from './testing.ts';
import { tempProjections } from './temp-projections.ts';

const temp = tempProjections('logplane-review-');

/** A projection and a feeder that keeps offsets increasing across calls. */
const open = () => {
  const dir = temp.dir();
  const projection = createProjection({ dir, partitions: 1 });
  temp.track(projection);
  const offsets = { desired: [0], observed: [0] };
  const apply = (topic: 'desired' | 'observed', ...events: EventEnvelope[]): void => {
    for (const batch of toBatches(topic, events, 1, offsets[topic])) projection.applyBatch(batch);
  };
  return { projection, apply };
};

const keyOf = (object: KubeObject): string =>
  `${object.kind}/${'namespace' in object.metadata ? object.metadata.namespace ?? '' : ''}/${object.metadata.name}`;
const created = (object: KubeObject): EventEnvelope => makeEvent(keyOf(object), { type: 'ObjectCreated', object });
const updated = (object: KubeObject): EventEnvelope =>
  makeEvent(keyOf(object), { type: 'ObjectUpdated', object, expectedResourceVersion: null, subresource: null });
const deleted = (kind: 'Pod' | 'Service', name: string, extra: Partial<Extract<EventBody, { type: 'ObjectDeleted' }>> = {}): EventEnvelope =>
  makeEvent(`${kind}/default/${name}`, {
    type: 'ObjectDeleted',
    kind,
    namespace: 'default',
    name,
    expectedResourceVersion: null,
    uid: null,
    propagationPolicy: null,
    gracePeriodSeconds: null,
    ...extra,
  });
const verdictOf = (projection: Projection, event: EventEnvelope) => projection.store.events.get(event.id)?.verdict;

const namespace: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } };
const service = (name: string, spec: Partial<Service['spec']>): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { ports: [{ port: 80, protocol: 'TCP' }], ...spec },
});

describe('fold review: service address allocation', () => {
  it('a create rejected for its NodePort does not keep the ClusterIP it was about to get', () => {
    const { projection, apply } = open();
    const first = created(service('first', { type: 'NodePort', ports: [{ port: 80, protocol: 'TCP', nodePort: 30000 }] }));
    const clash = created(
      service('clash', { type: 'NodePort', clusterIP: '127.96.0.50', ports: [{ port: 80, protocol: 'TCP', nodePort: 30000 }] }),
    );
    const again = created(service('again', { clusterIP: '127.96.0.50' }));
    apply('desired', created(namespace), first, clash, again);
    expect(verdictOf(projection, clash)).toMatchObject({ type: 'rejected' });
    expect(projection.store.allocations.get('ip/127.96.0.50')).toBe('Service/default/again');
    expect(verdictOf(projection, again)).toEqual({ type: 'accepted' });
  });

  it("deleting a service never frees an address another service owns", () => {
    const { projection, apply } = open();
    const owner = created(service('owner', { type: 'NodePort', ports: [{ port: 80, protocol: 'TCP', nodePort: 30000 }] }));
    const other = created(service('other', {}));
    apply('desired', created(namespace), owner, other);
    const current = projection.view().get('Service/default/other') as Service;
    // A PUT that claims the owner's node port: it must not end up releasing it.
    apply(
      'desired',
      updated({ ...current, spec: { ...current.spec, type: 'NodePort', ports: [{ port: 80, protocol: 'TCP', nodePort: 30000 }] } }),
      deleted('Service', 'other'),
    );
    expect(projection.store.allocations.get('nodeport/30000')).toBe('Service/default/owner');
  });

  it('a PUT that leaves out the NodePort keeps the allocated one; switching to ClusterIP releases it', () => {
    const { projection, apply } = open();
    apply('desired', created(namespace), created(service('web', { type: 'NodePort' })));
    const current = projection.view().get('Service/default/web') as Service;
    const nodePort = current.spec.ports?.[0]?.nodePort;
    expect(nodePort).toBe(30000);
    apply('desired', updated({ ...current, spec: { ...current.spec, ports: [{ port: 80, protocol: 'TCP' }] } }));
    const replaced = projection.view().get('Service/default/web') as Service;
    expect(replaced.spec.ports?.[0]?.nodePort).toBe(30000);
    apply('desired', updated({ ...replaced, spec: { ...replaced.spec, type: 'ClusterIP', ports: [{ port: 80, protocol: 'TCP' }] } }));
    expect(projection.store.allocations.get('nodeport/30000')).toBeUndefined();
  });
});

const node: Node = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'n1' },
  status: { capacity: { cpu: '2', memory: '4Gi', pods: '110' }, allocatable: { cpu: '2', memory: '4Gi', pods: '110' } },
};
const boundPod = (finalizers: string[]): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default', finalizers },
  spec: { nodeName: 'n1', containers: [{ name: 'main', image: 'logplane/echo' }] },
});

describe('fold review: graceful deletion of a pod with finalizers', () => {
  it('the node confirming the stop (grace 0) lets the deletion complete once the last finalizer is removed', () => {
    const { projection, apply } = open();
    apply('desired', created(namespace), created(node), created(boundPod(['example.com/hold'])));
    const uid = projection.view().get('Pod/default/p')?.metadata.uid ?? null;
    apply('desired', deleted('Pod', 'p'));
    expect(projection.view().get('Pod/default/p')?.metadata.deletionGracePeriodSeconds).toBe(30);
    // The node agent stopped the containers and finishes the deletion (as node-agent/agent.ts does).
    apply('desired', deleted('Pod', 'p', { uid, gracePeriodSeconds: 0 }));
    const terminating = projection.view().get('Pod/default/p') as Pod;
    expect(terminating.metadata.deletionGracePeriodSeconds).toBe(0);
    // The finalizer's owner releases it: nothing is left to wait for.
    apply('desired', updated({ ...terminating, metadata: { ...terminating.metadata, finalizers: [] } }));
    expect(projection.view().get('Pod/default/p')).toBeUndefined();
    expect(projection.store.usage.get('n1')?.pods).toBe(0);
  });
});

describe('history review: order of versions', () => {
  it('orders one object\u2019s versions by log position, not by the writers\u2019 clocks', async () => {
    const { objectHistory } = await import('./history.ts');
    const { projection, apply } = open();
    apply('desired', created(namespace));
    const svc = service('web', {});
    apply('desired', created(svc));
    const current = projection.view().get('Service/default/web') as Service;
    const first = updated({ ...current, metadata: { ...current.metadata, labels: { v: '1' } } });
    const second = updated({ ...current, metadata: { ...current.metadata, labels: { v: '2' } } });
    // The second writer stamped its event earlier (it decided first, or its clock is behind) but appended later.
    apply('desired', first, { ...second, time: first.time - 500 });
    expect(projection.view().get('Service/default/web')?.metadata.labels).toEqual({ v: '2' });
    const versions = objectHistory(projection.store, projection.partitions, 'Service/default/web');
    expect(versions.map((v) => v.offset)).toEqual([1, 2, 3]);
    expect(versions.at(-1)?.object?.metadata.labels).toEqual({ v: '2' });
  });
});
