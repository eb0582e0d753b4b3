import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Answer } from 'dns-packet';
import { LOG_ADAPTERS } from '../../projections/testing.ts';
import type { Service } from '../../schemas/index.ts';
import { answerQuestion, PodsMode, type AnswerOptions, type Resolution } from './answer.ts';
import { buildDirectory, type ClusterDirectory } from './directory.ts';
import { ECHO_ENDPOINT, ECHO_IP, MANY_ENDPOINTS, openDnsTestCluster, WEB_ENDPOINTS, WEB_NOT_READY, type DnsTestCluster } from './testing.ts';

const OPTIONS: AnswerOptions = { zone: 'cluster.local', ttl: 5, pods: PodsMode.Insecure, forwarding: false, nameservers: ['127.0.0.53'] };
const SERIAL = 1_700_000_000;

/** The answer section as `type name data` lines (sorted), the way the cases are written. */
const lines = (records: readonly Answer[]): string[] =>
  records
    .map((r) => {
      const data = 'data' in r ? r.data : undefined;
      const text =
        r.type === 'SRV' ? `${r.data.priority} ${r.data.weight} ${r.data.port} ${r.data.target}` : typeof data === 'string' ? data : JSON.stringify(data);
      return `${r.type} ${r.name} ${text}`;
    })
    .sort();

const answered = (resolution: Resolution): Extract<Resolution, { type: 'answer' }> => {
  if (resolution.type !== 'answer') throw new Error(`expected an answer, got ${resolution.type}`);
  return resolution;
};

interface Case {
  readonly name: string;
  readonly type: string;
  readonly rcode: 'NOERROR' | 'NXDOMAIN';
  readonly answers: readonly string[];
  readonly additionals?: readonly string[];
}

const web = (label: string): string => `${label}.web.default.svc.cluster.local`;
const webAnswers = (name: string): string[] => WEB_ENDPOINTS.map((ip) => `A ${name} ${ip}`);

