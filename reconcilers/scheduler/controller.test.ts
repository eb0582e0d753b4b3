import { describe, expect, it } from 'vitest';
import { createProjection, type Projection } from '../../projections/projection.ts';
import { makeEvent, toBatches } from '../../projections/testing.ts';
import type { EventBody, KubeObject, Node, Pod } from '../../schemas/index.ts';
import { decidePods } from './controller.ts';
import { tempProjections } from '../../projections/temp-projections.ts';

const temp = tempProjections('logplane-sched-');

const node = (name: string): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name } },
  spec: {},
  status: {
    capacity: { cpu: '4', memory: '8Gi', pods: '110' },
    allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True' }],
  },
});
const pod = (name: string, cpu?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'main', image: 'logplane/echo', ...(cpu ? { resources: { requests: { cpu } } } : {}) }] },
});

const cluster = (objects: KubeObject[]): Projection => {
  const dir = temp.dir();
  const projection = createProjection({ dir });
  temp.track(projection);
  const events = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } } as KubeObject,
    ...objects,
  ].map((o) => makeEvent(`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, { type: 'ObjectCreated', object: o }));
  for (const batch of toBatches('desired', events)) projection.applyBatch(batch);
  return projection;
};

const boundNode = (commands: readonly EventBody[] | undefined): string | undefined => {
  const bind = commands?.find((c) => c.type === 'PodBound');
  return bind?.type === 'PodBound' ? bind.node : undefined;
};

describe('scheduler controller round', () => {
  it.each([
    ['pods without requests', undefined],
    ['pods with cpu requests', '500m'],
  ])('spreads %s of one round over equal nodes (each binding is assumed for the next pod)', (_label, cpu) => {
    const projection = cluster([node('node-1'), node('node-2'), pod('a', cpu), pod('b', cpu)]);
    const decisions = decidePods(['Pod/default/a', 'Pod/default/b'], projection.view(), { now: 0 }, 'default-scheduler');
    const nodes = ['Pod/default/a', 'Pod/default/b'].map((k) => boundNode(decisions.get(k)?.commands));
    expect(new Set(nodes)).toEqual(new Set(['node-1', 'node-2']));
  });

  it('is deterministic: the same view gives the same commands', () => {
    const projection = cluster([node('node-1'), node('node-2'), node('node-3'), pod('a', '1'), pod('b', '1'), pod('c', '1')]);
    const keys = ['Pod/default/a', 'Pod/default/b', 'Pod/default/c'];
    const first = decidePods(keys, projection.view(), { now: 0 }, 'default-scheduler');
    const second = decidePods(keys, projection.view(), { now: 0 }, 'default-scheduler');
    expect(JSON.stringify([...second])).toBe(JSON.stringify([...first]));
  });
});
