/**
 * The cluster configuration as a fact in the log (DESIGN invariant 7): on a log that holds
 * none, the apiserver appends the `ClusterConfigured` event with what it was started with
 * (or the legacy defaults), and the fold reads it from there. Flags never reach the fold, so
 * a replay on another machine with other flags gives the same state hash.
 */
import type { Logger } from 'pino';
import { CONFIGURATION_ALLOCATION, LEGACY_FOLD_SETTINGS, type FoldSettings } from '../projections/index.ts';
import { CLUSTER_CONFIGURATION_KEY } from '../schemas/kinds/domains.ts';
import { catchUp, type ServerContext } from './context.ts';
import { ConfigurationMismatchError } from './errors.ts';

/** What the operator asked for; anything left out takes the log's value, or the default on a new cluster. */
export interface RequestedConfiguration {
  readonly serviceCIDR?: string;
}

/** The services configuration the projection holds, if the log has one. */
export const storedConfiguration = (server: ServerContext): FoldSettings | undefined => {
  const stored = server.projection.store.allocations.get(CONFIGURATION_ALLOCATION);
  return stored === undefined ? undefined : (JSON.parse(stored) as FoldSettings);
};

const mismatch = (current: FoldSettings, requested: RequestedConfiguration): string | undefined =>
  requested.serviceCIDR !== undefined && requested.serviceCIDR !== current.serviceCIDR
    ? `the cluster's service CIDR is ${current.serviceCIDR} (recorded in its log); --service-cidr ${requested.serviceCIDR} differs, and a cluster's service CIDR cannot change: start without --service-cidr, or with ${current.serviceCIDR}`
    : undefined;

/**
 * Makes sure the log holds the cluster configuration. Returns the configuration in force;
 * throws {@link ConfigurationMismatchError} when `requested` contradicts the log's (a fold
 * verdict from another apiserver that configured the cluster first counts too).
 */
export const ensureClusterConfiguration = async (
  server: ServerContext,
  requested: RequestedConfiguration,
  logger: Logger,
): Promise<FoldSettings> => {
  await catchUp(server);
  const current = storedConfiguration(server);
  if (current) {
    const problem = mismatch(current, requested);
    if (problem) throw new ConfigurationMismatchError(problem, { current, requested });
    return current;
  }
  const wanted: FoldSettings = { ...LEGACY_FOLD_SETTINGS, ...(requested.serviceCIDR !== undefined ? { serviceCIDR: requested.serviceCIDR } : {}) };
  const result = await server.writer.submit({
    topic: 'desired',
    key: CLUSTER_CONFIGURATION_KEY,
    body: { type: 'ClusterConfigured', serviceCIDR: wanted.serviceCIDR, nodePortLow: wanted.nodePortRange[0], nodePortHigh: wanted.nodePortRange[1] },
    identity: { actor: { type: 'user', name: 'system:apiserver' }, causationId: null, correlationId: null },
  });
  const verdict = result.record.verdict;
  const inForce = storedConfiguration(server);
  if (verdict.type === 'rejected' || !inForce) {
    const detail = verdict.type === 'rejected' ? `${verdict.reason}: ${verdict.message}` : 'the fold recorded no configuration';
    throw new ConfigurationMismatchError(`could not configure the cluster with service CIDR ${wanted.serviceCIDR}: ${detail}`, { requested });
  }
  logger.info({ serviceCIDR: inForce.serviceCIDR, nodePortRange: inForce.nodePortRange }, 'cluster configuration recorded in the log');
  return inForce;
};
