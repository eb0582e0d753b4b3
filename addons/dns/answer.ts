/**
 * The answer to one question, as CoreDNS's kubernetes plugin (with the server block
 * `kubernetes cluster.local in-addr.arpa ip6.arpa`) gives it: a pure function of the
 * question, the directory and the options.
 *
 * - `service.ns.svc.zone` A/AAAA: the ClusterIPs; a headless Service: every ready endpoint
 *   address; ExternalName: a CNAME to the external name (followed when it is in the zone).
 * - SRV `_port._proto.service.ns.svc.zone` (a named port) or `service.ns.svc.zone` (every
 *   port): priority 0, weight 100/n, target the service name (ClusterIP) or each endpoint's
 *   name (headless), the target's address in the additional section.
 * - `endpoint.service.ns.svc.zone`: the endpoint whose hostname (or dashed IP) it is.
 * - `a-b-c-d.ns.pod.zone`: per the pods mode (`disabled`, `insecure`, `verified`).
 * - PTR: ClusterIPs → the service name, endpoint addresses → the endpoint name.
 * - A name that exists without records of the type: NOERROR, no answer, the zone's SOA in
 *   the authority section (NODATA); a name that does not exist: NXDOMAIN with the SOA.
 * - Names outside the zones: forwarded when upstreams are configured, else REFUSED (CoreDNS's
 *   "no such zone" answer when no server block covers them; a `.:53` block whose kubernetes
 *   plugin has no next plugin would say SERVFAIL instead).
 */
import { isIP } from 'node:net';
import type { Answer, SrvAnswer } from 'dns-packet';
import type { ClusterDirectory, EndpointEntry, PortEntry, ServiceEntry } from './directory.ts';
import { canonicalAddress, parseClusterName, podLabelAddress, reverseAddress, type ClusterName } from './names.ts';

/** How pod names (`a-b-c-d.ns.pod.zone`) are answered, as CoreDNS's `pods` option. */
export const PodsMode = { Disabled: 'disabled', Insecure: 'insecure', Verified: 'verified' } as const;
/** How pod names are answered. */
export type PodsMode = (typeof PodsMode)[keyof typeof PodsMode];

/** The DNS schema version CoreDNS publishes at `dns-version.zone` (TXT). */
export const DNS_SCHEMA_VERSION = '1.1.0';

export interface AnswerOptions {
  /** The cluster domain, lower case, without the trailing dot (`cluster.local`). */
  readonly zone: string;
  /** TTL of every record (CoreDNS's default: 5 s). */
  readonly ttl: number;
  readonly pods: PodsMode;
  /** Upstreams are configured: names outside the zones (and unknown reverse names) are forwarded. */
  readonly forwarding: boolean;
  /** The server's own addresses, answered for `ns.dns.zone` and as the zone's NS glue. */
  readonly nameservers: readonly string[];
}

/** A question: the name as asked (case kept for the answer) and the type. */
export interface QuestionInput {
  readonly name: string;
  readonly type: string;
}

/** What to send back. */
export type Resolution =
  | { readonly type: 'answer'; readonly rcode: 'NOERROR' | 'NXDOMAIN'; readonly answers: readonly Answer[]; readonly authorities: readonly Answer[]; readonly additionals: readonly Answer[] }
  /** Not a name of ours and no upstream: REFUSED. */
  | { readonly type: 'refused' }
  /** Not a name of ours: send the query to an upstream. */
  | { readonly type: 'forward' };

const REVERSE_ZONES = ['in-addr.arpa', 'ip6.arpa'] as const;
/** CoreDNS follows at most this many CNAMEs inside the zone. */
const MAX_CNAME_CHAIN = 8;

/** One record CoreDNS's backend returns: an address or a name (CNAME), a port, and the owner name SRV targets use. */
interface ServiceRecord {
  readonly host: string;
  readonly port: number;
  readonly owner: string;
}

/** `undefined`: the name does not exist (NXDOMAIN); an empty list: it exists without records (NODATA). */
type Lookup = readonly ServiceRecord[] | undefined;

const labelsOf = (name: string): string[] => name.toLowerCase().replace(/\.$/, '').split('.').filter((l) => l.length > 0);

const within = (labels: readonly string[], zone: string): string[] | undefined => {
  const zoneLabels = zone.split('.');
  if (labels.length < zoneLabels.length) return undefined;
  const tail = labels.slice(labels.length - zoneLabels.length);
  return tail.every((l, i) => l === zoneLabels[i]) ? labels.slice(0, labels.length - zoneLabels.length) : undefined;
};

const matches = (wanted: string | undefined, actual: string): boolean => wanted === undefined || wanted === actual.toLowerCase();