const CASES: readonly Case[] = [
  { name: 'echo.default.svc.cluster.local', type: 'A', rcode: 'NOERROR', answers: [`A echo.default.svc.cluster.local ${ECHO_IP}`] },
  { name: 'ECHO.Default.svc.cluster.local.', type: 'A', rcode: 'NOERROR', answers: [`A ECHO.Default.svc.cluster.local ${ECHO_IP}`] },
  { name: 'web.default.svc.cluster.local', type: 'A', rcode: 'NOERROR', answers: webAnswers('web.default.svc.cluster.local') },
  { name: web('web-0'), type: 'A', rcode: 'NOERROR', answers: [`A ${web('web-0')} ${WEB_ENDPOINTS[0]}`] },
  { name: web('web-1'), type: 'A', rcode: 'NOERROR', answers: [`A ${web('web-1')} ${WEB_ENDPOINTS[1]}`] },
  { name: web('127-100-0-13'), type: 'A', rcode: 'NOERROR', answers: [`A ${web('127-100-0-13')} ${WEB_ENDPOINTS[2]}`] },
  // Not ready: not published (no publishNotReadyAddresses).
  { name: web('web-2'), type: 'A', rcode: 'NXDOMAIN', answers: [] },
  // An endpoint name of a ClusterIP service answers the endpoint, as CoreDNS does.
  { name: '127-100-0-5.echo.default.svc.cluster.local', type: 'A', rcode: 'NOERROR', answers: [`A 127-100-0-5.echo.default.svc.cluster.local ${ECHO_ENDPOINT}`] },
  {
    name: '_http._tcp.echo.default.svc.cluster.local',
    type: 'SRV',
    rcode: 'NOERROR',
    answers: ['SRV _http._tcp.echo.default.svc.cluster.local 0 100 80 echo.default.svc.cluster.local'],
    additionals: [`A echo.default.svc.cluster.local ${ECHO_IP}`],
  },
  {
    name: '_dns._udp.echo.default.svc.cluster.local',
    type: 'SRV',
    rcode: 'NOERROR',
    answers: ['SRV _dns._udp.echo.default.svc.cluster.local 0 100 53 echo.default.svc.cluster.local'],
    additionals: [`A echo.default.svc.cluster.local ${ECHO_IP}`],
  },
  // The named port exists, over the other protocol it does not.
  { name: '_http._udp.echo.default.svc.cluster.local', type: 'SRV', rcode: 'NXDOMAIN', answers: [] },
  {
    name: 'echo.default.svc.cluster.local',
    type: 'SRV',
    rcode: 'NOERROR',
    answers: ['SRV echo.default.svc.cluster.local 0 50 53 echo.default.svc.cluster.local', 'SRV echo.default.svc.cluster.local 0 50 80 echo.default.svc.cluster.local'],
    additionals: [`A echo.default.svc.cluster.local ${ECHO_IP}`],
  },
  {
    name: '_http._tcp.web.default.svc.cluster.local',
    type: 'SRV',
    rcode: 'NOERROR',
    answers: ['web-0', 'web-1', '127-100-0-13'].map((label) => `SRV _http._tcp.web.default.svc.cluster.local 0 33 8080 ${web(label)}`),
    additionals: [`A ${web('127-100-0-13')} ${WEB_ENDPOINTS[2]}`, `A ${web('web-0')} ${WEB_ENDPOINTS[0]}`, `A ${web('web-1')} ${WEB_ENDPOINTS[1]}`],
  },
  // Headless without ports: A records, no SRV (NODATA).
  { name: 'many.default.svc.cluster.local', type: 'A', rcode: 'NOERROR', answers: MANY_ENDPOINTS.map((ip) => `A many.default.svc.cluster.local ${ip}`) },
  { name: 'many.default.svc.cluster.local', type: 'SRV', rcode: 'NOERROR', answers: [] },
  // IPv6 endpoints: AAAA, the dashed label of the canonical address, PTR under ip6.arpa.
  { name: 'v6.default.svc.cluster.local', type: 'AAAA', rcode: 'NOERROR', answers: ['AAAA v6.default.svc.cluster.local fd00::5'] },
  { name: 'v6.default.svc.cluster.local', type: 'A', rcode: 'NOERROR', answers: [] },
  { name: 'fd00--5.v6.default.svc.cluster.local', type: 'AAAA', rcode: 'NOERROR', answers: ['AAAA fd00--5.v6.default.svc.cluster.local fd00::5'] },
  {
    name: `${[...'fd000000000000000000000000000005'].reverse().join('.')}.ip6.arpa`,
    type: 'PTR',
    rcode: 'NOERROR',
    answers: [`PTR ${[...'fd000000000000000000000000000005'].reverse().join('.')}.ip6.arpa fd00--5.v6.default.svc.cluster.local`],
  },
  { name: 'fd00--5.default.pod.cluster.local', type: 'AAAA', rcode: 'NOERROR', answers: ['AAAA fd00--5.default.pod.cluster.local fd00::5'] },
  { name: 'external.default.svc.cluster.local', type: 'A', rcode: 'NOERROR', answers: ['CNAME external.default.svc.cluster.local example.com'] },
  { name: 'external.default.svc.cluster.local', type: 'CNAME', rcode: 'NOERROR', answers: ['CNAME external.default.svc.cluster.local example.com'] },
  // An ExternalName inside the zone is followed.
  {
    name: 'alias.default.svc.cluster.local',
    type: 'A',
    rcode: 'NOERROR',
    answers: ['CNAME alias.default.svc.cluster.local echo.default.svc.cluster.local', `A echo.default.svc.cluster.local ${ECHO_IP}`],
  },
  { name: '50.0.96.127.in-addr.arpa', type: 'PTR', rcode: 'NOERROR', answers: ['PTR 50.0.96.127.in-addr.arpa echo.default.svc.cluster.local'] },
  { name: '10.0.100.127.in-addr.arpa', type: 'PTR', rcode: 'NOERROR', answers: [`PTR 10.0.100.127.in-addr.arpa ${web('web-0')}`] },
  { name: '99.0.96.127.in-addr.arpa', type: 'PTR', rcode: 'NXDOMAIN', answers: [] },
  { name: 'nothing.default.svc.cluster.local', type: 'A', rcode: 'NXDOMAIN', answers: [] },
  { name: 'echo.nowhere.svc.cluster.local', type: 'A', rcode: 'NXDOMAIN', answers: [] },
  { name: 'echo.default.nope.cluster.local', type: 'A', rcode: 'NXDOMAIN', answers: [] },
  // The search path's first expansion of a full name: too many labels, NXDOMAIN.
  { name: 'echo.default.svc.cluster.local.default.svc.cluster.local', type: 'A', rcode: 'NXDOMAIN', answers: [] },
  // NODATA: the name exists without records of the type.
  { name: 'echo.default.svc.cluster.local', type: 'AAAA', rcode: 'NOERROR', answers: [] },
  { name: 'echo.default.svc.cluster.local', type: 'TXT', rcode: 'NOERROR', answers: [] },
  { name: 'empty.svc.cluster.local', type: 'A', rcode: 'NOERROR', answers: [] },
  { name: 'svc.cluster.local', type: 'A', rcode: 'NOERROR', answers: [] },
  { name: 'cluster.local', type: 'A', rcode: 'NOERROR', answers: [] },
  { name: 'missing.svc.cluster.local', type: 'A', rcode: 'NXDOMAIN', answers: [] },
  { name: '127-100-0-77.default.pod.cluster.local', type: 'A', rcode: 'NOERROR', answers: ['A 127-100-0-77.default.pod.cluster.local 127.100.0.77'] },
  { name: 'not-an-ip.default.pod.cluster.local', type: 'A', rcode: 'NXDOMAIN', answers: [] },
  { name: 'dns-version.cluster.local', type: 'TXT', rcode: 'NOERROR', answers: ['TXT dns-version.cluster.local 1.1.0'] },
  { name: 'ns.dns.cluster.local', type: 'A', rcode: 'NOERROR', answers: ['A ns.dns.cluster.local 127.0.0.53'] },
];

