import { describe, expect, it } from 'vitest';
import type { Deployment, Pod, ReplicaSet } from '../../schemas/index.ts';
import { alignBlocks, describeObject, formatDescribeTime, formatLabelSelector } from './describe.ts';

describe('alignBlocks', () => {
  it('aligns runs of tabbed lines, like kubectl describe', () => {
    expect(alignBlocks(['Name:\tweb', 'Namespace:\tdefault', 'Labels:\tapp=web', '\ttier=front', 'IPs:', '  IP:\t1.2.3.4', 'Controlled By:\tReplicaSet/x'])).toBe(
      [
        'Name:       web',
        'Namespace:  default',
        'Labels:     app=web',
        '            tier=front',
        'IPs:',
        '  IP:           1.2.3.4',
        'Controlled By:  ReplicaSet/x',
        '',
      ].join('\n'),
    );
  });
});

describe('formatDescribeTime', () => {
  it('prints RFC 1123 with a numeric zone', () => {
    expect(formatDescribeTime('2024-05-01T12:00:00Z')).toMatch(/^Wed, 01 May 2024 \d\d:\d\d:00 [+-]\d{4}$/);
    expect(formatDescribeTime(undefined)).toBe('<unset>');
  });
});

describe('describeObject', () => {
  it('describes a pod: identity, status, containers, conditions', () => {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-7d9-abc12',
        namespace: 'default',
        labels: { app: 'web', 'pod-template-hash': '7d9' },
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9', uid: 'r1', controller: true }],
      },
      spec: { nodeName: 'node-2', containers: [{ name: 'echo', image: 'echo:1', ports: [{ containerPort: 8080 }], env: [{ name: 'MODE', value: 'fast' }] }] },
      status: {
        phase: 'Running',
        hostIP: '127.0.0.1',
        podIP: '127.100.0.7',
        podIPs: [{ ip: '127.100.0.7' }],
        conditions: [
          { type: 'PodScheduled', status: 'True' },
          { type: 'Ready', status: 'True' },
        ],
        containerStatuses: [{ name: 'echo', image: 'echo:1', ready: true, restartCount: 2, containerID: 'process://123', state: { running: {} } }],
      },
    };
    expect(describeObject(pod)).toBe(
      [
        'Name:         web-7d9-abc12',
        'Namespace:    default',
        'Priority:     0',
        'Node:         node-2/127.0.0.1',
        'Labels:       app=web',
        '              pod-template-hash=7d9',
        'Annotations:  <none>',
        'Status:       Running',
        'IP:           127.100.0.7',
        'IPs:',
        '  IP:           127.100.0.7',
        'Controlled By:  ReplicaSet/web-7d9',
        'Containers:',
        '  echo:',
        '    Container ID:   process://123',
        '    Image:          echo:1',
        '    Image ID:',
        '    Port:           8080/TCP',
        '    Host Port:      0/TCP',
        '    State:          Running',
        '    Ready:          True',
        '    Restart Count:  2',
        '    Environment:',
        '      MODE:  fast',
        '    Mounts:  <none>',
        'Conditions:',
        '  Type           Status',
        '  PodScheduled   True',
        '  Ready          True',
        'Volumes:         <none>',
        'Node-Selectors:  <none>',
        'Tolerations:     <none>',
        'Events:          <none>',
        '',
      ].join('\n'),
    );
  });

  it('describes a deployment with its replica summary, strategy and replica sets', () => {
    const deployment: Deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default', uid: 'd1', annotations: { 'deployment.kubernetes.io/revision': '2' } },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'echo', image: 'echo:2' }] } },
      },
      status: {
        replicas: 3,
        updatedReplicas: 3,
        availableReplicas: 3,
        conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }],
      },
    };
    const rs = (name: string, image: string, replicas: number): ReplicaSet => ({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name, namespace: 'default', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd1', controller: true }] },
      spec: {
        replicas,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web', 'pod-template-hash': name } }, spec: { containers: [{ name: 'echo', image }] } },
      },
      status: { replicas },
    });
    const text = describeObject(deployment, { replicaSets: [rs('web-1', 'echo:1', 0), rs('web-2', 'echo:2', 3)] });
    expect(text).toContain('Replicas:               3 desired | 3 updated | 3 total | 3 available | 0 unavailable\n');
    expect(text).toContain('StrategyType:           RollingUpdate\n');
    expect(text).toContain('RollingUpdateStrategy:  25% max unavailable, 25% max surge\n');
    expect(text).toContain('Annotations:            deployment.kubernetes.io/revision: 2\n');
    expect(text).toContain('  Containers:\n    echo:\n      Image:        echo:2\n');
    expect(text).toContain('  Type           Status  Reason\n  ----           ------  ------\n  Available      True    MinimumReplicasAvailable\n');
    expect(text).toContain('OldReplicaSets:  <none>\nNewReplicaSet:   web-2 (3/3 replicas created)\n');
  });
});

describe('selectors', () => {
  it('prints match labels and expressions like kubectl', () => {
    expect(
      formatLabelSelector({
        matchLabels: { tier: 'web', app: 'shop' },
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['prod', 'dev'] },
          { key: 'gpu', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('app=shop,tier=web,env in (dev,prod),!gpu');
    expect(formatLabelSelector({})).toBe('<none>');
  });
});