/** The records of a service name, as CoreDNS's `findServices`. */
const serviceRecords = (name: Extract<ClusterName, { type: 'service' }>, directory: ClusterDirectory, zone: string): Lookup => {
  if (!directory.namespaces.has(name.namespace)) return undefined;
  const service = directory.services.get(`${name.namespace}/${name.service}`);
  if (!service) return undefined;
  const base = `${service.name}.${service.namespace}.svc.${zone}`;
  if (service.type === 'ExternalName') return [{ host: service.externalName, port: -1, owner: base }];
  const portMatches = (p: PortEntry): boolean => matches(name.port, p.name) && matches(name.protocol, p.protocol);
  const records: ServiceRecord[] = [];
  if (service.type === 'Headless' || name.endpoint !== undefined) {
    for (const endpoint of endpointsOf(service)) {
      if (name.endpoint !== undefined && endpoint.label !== name.endpoint) continue;
      for (const port of endpoint.ports) {
        if (portMatches(port)) records.push({ host: endpoint.ip, port: port.port, owner: `${endpoint.label}.${base}` });
      }
    }
  } else {
    for (const port of service.ports) {
      if (!portMatches(port)) continue;
      for (const ip of service.clusterIPs) records.push({ host: ip, port: port.port, owner: base });
    }
  }
  return records.length > 0 ? records : undefined;
};

const endpointsOf = (service: ServiceEntry): readonly EndpointEntry[] => (service.type === 'ExternalName' ? [] : service.endpoints);

const podRecords = (name: Extract<ClusterName, { type: 'pod' }>, directory: ClusterDirectory, options: AnswerOptions): Lookup => {
  if (options.pods === PodsMode.Disabled || !directory.namespaces.has(name.namespace)) return undefined;
  const ip = podLabelAddress(name.pod);
  if (isIP(ip) === 0) return undefined;
  if (options.pods === PodsMode.Verified && !directory.podAddresses.has(`${name.namespace}/${canonicalAddress(ip)}`)) return undefined;
  return [{ host: canonicalAddress(ip), port: -1, owner: `${name.pod}.${name.namespace}.pod.${options.zone}` }];
};

/** The records of a name under the zone (labels left of it). */
const lookupZoneName = (labels: readonly string[], directory: ClusterDirectory, options: AnswerOptions): Lookup => {
  const name = parseClusterName(labels);
  switch (name.type) {
    case 'apex':
      return [];
    case 'invalid':
      return undefined;
    case 'namespace':
      return directory.namespaces.has(name.namespace) ? [] : undefined;
    case 'service':
      return serviceRecords(name, directory, options.zone);
    case 'pod':
      return podRecords(name, directory, options);
    default:
      return name satisfies never;
  }
};

const fqdn = (name: string): string => name.replace(/\.$/, '');

const soa = (zone: string, options: AnswerOptions, directory: ClusterDirectory): Answer => ({
  type: 'SOA',
  name: zone,
  ttl: Math.min(options.ttl, 300),
  data: {
    mname: `ns.dns.${zone}`,
    rname: `hostmaster.${zone}`,
    serial: directory.serial,
    refresh: 7200,
    retry: 1800,
    expire: 86400,
    minimum: options.ttl,
  },
});

const addressRecord = (name: string, ip: string, ttl: number): Answer => ({ type: isIP(ip) === 6 ? 'AAAA' : 'A', name, ttl, data: ip });

const nameserverRecords = (name: string, options: AnswerOptions, family: 4 | 6 | 'any'): Answer[] =>
  options.nameservers.filter((ip) => family === 'any' || isIP(ip) === family).map((ip) => addressRecord(name, ip, options.ttl));

/** A/AAAA (`family`) of a zone name, following CNAMEs inside the zone (CoreDNS's `plugin.A`). */
const addresses = (qname: string, family: 4 | 6, directory: ClusterDirectory, options: AnswerOptions, chain: number): Answer[] | undefined => {
  const labels = within(labelsOf(qname), options.zone);
  if (labels === undefined) return [];
  if (labels.join('.') === 'ns.dns') return nameserverRecords(qname, options, family);
  const records = lookupZoneName(labels, directory, options);
  if (records === undefined) return undefined;
  const answers: Answer[] = [];
  const seen = new Set<string>();
  for (const record of records) {
    const kind = isIP(record.host);
    if (kind === 0) {
      if (labelsOf(record.host).join('.') === labelsOf(qname).join('.') || chain >= MAX_CNAME_CHAIN) continue;
      const cname: Answer = { type: 'CNAME', name: qname, ttl: options.ttl, data: record.host };
      if (within(labelsOf(record.host), options.zone) === undefined) {
        // Outside the zone: the CNAME alone; the client's resolver (or a forwarding server) follows it.
        answers.push(cname);
        continue;
      }
      const next = addresses(record.host, family, directory, options, chain + 1);
      if (next && next.length > 0) answers.push(cname, ...next);
      continue;
    }
    if (kind === family && !seen.has(record.host)) {
      seen.add(record.host);
      answers.push(addressRecord(qname, record.host, options.ttl));
    }
  }
  return answers;
};

