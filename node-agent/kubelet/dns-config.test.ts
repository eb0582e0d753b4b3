import { describe, expect, it } from 'vitest';
import type { Pod } from '../../schemas/index.ts';
import { parseResolvConf, podDnsConfig, type NodeDnsSettings, type PodDnsConfig } from './dns-config.ts';

const HOST = parseResolvConf(['# the host', 'nameserver 192.0.2.53', 'nameserver 192.0.2.54', 'search corp.example. lab.example', 'options timeout:2 rotate'].join('\n'));

const NODE: NodeDnsSettings = { clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', hostResolvConf: HOST };

const pod = (spec: Partial<Pod['spec']> = {}, namespace = 'shop'): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace, uid: 'u1' },
  spec: { containers: [{ name: 'main', image: 'local/busybox:1' }], ...spec },
});

const CLUSTER_SEARCHES = ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'lab.example'];
const HOST_CONFIG: PodDnsConfig = { servers: ['192.0.2.53', '192.0.2.54'], searches: ['corp.example', 'lab.example'], options: ['rotate', 'timeout:2'] };

describe('parseResolvConf', () => {
  it.each<[string, string, ReturnType<typeof parseResolvConf>]>([
    ['nameservers, the last search line, options merged by name', 'nameserver 1.1.1.1\nsearch a\nsearch b. c\noptions ndots:2\noptions ndots:3 edns0', { nameservers: ['1.1.1.1'], searches: ['b', 'c'], options: ['edns0', 'ndots:3'] }],
    ['comment lines and a bare "." search domain left out', '; x\n#nameserver 9.9.9.9\nnameserver  2.2.2.2 \nsearch . d', { nameservers: ['2.2.2.2'], searches: ['d'], options: [] }],
    ['an empty file', '', { nameservers: [], searches: [], options: [] }],
  ])('%s', (_, text, expected) => {
    expect(parseResolvConf(text)).toEqual(expected);
  });
});

describe('podDnsConfig, as kubelet GetPodDNS', () => {
  it.each<[string, Pod, NodeDnsSettings, PodDnsConfig, string[]]>([
    ['ClusterFirst (the default): the cluster DNS, cluster then host searches, ndots:5', pod(), NODE, { servers: ['10.96.0.10'], searches: CLUSTER_SEARCHES, options: ['ndots:5'] }, []],
    ['ClusterFirst spelled out', pod({ dnsPolicy: 'ClusterFirst' }), NODE, { servers: ['10.96.0.10'], searches: CLUSTER_SEARCHES, options: ['ndots:5'] }, []],
    ['ClusterFirst on the host network is Default', pod({ dnsPolicy: 'ClusterFirst', hostNetwork: true }), NODE, HOST_CONFIG, []],
    ['ClusterFirstWithHostNet on the host network', pod({ dnsPolicy: 'ClusterFirstWithHostNet', hostNetwork: true }), NODE, { servers: ['10.96.0.10'], searches: CLUSTER_SEARCHES, options: ['ndots:5'] }, []],
    ['Default: the host resolv.conf', pod({ dnsPolicy: 'Default' }), NODE, HOST_CONFIG, []],
    ['Default with --resolv-conf=""', pod({ dnsPolicy: 'Default' }), { ...NODE, hostResolvConf: undefined }, { servers: ['127.0.0.1'], searches: ['.'], options: [] }, []],
    ['ClusterFirst without a cluster DNS falls back to Default, with a warning', pod(), { ...NODE, clusterDNS: [] }, HOST_CONFIG, ['MissingClusterDNS']],
    ['ClusterFirst without a cluster domain: the host searches only', pod(), { ...NODE, clusterDomain: '' }, { servers: ['10.96.0.10'], searches: ['corp.example', 'lab.example'], options: ['ndots:5'] }, []],
    [
      'None: only the pod dnsConfig',
      pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['198.51.100.1'], searches: ['x.example'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] } }),
      NODE,
      { servers: ['198.51.100.1'], searches: ['x.example'], options: ['edns0', 'ndots:2'] },
      [],
    ],
    [
      'ClusterFirst with dnsConfig: appended without duplicates, options override by name',
      pod({ dnsConfig: { nameservers: ['10.96.0.10', '198.51.100.1'], searches: ['svc.cluster.local', 'y.example'], options: [{ name: 'ndots', value: '1' }, { name: 'single-request-reopen' }] } }),
      NODE,
      { servers: ['10.96.0.10', '198.51.100.1'], searches: [...CLUSTER_SEARCHES, 'y.example'], options: ['ndots:1', 'single-request-reopen'] },
      [],
    ],
    [
      'more than 3 nameservers: the first 3, with a warning',
      pod({ dnsPolicy: 'Default', dnsConfig: { nameservers: ['198.51.100.1', '198.51.100.2'] } }),
      NODE,
      { ...HOST_CONFIG, servers: ['192.0.2.53', '192.0.2.54', '198.51.100.1'] },
      ['DNSConfigForming'],
    ],
    [
      'more than 32 search domains: the first 32, with a warning',
      pod({ dnsPolicy: 'None', dnsConfig: { searches: Array.from({ length: 40 }, (_, i) => `d${i}.example`) } }),
      NODE,
      { servers: [], searches: Array.from({ length: 32 }, (_, i) => `d${i}.example`), options: [] },
      ['DNSConfigForming'],
    ],
    [
      'a search domain over 253 characters left out, with a warning',
      pod({ dnsPolicy: 'None', dnsConfig: { searches: ['a.example', `${'b'.repeat(250)}.example`, 'c.example'] } }),
      NODE,
      { servers: [], searches: ['a.example', 'c.example'], options: [] },
      ['DNSConfigForming'],
    ],
    [
      'a search line over 2048 characters: domains cut from the end until it fits, with a warning',
      pod({ dnsPolicy: 'None', dnsConfig: { searches: Array.from({ length: 10 }, (_, i) => `${String(i).repeat(240)}.example`) } }),
      NODE,
      // 248 characters each: 8 of them and 7 spaces make 1991, a 9th 2240.
      { servers: [], searches: Array.from({ length: 8 }, (_, i) => `${String(i).repeat(240)}.example`), options: [] },
      ['DNSConfigForming'],
    ],
  ])('%s', (_, subject, settings, expected, warnings) => {
    const result = podDnsConfig(subject, settings);
    expect(result.config).toEqual(expected);
    expect(result.warnings.map((warning) => warning.reason)).toEqual(warnings);
  });

  it('uses the pod namespace in the first search domain', () => {
    expect(podDnsConfig(pod({}, 'kube-system'), NODE).config.searches[0]).toBe('kube-system.svc.cluster.local');
  });

  it('says which search line was applied when it cut one', () => {
    const result = podDnsConfig(pod({ dnsPolicy: 'None', dnsConfig: { searches: Array.from({ length: 33 }, (_, i) => `d${i}`) } }), NODE);
    expect(result.warnings[0]?.message).toMatch(/^Search Line limits were exceeded, some search paths have been omitted, the applied search line is: d0 d1 .* d31$/);
  });
});
