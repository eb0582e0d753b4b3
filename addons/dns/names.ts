/**
 * Query names of the cluster zone, parsed as CoreDNS's kubernetes plugin parses them
 * (`plugin/kubernetes/parse.go`), following the Kubernetes DNS-Based Service Discovery
 * specification:
 *   service.namespace.svc.zone, endpoint.service.namespace.svc.zone,
 *   _port._protocol.service.namespace.svc.zone, pod.namespace.pod.zone.
 */

/** What a name under the zone asks for. */
export type ClusterName =
  /** The zone, `svc.zone` or `pod.zone`: exists, holds no records (NODATA). */
  | { readonly type: 'apex' }
  /** `namespace.svc.zone` / `namespace.pod.zone`: exists when the namespace does. */
  | { readonly type: 'namespace'; readonly namespace: string }
  | {
      readonly type: 'service';
      readonly namespace: string;
      readonly service: string;
      /** An endpoint label (`web-0`, `10-0-0-1`); absent: the service itself. */
      readonly endpoint?: string;
      /** `_port._protocol` of an SRV name, without the underscores; absent: every port. */
      readonly port?: string;
      readonly protocol?: string;
    }
  | { readonly type: 'pod'; readonly namespace: string; readonly pod: string }
  /** Not a name of the schema (another second-level label, or too many labels): NXDOMAIN. */
  | { readonly type: 'invalid' };

const stripUnderscore = (label: string): string => (label.startsWith('_') ? label.slice(1) : label);

/**
 * Parses `labels` (the name's labels left of the zone, lower case, leftmost first).
 * Five labels or more before `svc`/`pod` is too long, as in CoreDNS.
 */
export const parseClusterName = (labels: readonly string[]): ClusterName => {
  const segments = [...labels];
  const kind = segments.pop();
  if (kind === undefined) return { type: 'apex' };
  if (kind !== 'svc' && kind !== 'pod') return { type: 'invalid' };
  const namespace = segments.pop();
  if (namespace === undefined) return { type: 'apex' };
  const name = segments.pop();
  if (name === undefined) return { type: 'namespace', namespace };
  if (kind === 'pod') return { type: 'pod', namespace, pod: name };
  switch (segments.length) {
    case 0:
      return { type: 'service', namespace, service: name };
    case 1:
      return { type: 'service', namespace, service: name, endpoint: segments[0] as string };
    case 2:
      return { type: 'service', namespace, service: name, port: stripUnderscore(segments[0] as string), protocol: stripUnderscore(segments[1] as string) };
    default:
      return { type: 'invalid' };
  }
};

/** The address a pod label names (`10-0-0-1` → 10.0.0.1, `fd00--1` → fd00::1), as CoreDNS's `findPods` reads it. */
export const podLabelAddress = (label: string): string =>
  (label.match(/-/g) ?? []).length === 3 && !label.includes('--') ? label.replaceAll('-', '.') : label.replaceAll('-', ':');

/** The address of a reverse name (labels left of `in-addr.arpa` / `ip6.arpa`), or undefined when it is not a whole address. */
export const reverseAddress = (labels: readonly string[], zone: 'in-addr.arpa' | 'ip6.arpa'): string | undefined => {
  if (zone === 'in-addr.arpa') {
    if (labels.length !== 4 || !labels.every((l) => /^(0|[1-9]\d{0,2})$/.test(l) && Number(l) <= 255)) return undefined;
    return [...labels].reverse().join('.');
  }
  if (labels.length !== 32 || !labels.every((l) => /^[0-9a-f]$/.test(l))) return undefined;
  const nibbles = [...labels].reverse().join('');
  const groups = Array.from({ length: 8 }, (_, i) => nibbles.slice(i * 4, i * 4 + 4).replace(/^0+(?=.)/, ''));
  return compressIPv6(groups);
};

/** The canonical text of an IPv6 address from its 8 groups (longest zero run as `::`, RFC 5952). */
const compressIPv6 = (groups: readonly string[]): string => {
  let best = { start: -1, length: 0 };
  for (let i = 0; i < groups.length; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < groups.length && groups[j] === '0') j++;
    if (j - i > best.length && j - i > 1) best = { start: i, length: j - i };
    i = j;
  }
  if (best.start < 0) return groups.join(':');
  return `${groups.slice(0, best.start).join(':')}::${groups.slice(best.start + best.length).join(':')}`;
};

/** The canonical text of an address, for comparing addresses written differently (`fd00:0::1` and `fd00::1`). */
export const canonicalAddress = (ip: string): string => {
  if (!ip.includes(':')) return ip;
  const [head = '', tail] = ip.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  if (tail === undefined && left.length !== 8) return ip.toLowerCase();
  const zeros = Array.from({ length: 8 - left.length - right.length }, () => '0');
  return compressIPv6([...left, ...zeros, ...right].map((g) => g.replace(/^0+(?=.)/, '')));
};