/** SRV records and their targets' addresses (CoreDNS's `plugin.SRV`; ExternalName records are left out). */
const srvRecords = (qname: string, records: readonly ServiceRecord[], options: AnswerOptions): { answers: Answer[]; additionals: Answer[] } => {
  const internal = records.filter((r) => isIP(r.host) !== 0);
  // Every record weighs 100 of a total of 100 per record: each gets floor(100 / n), as CoreDNS computes it.
  const weight = internal.length > 0 ? Math.floor(100 / internal.length) : 0;
  const answers: SrvAnswer[] = [];
  const additionals: Answer[] = [];
  const seenTargets = new Set<string>();
  const seenAddresses = new Set<string>();
  for (const record of internal) {
    if (record.port === -1) continue;
    const target = `${record.owner}:${record.port}`;
    if (!seenTargets.has(target)) {
      seenTargets.add(target);
      answers.push({ type: 'SRV', name: qname, ttl: options.ttl, data: { priority: 0, weight, port: record.port, target: record.owner } });
    }
    const address = `${record.owner}/${record.host}`;
    if (!seenAddresses.has(address)) {
      seenAddresses.add(address);
      additionals.push(addressRecord(record.owner, record.host, options.ttl));
    }
  }
  return { answers, additionals };
};

const reply = (rcode: 'NOERROR' | 'NXDOMAIN', answers: readonly Answer[], authorities: readonly Answer[] = [], additionals: readonly Answer[] = []): Resolution => ({
  type: 'answer',
  rcode,
  answers,
  authorities,
  additionals,
});

/** The answer for a name under the cluster zone. */
const answerZone = (question: QuestionInput, labels: readonly string[], directory: ClusterDirectory, options: AnswerOptions): Resolution => {
  const zone = options.zone;
  const qname = fqdn(question.name);
  const noData = (): Resolution => reply('NOERROR', [], [soa(zone, options, directory)]);
  const noName = (): Resolution => reply('NXDOMAIN', [], [soa(zone, options, directory)]);
  const relative = labels.join('.');
  if (labels.length === 0 && question.type === 'SOA') return reply('NOERROR', [soa(zone, options, directory)]);
  if (labels.length === 0 && question.type === 'NS') {
    return reply('NOERROR', [{ type: 'NS', name: qname, ttl: options.ttl, data: `ns.dns.${zone}` }], [], nameserverRecords(`ns.dns.${zone}`, options, 'any'));
  }
  if (relative === 'dns-version' && question.type === 'TXT') return reply('NOERROR', [{ type: 'TXT', name: qname, ttl: 28800, data: DNS_SCHEMA_VERSION }]);
  if (relative === 'ns.dns') {
    const family = question.type === 'A' ? 4 : question.type === 'AAAA' ? 6 : undefined;
    const answers = family ? nameserverRecords(qname, options, family) : [];
    return answers.length > 0 ? reply('NOERROR', answers) : noData();
  }
  const records = lookupZoneName(labels, directory, options);
  if (records === undefined) return noName();
  switch (question.type) {
    case 'A':
    case 'AAAA': {
      const answers = addresses(qname, question.type === 'A' ? 4 : 6, directory, options, 0) ?? [];
      return answers.length > 0 ? reply('NOERROR', answers) : noData();
    }
    case 'SRV': {
      const { answers, additionals } = srvRecords(qname, records, options);
      return answers.length > 0 ? reply('NOERROR', answers, [], additionals) : noData();
    }
    case 'CNAME': {
      const first = records[0];
      return first && isIP(first.host) === 0 ? reply('NOERROR', [{ type: 'CNAME', name: qname, ttl: options.ttl, data: first.host }]) : noData();
    }
    default:
      return noData();
  }
};

/** The answer for a name under `in-addr.arpa` / `ip6.arpa`. */
const answerReverse = (
  question: QuestionInput,
  labels: readonly string[],
  zone: (typeof REVERSE_ZONES)[number],
  directory: ClusterDirectory,
  options: AnswerOptions,
): Resolution => {
  if (labels.length === 0 && question.type === 'SOA') return reply('NOERROR', [soa(zone, options, directory)]);
  const ip = question.type === 'PTR' ? reverseAddress(labels, zone) : undefined;
  const entries = ip === undefined ? undefined : directory.reverse.get(canonicalAddress(ip));
  if (!entries || entries.length === 0) {
    // kubeadm's Corefile lets unknown reverse names fall through to `forward`.
    return options.forwarding && labels.length > 0 ? { type: 'forward' } : reply('NXDOMAIN', [], [soa(zone, options, directory)]);
  }
  const qname = fqdn(question.name);
  const targets = [...new Set(entries.map((e) => `${e.endpoint ? `${e.endpoint}.` : ''}${e.service}.${e.namespace}.svc.${options.zone}`))];
  return reply(
    'NOERROR',
    targets.map((target) => ({ type: 'PTR', name: qname, ttl: options.ttl, data: target })),
  );
};

/** Answers one question (class IN) from `directory`. */
export const answerQuestion = (question: QuestionInput, directory: ClusterDirectory, options: AnswerOptions): Resolution => {
  const labels = labelsOf(question.name);
  const inZone = within(labels, options.zone);
  if (inZone !== undefined) return answerZone(question, inZone, directory, options);
  for (const zone of REVERSE_ZONES) {
    const inReverse = within(labels, zone);
    if (inReverse !== undefined) return answerReverse(question, inReverse, zone, directory, options);
  }
  return options.forwarding ? { type: 'forward' } : { type: 'refused' };
};
