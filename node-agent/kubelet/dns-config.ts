/**
 * A pod's DNS settings (its resolv.conf), computed as kubelet 1.32 computes them
 * (`pkg/kubelet/network/dns/dns.go`, `GetPodDNS`), as a pure function of the pod and the
 * node's settings (kubelet's `--cluster-dns`, `--cluster-domain`, `--resolv-conf`):
 *
 * - `ClusterFirst` (the default; `Default` for a hostNetwork pod) and
 *   `ClusterFirstWithHostNet`: the cluster DNS servers only, searches
 *   `<ns>.svc.<domain> svc.<domain> <domain>` then the host's, options `ndots:5`. With no
 *   cluster DNS server known, kubelet falls back to `Default` and warns (`MissingClusterDNS`).
 * - `Default`: the host's resolv.conf (with no resolv.conf, `--resolv-conf=""`: nameserver
 *   127.0.0.1 and search `.`, which turns lookups off).
 * - `None`: nothing but the pod's `dnsConfig`.
 *
 * The pod's `dnsConfig` is then merged in (servers and searches appended without
 * duplicates, options overriding by name) and the result cut to what libc resolvers take:
 * 3 nameservers, 32 search domains of at most 253 characters, a search line of at most
 * 2048 characters (a warning, `DNSConfigForming`, says what was left out).
 */
import { isIP } from 'node:net';
import type { Pod } from '../../schemas/index.ts';

/** kubelet's `validation.MaxDNSNameservers`. */
export const MAX_DNS_NAMESERVERS = 3;
/** kubelet's `validation.MaxDNSSearchPaths`. */
export const MAX_DNS_SEARCH_PATHS = 32;
/** kubelet's `validation.MaxDNSSearchListChars`. */
export const MAX_DNS_SEARCH_LIST_CHARS = 2048;
/** A search domain longer than a DNS-1123 subdomain makes some resolvers (glibc 2.28) abort; kubelet drops it. */
const MAX_SEARCH_DOMAIN_CHARS = 253;
/** kubelet's `defaultDNSOptions`. */
const CLUSTER_FIRST_OPTIONS = ['ndots:5'] as const;

/** What a resolv.conf says (kubelet's `parseResolvConf`). */
export interface ResolvConf {
  readonly nameservers: readonly string[];
  readonly searches: readonly string[];
  readonly options: readonly string[];
}

/** The DNS settings of a node's kubelet. */
export interface NodeDnsSettings {
  /** `--cluster-dns`: the cluster DNS servers' IPs (the kube-dns Service's ClusterIP); empty: none known. */
  readonly clusterDNS: readonly string[];
  /** `--cluster-domain` (e.g. `cluster.local`); empty: no cluster search domains. */
  readonly clusterDomain: string;
  /** The parsed `--resolv-conf` (the host's `/etc/resolv.conf`); undefined: `--resolv-conf=""`. */
  readonly hostResolvConf: ResolvConf | undefined;
  /** The node's IPs, for the `--resolv-conf=""` fallback nameserver (`::1` for an IPv6 one); default none (127.0.0.1). */
  readonly nodeIPs?: readonly string[];
}

/** CRI's `runtime.v1.DNSConfig`: what the runtime writes into the sandbox's resolv.conf. */
export interface PodDnsConfig {
  readonly servers: readonly string[];
  readonly searches: readonly string[];
  readonly options: readonly string[];
}

/** Something kubelet reports as a Warning Event of the pod. */
export interface DnsWarning {
  readonly reason: 'MissingClusterDNS' | 'DNSConfigForming';
  readonly message: string;
}

/** A pod's DNS settings and what kubelet would warn about while forming them. */
export interface PodDnsResult {
  readonly config: PodDnsConfig;
  readonly warnings: readonly DnsWarning[];
}

/** Which base settings a pod gets (kubelet's `podDNSType`). */
type PodDnsType = 'cluster' | 'host' | 'none';

const withoutDuplicates = (values: readonly string[]): string[] => [...new Set(values)];

/** Options by name, later ones replacing earlier ones of the same name (kubelet's `appendOptions`). */
const optionMap = (options: readonly string[]): Map<string, string> => {
  const byName = new Map<string, string>();
  for (const option of options) {
    const colon = option.indexOf(':');
    byName.set(colon === -1 ? option : option.slice(0, colon), colon === -1 ? '' : option.slice(colon + 1));
  }
  return byName;
};

/**
 * The options as `name` or `name:value`, sorted by name (kubelet builds them from a Go map,
 * in no particular order; sorted here, so the same pod always gets the same resolv.conf).
 */
const optionList = (byName: ReadonlyMap<string, string>): string[] =>
  [...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, value]) => (value === '' ? name : `${name}:${value}`));

