/**
 * The cluster DNS as `logplane up` and every `logplane agent` run it: the DNS server
 * answering from the process's projection on its `--dns` address, and (unless turned off)
 * on port 53 of the `kube-system/kube-dns` Service's ClusterIP, the address kubelet's
 * `--cluster-dns` names in pods' resolv.conf; and that address, for the kubelet part.
 */
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import { startClusterDns, type ClusterDns } from '../addons/dns/index.ts';
import { KUBE_DNS_SERVICE } from '../apiserver/system-objects/index.ts';
import type { Projection } from '../projections/index.ts';
import type { Service } from '../schemas/index.ts';

/** Where the cluster DNS of a process listens, and what it forwards. */
export interface ClusterDnsSettings {
  /** The `--dns` address (port 0: a free one). */
  readonly host: string;
  readonly port: number;
  /** `--dns-upstream`: servers for names outside the cluster zone; none: REFUSED. */
  readonly upstreams?: readonly string[];
  /** Also answer on port 53 of the kube-dns ClusterIP (`--dns-cluster-ip`, needs root and an address this host can bind); default false. */
  readonly onClusterIP?: boolean;
}

/** Starts the cluster DNS of a process with `settings`, answering from `projection`. */
export const startProcessDns = (projection: Projection, settings: ClusterDnsSettings, logger: Logger): Promise<ClusterDns> =>
  startClusterDns({
    projection,
    host: settings.host,
    port: settings.port,
    ...(settings.upstreams ? { upstreams: settings.upstreams } : {}),
    ...(settings.onClusterIP ? { service: KUBE_DNS_SERVICE } : {}),
    logger,
  });

/** The Services the proxy of a process leaves to its own DNS: kube-dns, when the DNS answers on its ClusterIP. */
export const servedByProcessDns = (settings: ClusterDnsSettings | undefined): (typeof KUBE_DNS_SERVICE)[] => (settings?.onClusterIP ? [KUBE_DNS_SERVICE] : []);

/** kubelet's `--cluster-dns` read from the projection: the kube-dns Service's ClusterIP, once it has one. */
export const kubeDnsClusterIPs =
  (projection: Projection) =>
  (): string[] => {
    const clusterIP = (projection.view().get(`Service/${KUBE_DNS_SERVICE.namespace}/${KUBE_DNS_SERVICE.name}`) as Service | undefined)?.spec?.clusterIP;
    return clusterIP !== undefined && isIP(clusterIP) !== 0 ? [clusterIP] : [];
  };
