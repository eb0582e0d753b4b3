import { describe, expect, it } from 'vitest';
import type { Endpoints, Service } from '../../schemas/index.ts';
import { ProxyConfigError } from './errors.ts';
import {
  type EndpointSubsetInput,
  type EndpointsInput,
  type ForwardingTable,
  type ServiceInput,
  type ServicePortRule,
  SkipReason,
  forwardingTable,
  resolveService,
  validateForwardingTable,
} from './table.ts';

function service(name: string, spec: NonNullable<ServiceInput['spec']>, namespace = 'default'): ServiceInput {
  return { metadata: { name, namespace }, spec };
}

function endpoints(name: string, subsets: EndpointSubsetInput[], namespace = 'default'): EndpointsInput {
  return { metadata: { name, namespace }, subsets };
}

function rule(overrides: Partial<ServicePortRule> & Pick<ServicePortRule, 'serviceKey'>): ServicePortRule {
  return { portName: '', protocol: 'TCP', clusterIP: '127.96.0.10', port: 80, nodePort: null, endpoints: [], ...overrides };
}

describe('forwardingTable', () => {
  it.each<{ case: string; services: ServiceInput[]; endpoints: EndpointsInput[]; rules: ServicePortRule[] }>([
    {
      case: 'single unnamed port, endpoints with an unnamed port',
      services: [service('web', { clusterIP: '127.96.0.10', ports: [{ port: 80, targetPort: 8080 }] })],
      endpoints: [endpoints('web', [{ addresses: [{ ip: '127.100.0.2' }], ports: [{ port: 8080 }] }])],
      rules: [rule({ serviceKey: 'default/web', endpoints: [{ ip: '127.100.0.2', port: 8080 }] })],
    },
    {
      case: 'named targetPort resolved per subset through the named Endpoints port',
      services: [service('web', { clusterIP: '127.96.0.10', ports: [{ name: 'http', port: 80, targetPort: 'http-alt' }] })],
      endpoints: [
        endpoints('web', [
          { addresses: [{ ip: '127.100.0.3' }], ports: [{ name: 'http', port: 9090 }] },
          { addresses: [{ ip: '127.100.0.2' }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
        ]),
      ],
      rules: [
        rule({
          serviceKey: 'default/web',
          portName: 'http',
          endpoints: [
            { ip: '127.100.0.2', port: 8080 },
            { ip: '127.100.0.3', port: 9090 },
          ],
        }),
      ],
    },
    {
      case: 'not-ready addresses are left out',
      services: [service('web', { clusterIP: '127.96.0.10', ports: [{ port: 80 }] })],
      endpoints: [
        endpoints('web', [
          { addresses: [{ ip: '127.100.0.2' }], notReadyAddresses: [{ ip: '127.100.0.3' }], ports: [{ port: 8080 }] },
        ]),
      ],
      rules: [rule({ serviceKey: 'default/web', endpoints: [{ ip: '127.100.0.2', port: 8080 }] })],
    },
    {
      case: 'no Endpoints object: a rule without endpoints',
      services: [service('web', { clusterIP: '127.96.0.10', ports: [{ port: 80 }] })],
      endpoints: [],
      rules: [rule({ serviceKey: 'default/web' })],
    },
    {
      case: 'Endpoints of another namespace do not match',
      services: [service('web', { clusterIP: '127.96.0.10', ports: [{ port: 80 }] })],
      endpoints: [endpoints('web', [{ addresses: [{ ip: '127.100.0.2' }], ports: [{ port: 8080 }] }], 'other')],
      rules: [rule({ serviceKey: 'default/web' })],
    },
    {
      case: 'Endpoints port of another name does not match',
      services: [service('web', { clusterIP: '127.96.0.10', ports: [{ name: 'http', port: 80 }] })],
      endpoints: [endpoints('web', [{ addresses: [{ ip: '127.100.0.2' }], ports: [{ name: 'metrics', port: 9100 }] }])],
      rules: [rule({ serviceKey: 'default/web', portName: 'http' })],
    },
    {
      case: 'subset without ports falls back to a numeric targetPort',
      services: [service('web', { clusterIP: '127.96.0.10', ports: [{ port: 80, targetPort: 8080 }] })],
      endpoints: [endpoints('web', [{ addresses: [{ ip: '127.100.0.2' }] }])],
      rules: [rule({ serviceKey: 'default/web', endpoints: [{ ip: '127.100.0.2', port: 8080 }] })],
    },
    {
      case: 'subset without ports and no targetPort uses the service port',
      services: [service('web', { clusterIP: '127.96.0.10', ports: [{ port: 80 }] })],
      endpoints: [endpoints('web', [{ addresses: [{ ip: '127.100.0.2' }] }])],
      rules: [rule({ serviceKey: 'default/web', endpoints: [{ ip: '127.100.0.2', port: 80 }] })],
    },
    {
      case: 'subset without ports cannot resolve a named targetPort',
      services: [service('web', { clusterIP: '127.96.0.10', ports: [{ port: 80, targetPort: 'http' }] })],
      endpoints: [endpoints('web', [{ addresses: [{ ip: '127.100.0.2' }] }])],
      rules: [rule({ serviceKey: 'default/web' })],
    },
    {
      case: 'NodePort service keeps its nodePort',
      services: [service('web', { type: 'NodePort', clusterIP: '127.96.0.10', ports: [{ port: 80, nodePort: 30080 }] })],
      endpoints: [],
      rules: [rule({ serviceKey: 'default/web', nodePort: 30080 })],
    },
    {
      case: 'LoadBalancer service keeps its nodePort',
      services: [service('web', { type: 'LoadBalancer', clusterIP: '127.96.0.10', ports: [{ port: 80, nodePort: 30080 }] })],
      endpoints: [],
      rules: [rule({ serviceKey: 'default/web', nodePort: 30080 })],
    },
    {
      case: 'ClusterIP service ignores a stray nodePort',
      services: [service('web', { type: 'ClusterIP', clusterIP: '127.96.0.10', ports: [{ port: 80, nodePort: 30080 }] })],
      endpoints: [],
      rules: [rule({ serviceKey: 'default/web' })],
    },
    {
      case: 'headless, ExternalName, unallocated and unknown-type services produce no rules',
      services: [
        service('headless', { clusterIP: 'None', ports: [{ port: 80 }] }),
        service('external', { type: 'ExternalName', ports: [{ port: 80 }] }),
        service('pending', { ports: [{ port: 80 }] }),
        service('odd', { type: 'Mystery', clusterIP: '127.96.0.11', ports: [{ port: 80 }] }),
      ],
      endpoints: [],
      rules: [],
    },
    {
      case: 'UDP ports are left out, TCP ports of the same service kept, sorted by port name',
      services: [
        service('dns', {
          clusterIP: '127.96.0.53',
          ports: [
            { name: 'udp', protocol: 'UDP', port: 53 },
            { name: 'tcp', protocol: 'TCP', port: 53 },
            { name: 'metrics', port: 9153 },
          ],
        }),
      ],
      endpoints: [],
      rules: [
        rule({ serviceKey: 'default/dns', portName: 'metrics', clusterIP: '127.96.0.53', port: 9153 }),
        rule({ serviceKey: 'default/dns', portName: 'tcp', clusterIP: '127.96.0.53', port: 53 }),
      ],
    },
    {
      case: 'endpoints deduplicated across subsets and sorted numerically',
      services: [service('web', { clusterIP: '127.96.0.10', ports: [{ port: 80 }] })],
      endpoints: [
        endpoints('web', [
          { addresses: [{ ip: '127.100.0.10' }, { ip: '127.100.0.9' }], ports: [{ port: 8080 }] },
          { addresses: [{ ip: '127.100.0.9' }], ports: [{ port: 8080 }] },
        ]),
      ],
      rules: [
        rule({
          serviceKey: 'default/web',
          endpoints: [
            { ip: '127.100.0.9', port: 8080 },
            { ip: '127.100.0.10', port: 8080 },
          ],
        }),
      ],
    },
    {
      case: 'Avro-shaped nulls read like absent fields; a missing namespace is default',
      services: [
        {
          metadata: { name: 'web', namespace: null },
          spec: {
            type: null,
            clusterIP: '127.96.0.10',
            ports: [{ name: null, protocol: null, port: 80, targetPort: null, nodePort: null }],
          },
        },
      ],
      endpoints: [
        {
          metadata: { name: 'web' },
          subsets: [{ addresses: [{ ip: '127.100.0.2' }], notReadyAddresses: null, ports: [{ name: null, port: 8080, protocol: null }] }],
        },
      ],
      rules: [rule({ serviceKey: 'default/web', endpoints: [{ ip: '127.100.0.2', port: 8080 }] })],
    },
    {
      case: 'two services on one clusterIP:port: the first in sorted order keeps it',
      services: [
        service('b', { clusterIP: '127.96.0.10', ports: [{ port: 80 }] }),
        service('a', { clusterIP: '127.96.0.10', ports: [{ port: 80 }] }),
      ],
      endpoints: [],
      rules: [rule({ serviceKey: 'default/a' })],
    },
    {
      case: 'two services on one nodePort: the later one loses only its nodePort',
      services: [
        service('b', { type: 'NodePort', clusterIP: '127.96.0.11', ports: [{ port: 80, nodePort: 30080 }] }),
        service('a', { type: 'NodePort', clusterIP: '127.96.0.10', ports: [{ port: 80, nodePort: 30080 }] }),
      ],
      endpoints: [],
      rules: [rule({ serviceKey: 'default/a', nodePort: 30080 }), rule({ serviceKey: 'default/b', clusterIP: '127.96.0.11' })],
    },
  ])('$case', ({ services, endpoints: endpointsList, rules }) => {
    expect(forwardingTable(services, endpointsList)).toEqual({ rules });
  });

  it('accepts the Service and Endpoints objects of schemas/ as they are', () => {
    const web: Service = {
      kind: 'Service',
      apiVersion: 'v1',
      metadata: { name: 'web', namespace: 'default' },
      spec: { type: 'NodePort', clusterIP: '127.96.0.10', ports: [{ name: 'http', port: 80, targetPort: 'http', nodePort: 30080 }] },
    };
    const webEndpoints: Endpoints = {
      kind: 'Endpoints',
      apiVersion: 'v1',
      metadata: { name: 'web', namespace: 'default' },
      subsets: [{ addresses: [{ ip: '127.100.0.2', nodeName: 'node-1' }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }],
    };
    expect(forwardingTable([web], [webEndpoints])).toEqual({
      rules: [rule({ serviceKey: 'default/web', portName: 'http', nodePort: 30080, endpoints: [{ ip: '127.100.0.2', port: 8080 }] })],
    });
  });

  it('does not depend on input order', () => {
    const services = [
      service('web', { type: 'NodePort', clusterIP: '127.96.0.10', ports: [{ name: 'http', port: 80, nodePort: 30080 }] }),
      service('api', { clusterIP: '127.96.0.11', ports: [{ name: 'grpc', port: 9000 }, { name: 'admin', port: 9001 }] }),
      service('db', { clusterIP: '127.96.0.12', ports: [{ port: 5432 }] }, 'data'),
    ];
    const endpointsList = [
      endpoints('web', [{ addresses: [{ ip: '127.100.0.3' }, { ip: '127.100.0.2' }], ports: [{ name: 'http', port: 8080 }] }]),
      endpoints('api', [{ addresses: [{ ip: '127.100.0.4' }], ports: [{ name: 'grpc', port: 9000 }, { name: 'admin', port: 9001 }] }]),
    ];
    const expected = forwardingTable(services, endpointsList);
    expect(expected.rules.map((r) => `${r.serviceKey}:${r.portName}`)).toEqual([
      'data/db:',
      'default/api:admin',
      'default/api:grpc',
      'default/web:http',
    ]);
    expect(forwardingTable([...services].reverse(), [...endpointsList].reverse())).toEqual(expected);
  });
});

describe('resolveService', () => {
  it.each<{ spec: NonNullable<ServiceInput['spec']>; reason: SkipReason }>([
    { spec: { clusterIP: 'None', ports: [{ port: 80 }] }, reason: SkipReason.Headless },
    { spec: { type: 'ExternalName', clusterIP: '127.96.0.10', ports: [{ port: 80 }] }, reason: SkipReason.ExternalName },
    { spec: { clusterIP: '', ports: [{ port: 80 }] }, reason: SkipReason.NoClusterIP },
    { spec: { clusterIP: 'fd00::10', ports: [{ port: 80 }] }, reason: SkipReason.ClusterIPNotIPv4 },
    { spec: { type: 'Mystery', clusterIP: '127.96.0.10', ports: [{ port: 80 }] }, reason: SkipReason.UnknownType },
  ])('skips a service: $reason', ({ spec, reason }) => {
    expect(resolveService(service('web', spec), undefined)).toEqual({ type: 'skipped', serviceKey: 'default/web', reason });
  });
});

describe('validateForwardingTable', () => {
  const good = rule({ serviceKey: 'default/web', nodePort: 30080, endpoints: [{ ip: '127.100.0.2', port: 8080 }] });

  it('accepts a well-formed table', () => {
    expect(() => validateForwardingTable({ rules: [good, rule({ serviceKey: 'default/api', clusterIP: '127.96.0.11' })] })).not.toThrow();
  });

  it.each<{ case: string; table: ForwardingTable; message: RegExp }>([
    { case: 'clusterIP not IPv4', table: { rules: [{ ...good, clusterIP: 'web' }] }, message: /not an IPv4/ },
    { case: 'port out of range', table: { rules: [{ ...good, port: 70000 }] }, message: /port 70000/ },
    { case: 'nodePort out of range', table: { rules: [{ ...good, nodePort: 0 }] }, message: /nodePort 0/ },
    { case: 'bad endpoint', table: { rules: [{ ...good, endpoints: [{ ip: '127.100.0.2', port: 0 }] }] }, message: /endpoint/ },
    {
      case: 'same frontend twice',
      table: { rules: [good, { ...good, serviceKey: 'default/other', nodePort: null }] },
      message: /claimed by both default\/web: and default\/other:/,
    },
    {
      case: 'same nodePort twice',
      table: { rules: [good, { ...good, serviceKey: 'default/other', clusterIP: '127.96.0.11' }] },
      message: /nodePort 30080 is claimed/,
    },
    {
      case: 'same service port twice',
      table: { rules: [good, { ...good, clusterIP: '127.96.0.11', nodePort: null }] },
      message: /appears twice/,
    },
  ])('rejects $case', ({ table, message }) => {
    expect(() => validateForwardingTable(table)).toThrow(ProxyConfigError);
    expect(() => validateForwardingTable(table)).toThrow(message);
  });
});