/** Parses resolv.conf text as kubelet does: `nameserver`, `search` (the last line wins, trailing dots dropped, `.` left out) and `options`. */
export const parseResolvConf = (text: string): ResolvConf => {
  const nameservers: string[] = [];
  let searches: string[] = [];
  let options: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.startsWith(';')) continue;
    const fields = line.trim().split(/\s+/).filter(Boolean);
    const [keyword, ...rest] = fields;
    if (keyword === 'nameserver' && rest[0] !== undefined) nameservers.push(rest[0]);
    else if (keyword === 'search') searches = rest.filter((domain) => domain !== '.').map((domain) => domain.replace(/\.$/, ''));
    else if (keyword === 'options') options = optionList(optionMap([...options, ...rest]));
  }
  return { nameservers, searches, options };
};

/** kubelet's `getPodDNSType`: `ClusterFirst` is `Default` for a hostNetwork pod; an unknown policy is `ClusterFirst`. */
const dnsTypeOf = (pod: Pod): PodDnsType => {
  switch (pod.spec.dnsPolicy ?? 'ClusterFirst') {
    case 'None':
      return 'none';
    case 'ClusterFirstWithHostNet':
      return 'cluster';
    case 'Default':
      return 'host';
    case 'ClusterFirst':
    default:
      return pod.spec.hostNetwork === true ? 'host' : 'cluster';
  }
};

/** kubelet's `formDNSSearchFitsLimits`: at most 32 domains, none over 253 characters, a line of at most 2048. */
const searchesWithinLimits = (searches: readonly string[], warnings: DnsWarning[]): string[] => {
  let exceeded = searches.length > MAX_DNS_SEARCH_PATHS;
  let kept = searches.slice(0, MAX_DNS_SEARCH_PATHS);
  const short = kept.filter((domain) => domain.length <= MAX_SEARCH_DOMAIN_CHARS);
  exceeded ||= short.length !== kept.length;
  kept = short;
  let line = kept.join(' ').length;
  if (line > MAX_DNS_SEARCH_LIST_CHARS) {
    exceeded = true;
    while (kept.length > 0 && line > MAX_DNS_SEARCH_LIST_CHARS) line -= (kept.pop() ?? '').length + 1;
  }
  if (exceeded) {
    warnings.push({
      reason: 'DNSConfigForming',
      message: `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${kept.join(' ')}`,
    });
  }
  return kept;
};

/** kubelet's `formDNSNameserversFitsLimits`: the first 3. */
const nameserversWithinLimits = (servers: readonly string[], warnings: DnsWarning[]): string[] => {
  if (servers.length <= MAX_DNS_NAMESERVERS) return [...servers];
  const kept = servers.slice(0, MAX_DNS_NAMESERVERS);
  warnings.push({
    reason: 'DNSConfigForming',
    message: `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${kept.join(' ')}`,
  });
  return kept;
};

/** The settings `--resolv-conf=""` gives: the node's own resolver address and lookups turned off. */
const noResolvConf = (settings: NodeDnsSettings): PodDnsConfig => {
  const servers = (settings.nodeIPs ?? []).map((ip) => (isIP(ip) === 6 ? '::1' : '127.0.0.1'));
  return { servers: servers.length > 0 ? servers : ['127.0.0.1'], searches: ['.'], options: [] };
};

/** The pod's DNS settings as kubelet's `GetPodDNS` forms them; see the module comment. */
export const podDnsConfig = (pod: Pod, settings: NodeDnsSettings): PodDnsResult => {
  const warnings: DnsWarning[] = [];
  const host = settings.hostResolvConf;
  const hostConfig: PodDnsConfig = host ? { servers: host.nameservers, searches: host.searches, options: host.options } : noResolvConf(settings);
  let base: PodDnsConfig;
  const type = dnsTypeOf(pod);
  if (type === 'none') {
    base = { servers: [], searches: [], options: [] };
  } else if (type === 'cluster' && settings.clusterDNS.length > 0) {
    const domain = settings.clusterDomain;
    const namespace = pod.metadata.namespace ?? 'default';
    const hostSearches = host?.searches ?? [];
    base = {
      servers: [...settings.clusterDNS],
      searches: domain === '' ? [...hostSearches] : withoutDuplicates([`${namespace}.svc.${domain}`, `svc.${domain}`, domain, ...hostSearches]),
      options: [...CLUSTER_FIRST_OPTIONS],
    };
  } else {
    if (type === 'cluster') {
      warnings.push({
        reason: 'MissingClusterDNS',
        message: `pod: "${pod.metadata.name}_${pod.metadata.namespace ?? 'default'}(${pod.metadata.uid ?? ''})". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`,
      });
    }
    base = hostConfig;
  }
  const podConfig = pod.spec.dnsConfig;
  const merged: PodDnsConfig = podConfig
    ? {
        servers: withoutDuplicates([...base.servers, ...(podConfig.nameservers ?? [])]),
        searches: withoutDuplicates([...base.searches, ...(podConfig.searches ?? [])]),
        options: optionList(
          new Map([...optionMap(base.options), ...(podConfig.options ?? []).flatMap((option) => (option.name === undefined ? [] : [[option.name, option.value ?? ''] as const]))]),
        ),
      }
    : base;
  return {
    config: { servers: nameserversWithinLimits(merged.servers, warnings), searches: searchesWithinLimits(merged.searches, warnings), options: merged.options },
    warnings,
  };
};
