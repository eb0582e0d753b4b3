/**
 * NodePorts: a pod that asks for host ports (`containers[].ports[].hostPort`) fits only a
 * node where none of them is taken (kube-scheduler's `HostPortInfo.CheckConflict`): a port
 * is the triple (hostIP, protocol, hostPort), hostIP defaulting to 0.0.0.0 and protocol to
 * TCP; 0.0.0.0 conflicts with the same protocol and port on any address, and a specific
 * address conflicts with itself and with 0.0.0.0.
 */
import { DEFAULT_HOST_IP, defineCycleValue, FIT, type FilterPlugin, type HostPort, hostPortsOf, unfit } from '../../framework.ts';

/** This plugin's registry name (kube-scheduler's). */
export const NODE_PORTS = 'NodePorts';

/** kube-scheduler's reason. */
export const NODE_PORTS_REASON = "node(s) didn't have free ports for the requested pod ports";

/** Whether `wanted` conflicts with a port already `used` on the node. */
export function portsConflict(wanted: HostPort, used: HostPort): boolean {
  if (wanted.port !== used.port || wanted.protocol !== used.protocol) return false;
  return wanted.hostIP === DEFAULT_HOST_IP || used.hostIP === DEFAULT_HOST_IP || wanted.hostIP === used.hostIP;
}

/** Whether every one of `wanted` is free among `used`. */
export function portsFit(wanted: readonly HostPort[], used: readonly HostPort[]): boolean {
  if (wanted.length === 0 || used.length === 0) return true;
  return wanted.every((port) => !used.some((taken) => portsConflict(port, taken)));
}

const wantedPortsOfCycle = defineCycleValue('NodePorts/wanted', (pod) => hostPortsOf(pod));

/** Creates the NodePorts filter. */
export function createNodePorts(): FilterPlugin {
  return {
    name: NODE_PORTS,
    nodeLocal: true,
    filter(_pod, nodeInfo, ctx) {
      return portsFit(ctx.get(wantedPortsOfCycle), nodeInfo.usedPorts) ? FIT : unfit(NODE_PORTS_REASON);
    },
  };
}
