import { describe, expect, it } from 'vitest';
import { buildNodeInfos, createSchedulingContext, type FilterResult, type HostPort, hostPortsOf } from '../../framework.ts';
import type { ContainerPort } from '../../../../schemas/index.ts';
import { createDefaultProfile } from '../index.ts';
import { schedule } from '../../scheduler.ts';
import { makeNode, makePod } from '../../test-fixtures.ts';
import { createNodePorts, portsConflict } from './index.ts';

const port = (hostIP: string, protocol: string, number: number): HostPort => ({ hostIP, protocol, port: number });

describe('portsConflict (kube HostPortInfo.CheckConflict)', () => {
  it.each<[string, HostPort, HostPort, boolean]>([
    ['same everything', port('0.0.0.0', 'TCP', 80), port('0.0.0.0', 'TCP', 80), true],
    ['other port', port('0.0.0.0', 'TCP', 80), port('0.0.0.0', 'TCP', 81), false],
    ['other protocol', port('0.0.0.0', 'UDP', 80), port('0.0.0.0', 'TCP', 80), false],
    ['wildcard wanted against a specific address', port('0.0.0.0', 'TCP', 80), port('10.0.0.1', 'TCP', 80), true],
    ['specific wanted against the wildcard', port('10.0.0.1', 'TCP', 80), port('0.0.0.0', 'TCP', 80), true],
    ['two different addresses', port('10.0.0.1', 'TCP', 80), port('10.0.0.2', 'TCP', 80), false],
    ['the same address', port('10.0.0.2', 'SCTP', 80), port('10.0.0.2', 'SCTP', 80), true],
  ])('%s', (_case, wanted, used, expected) => {
    expect(portsConflict(wanted, used)).toBe(expected);
  });
});

describe('hostPortsOf', () => {
  it('keeps host ports only, with kube defaults for hostIP and protocol', () => {
    const pod = makePod({ name: 'p', ports: [{ containerPort: 80 }, { containerPort: 80, hostPort: 8080 }, { containerPort: 53, hostPort: 53, protocol: 'UDP', hostIP: '10.0.0.1' }] });
    expect(hostPortsOf(pod)).toEqual([port('0.0.0.0', 'TCP', 8080), port('10.0.0.1', 'UDP', 53)]);
  });
});

describe('NodePorts filter', () => {
  const UNFIT: FilterResult = { type: 'unfit', reasons: ["node(s) didn't have free ports for the requested pod ports"] };
  const nodes = [makeNode({ name: 'node-a' }), makeNode({ name: 'node-b' })];
  it.each<[string, ContainerPort[], FilterResult[]]>([
    ['no host port fits anywhere', [{ containerPort: 80 }], [{ type: 'fit' }, { type: 'fit' }]],
    ['the taken port is refused on its node only', [{ containerPort: 80, hostPort: 80 }], [UNFIT, { type: 'fit' }]],
    ['UDP on the same number is free', [{ containerPort: 80, hostPort: 80, protocol: 'UDP' }], [{ type: 'fit' }, { type: 'fit' }]],
    ['another address than the taken one is free', [{ containerPort: 80, hostPort: 9090, hostIP: '10.0.0.2' }], [{ type: 'fit' }, { type: 'fit' }]],
    ['the taken address is refused', [{ containerPort: 80, hostPort: 9090, hostIP: '10.0.0.1' }], [UNFIT, { type: 'fit' }]],
  ])('%s', (_case, ports, expected) => {
    const placed = [
      makePod({ name: 'web', nodeName: 'node-a', ports: [{ containerPort: 80, hostPort: 80 }] }),
      makePod({ name: 'metrics', nodeName: 'node-a', ports: [{ containerPort: 9090, hostPort: 9090, hostIP: '10.0.0.1' }] }),
    ];
    const nodeInfos = buildNodeInfos(nodes, placed);
    const pod = makePod({ name: 'p', ports });
    const ctx = createSchedulingContext(pod, nodeInfos);
    const plugin = createNodePorts();
    expect(nodeInfos.map((nodeInfo) => plugin.filter(pod, nodeInfo, ctx))).toEqual(expected);
  });

  it('one pod per node for a hostPort Deployment, then kube message', () => {
    const profile = createDefaultProfile();
    let nodeInfos = buildNodeInfos(nodes, []);
    const results = [1, 2, 3].map((replica) => {
      const pod = makePod({ name: `hp-${replica}`, ports: [{ containerPort: 80, hostPort: 80 }] });
      const result = schedule(pod, nodeInfos, profile);
      if (result.type === 'bound') {
        nodeInfos = buildNodeInfos(nodes, [...nodeInfos.flatMap((info) => info.pods), { ...pod, spec: { ...pod.spec, nodeName: result.node } }]);
      }
      return result.type === 'bound' ? result.node : result.message;
    });
    expect(results).toEqual(['node-a', 'node-b', "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports."]);
  });
});
