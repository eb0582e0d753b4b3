/**
 * Test helpers of the DNS add-on: a real log (either adapter) and a projection folding it,
 * seeded with the Services, Endpoints, Pods and Namespaces the DNS tests ask about.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventLog } from '../../log/port.ts';
import { appendEnvelopes, createProjection, envelope, type Projection } from '../../projections/index.ts';
import { admin, openTestLog, type LogAdapter } from '../../projections/testing.ts';
import type { Endpoints, KubeObject, Namespace, Pod, Service } from '../../schemas/index.ts';

export const ECHO_IP = '127.96.0.50';
export const ECHO_ENDPOINT = '127.100.0.5';
/** The ready endpoints of the headless `web`: web-0 by the address's hostname, web-1 by its pod's hostname/subdomain, and one by its dashed IP. */
export const WEB_ENDPOINTS = ['127.100.0.10', '127.100.0.11', '127.100.0.13'] as const;
export const WEB_NOT_READY = '127.100.0.12';
/** The one endpoint of the headless `v6`, written unabbreviated as a client may. */
export const V6_ENDPOINT = 'fd00:0:0:0:0:0:0:5';
/** The headless `many`: more ready endpoints than a 512-byte UDP reply holds. */
export const MANY_ENDPOINTS = Array.from({ length: 40 }, (_, i) => `127.100.1.${i + 1}`);

const namespace = (name: string): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

const service = (name: string, spec: Service['spec']): Service => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec });

/** The objects of the DNS scenario, in creation order. */
export const dnsScenarioObjects = (): KubeObject[] => {
  const echoEndpoints: Endpoints = {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'echo', namespace: 'default' },
    subsets: [{ addresses: [{ ip: ECHO_ENDPOINT }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }, { name: 'dns', port: 5353, protocol: 'UDP' }] }],
  };
  const webEndpoints: Endpoints = {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'web', namespace: 'default' },
    subsets: [
      {
        addresses: [
          { ip: WEB_ENDPOINTS[0], hostname: 'web-0' },
          { ip: WEB_ENDPOINTS[1], targetRef: { kind: 'Pod', namespace: 'default', name: 'web-1' } },
          { ip: WEB_ENDPOINTS[2] },
        ],
        notReadyAddresses: [{ ip: WEB_NOT_READY, hostname: 'web-2' }],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    ],
  };
  const web1: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-1', namespace: 'default', labels: { app: 'web' } },
    spec: { hostname: 'web-1', subdomain: 'web', containers: [{ name: 'main', image: 'logplane/echo:1' }] },
  };
  return [
    namespace('default'),
    namespace('empty'),
    service('echo', {
      clusterIP: ECHO_IP,
      ports: [
        { name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 },
        { name: 'dns', port: 53, protocol: 'UDP', targetPort: 5353 },
      ],
      selector: { app: 'echo' },
    }),
    echoEndpoints,
    service('web', { clusterIP: 'None', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }], selector: { app: 'web' } }),
    webEndpoints,
    web1,
    service('many', { clusterIP: 'None', selector: { app: 'many' } }),
    { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'many', namespace: 'default' }, subsets: [{ addresses: MANY_ENDPOINTS.map((ip) => ({ ip })) }] } satisfies Endpoints,
    service('v6', { clusterIP: 'None', ports: [{ name: 'http', port: 80, protocol: 'TCP' }], selector: { app: 'v6' } }),
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'v6', namespace: 'default' },
      subsets: [{ addresses: [{ ip: V6_ENDPOINT }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] }],
    } satisfies Endpoints,
    service('external', { type: 'ExternalName', externalName: 'example.com' }),
    service('alias', { type: 'ExternalName', externalName: 'echo.default.svc.cluster.local' }),
  ];
};

export interface DnsTestCluster {
  readonly log: EventLog;
  readonly projection: Projection;
  close(): Promise<void>;
}

/** A log of `adapter` with the scenario's objects appended, and a projection that has folded them. */
export const openDnsTestCluster = async (adapter: LogAdapter): Promise<DnsTestCluster> => {
  const dirs = [mkdtempSync(join(tmpdir(), 'dns-log-')), mkdtempSync(join(tmpdir(), 'dns-proj-'))] as const;
  const log = await openTestLog(adapter, { dir: dirs[0], partitions: 1 });
  const projection = createProjection({ dir: dirs[1], log });
  await appendEnvelopes(
    log,
    dnsScenarioObjects().map((object) => envelope({ type: 'ObjectCreated', object }, { actor: admin })),
  );
  await projection.waitFor({ desired: await log.endOffsets('desired'), observed: await log.endOffsets('observed') }, 120_000);
  return {
    log,
    projection,
    close: async () => {
      await projection.close();
      await log.close();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
};