describe.each(LOG_ADAPTERS)('cluster DNS answers from a projection of the %s log', (adapter) => {
  let cluster: DnsTestCluster;
  let directory: ClusterDirectory;
  beforeAll(async () => {
    cluster = await openDnsTestCluster(adapter);
    directory = buildDirectory(cluster.projection.view(), { withPodAddresses: false, serial: SERIAL });
  }, 300_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it('folded the scenario (the Service kept the ClusterIP it asked for)', () => {
    const echo = cluster.projection.view().get('Service/default/echo') as Service | undefined;
    expect(echo?.spec?.clusterIP).toBe(ECHO_IP);
  });

  it.each(CASES)('$type $name → $rcode', (c) => {
    const resolution = answered(answerQuestion({ name: c.name, type: c.type }, directory, OPTIONS));
    expect(resolution.rcode).toBe(c.rcode);
    expect(lines(resolution.answers)).toEqual([...c.answers].sort());
    if (c.additionals) expect(lines(resolution.additionals)).toEqual([...c.additionals].sort());
    for (const record of resolution.answers) expect('ttl' in record ? record.ttl : undefined).toBe(c.type === 'TXT' ? 28800 : 5);
    // NXDOMAIN and NODATA carry the zone's SOA in the authority section, as CoreDNS's BackendError.
    if (resolution.answers.length === 0) {
      const zone = c.name.endsWith('.in-addr.arpa') ? 'in-addr.arpa' : c.name.endsWith('.ip6.arpa') ? 'ip6.arpa' : 'cluster.local';
      expect(resolution.authorities).toEqual([
        {
          type: 'SOA',
          name: zone,
          ttl: 5,
          data: { mname: `ns.dns.${zone}`, rname: `hostmaster.${zone}`, serial: SERIAL, refresh: 7200, retry: 1800, expire: 86400, minimum: 5 },
        },
      ]);
    } else {
      expect(resolution.authorities).toEqual([]);
    }
  });

  it('refuses names outside its zones without upstreams, and forwards them (and unknown reverse names) with', () => {
    expect(answerQuestion({ name: 'example.com', type: 'A' }, directory, OPTIONS)).toEqual({ type: 'refused' });
    const forwarding = { ...OPTIONS, forwarding: true };
    expect(answerQuestion({ name: 'example.com', type: 'A' }, directory, forwarding)).toEqual({ type: 'forward' });
    expect(answerQuestion({ name: '1.1.1.1.in-addr.arpa', type: 'PTR' }, directory, forwarding)).toEqual({ type: 'forward' });
    // Names of the zone are never forwarded.
    expect(answered(answerQuestion({ name: 'nothing.default.svc.cluster.local', type: 'A' }, directory, forwarding)).rcode).toBe('NXDOMAIN');
  });

  it('answers pod names only when the pods mode allows: disabled never, verified only for a pod that has the address', () => {
    const name = { name: `${WEB_NOT_READY.replaceAll('.', '-')}.default.pod.cluster.local`, type: 'A' };
    expect(answered(answerQuestion(name, directory, { ...OPTIONS, pods: PodsMode.Disabled })).rcode).toBe('NXDOMAIN');
    const verified = buildDirectory(cluster.projection.view(), { withPodAddresses: true, serial: SERIAL });
    // No pod holds that address (the Endpoints name it, but no Pod status does).
    expect(answered(answerQuestion(name, verified, { ...OPTIONS, pods: PodsMode.Verified })).rcode).toBe('NXDOMAIN');
    expect(answered(answerQuestion(name, verified, { ...OPTIONS, pods: PodsMode.Insecure })).answers).toHaveLength(1);
  });

  it('answers the zone apex SOA and NS with the nameserver as glue', () => {
    const soa = answered(answerQuestion({ name: 'cluster.local', type: 'SOA' }, directory, OPTIONS));
    expect(lines(soa.answers)).toHaveLength(1);
    const ns = answered(answerQuestion({ name: 'cluster.local', type: 'NS' }, directory, OPTIONS));
    expect(lines(ns.answers)).toEqual(['NS cluster.local ns.dns.cluster.local']);
    expect(lines(ns.additionals)).toEqual(['A ns.dns.cluster.local 127.0.0.53']);
  });
});
