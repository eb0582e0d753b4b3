import { describe, expect, it } from 'vitest';
import type { KubeObject } from './api.ts';
import { topologyEdges } from './topology-model.ts';

const object = (name: string, extra: Partial<KubeObject> = {}): KubeObject => ({ ...extra, metadata: { name, namespace: 'default', ...(extra.metadata ?? {}) } });

describe('topologyEdges', () => {
  it('links owners, selecting Services and Nodes, only among the objects given', () => {
    const objects = [
      { kind: 'Deployment', object: object('echo') },
      { kind: 'ReplicaSet', object: object('echo-1', { metadata: { name: 'echo-1', ownerReferences: [{ kind: 'Deployment', name: 'echo' }] } }) },
      { kind: 'Pod', object: object('echo-1-a', { metadata: { name: 'echo-1-a', labels: { app: 'echo' }, ownerReferences: [{ kind: 'ReplicaSet', name: 'echo-1' }] }, spec: { nodeName: 'node-1' } }) },
      { kind: 'Pod', object: object('other', { metadata: { name: 'other', labels: { app: 'other' }, ownerReferences: [{ kind: 'ReplicaSet', name: 'gone' }] }, spec: { nodeName: 'node-9' } }) },
      { kind: 'Service', object: object('echo', { spec: { selector: { app: 'echo' } } }) },
      { kind: 'Service', object: object('headless', { spec: {} }) },
      { kind: 'Node', object: { metadata: { name: 'node-1' } } },
    ];
    expect(topologyEdges(objects)).toEqual([
      { from: 'Deployment/default/echo', to: 'ReplicaSet/default/echo-1', relation: 'owns' },
      { from: 'ReplicaSet/default/echo-1', to: 'Pod/default/echo-1-a', relation: 'owns' },
      { from: 'Pod/default/echo-1-a', to: 'Node//node-1', relation: 'runs on' },
      { from: 'Service/default/echo', to: 'Pod/default/echo-1-a', relation: 'selects' },
    ]);
  });

  it('does not match a selector through the prototype of the labels', () => {
    const pod = { kind: 'Pod', object: object('p', { metadata: { name: 'p', labels: {} } }) };
    const service = { kind: 'Service', object: object('s', { spec: { selector: { constructor: Object } } }) };
    expect(topologyEdges([pod, service])).toEqual([]);
  });
});
