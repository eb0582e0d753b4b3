/**
 * The proxy part of the node agent (like kube-proxy): Services and Endpoints resolved into
 * a {@link ForwardingTable}, programmed by the `userspace` forwarder or as an `nftables`
 * ruleset.
 */
export {
  type EndpointPortInput,
  type EndpointSubsetInput,
  type EndpointTarget,
  type EndpointsInput,
  type ForwardingTable,
  type IntOrString,
  type ObjectMetaInput,
  Protocol,
  type ServiceInput,
  type ServicePortInput,
  type ServicePortRule,
  type ServiceResolution,
  ServiceType,
  SkipReason,
  forwardingTable,
  resolveService,
  validateForwardingTable,
} from './table.ts';
export {
  type UserspaceProxy,
  type UserspaceProxyOptions,
  type UserspaceProxyStats,
  createUserspaceProxy,
} from './userspace.ts';
export {
  type NftablesProxy,
  type NftablesProxyOptions,
  type RenderNftablesOptions,
  createNftablesProxy,
  renderNftables,
  renderNftablesDelete,
} from './nftables.ts';
export { type ServiceProxy, ProxyMode, type ProxyOptions, createProxy } from './proxy.ts';
export {
  ProxyApplyError,
  ProxyClosedError,
  ProxyConfigError,
  ProxyError,
  type ProxyErrorContext,
} from './errors.ts';
