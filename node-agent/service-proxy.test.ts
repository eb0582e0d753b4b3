/**
 * The proxy loop over a projection: every Service with a ClusterIP gets its listeners, except
 * those a server of this process answers on itself (the cluster DNS on kube-dns's ClusterIP).
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createProjection, type Projection } from '../projections/index.ts';
import { makeEvent, toBatches } from '../projections/testing.ts';
import { tempProjections } from '../projections/temp-projections.ts';
import type { Service } from '../schemas/index.ts';
import { CLUSTER_CONFIGURATION_KEY } from '../schemas/kinds/domains.ts';
import type { UserspaceProxy } from './proxy/userspace.ts';
import { startServiceProxy } from './service-proxy.ts';

const temp = tempProjections('logplane-service-proxy-');
const logger = pino({ level: 'silent' });

const service = (namespace: string, name: string, clusterIP: string, port: number): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace },
  spec: { clusterIP, ports: [{ name: 'p', port, protocol: 'TCP' }] },
});

/** A projection holding `services`, folded by hand. */
const projectionWith = (services: readonly Service[]): Projection => {
  const projection = temp.track(createProjection({ dir: temp.dir() }));
  const namespaces = [...new Set(services.map((object) => object.metadata.namespace ?? 'default'))];
  const events = [
    makeEvent(CLUSTER_CONFIGURATION_KEY, { type: 'ClusterConfigured', serviceCIDR: '127.96.0.0/16', nodePortLow: 30000, nodePortHigh: 32767 }),
    ...namespaces.map((name) => makeEvent(`Namespace//${name}`, { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } })),
    ...services.map((object) => makeEvent(`Service/${object.metadata.namespace}/${object.metadata.name}`, { type: 'ObjectCreated', object })),
  ];
  for (const batch of toBatches('desired', events)) projection.applyBatch(batch);
  expect(projection.view().list('Service')).toHaveLength(services.length);
  return projection;
};

describe('startServiceProxy', () => {
  it('opens no listener for a Service served locally, and one for every other', async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const projection = projectionWith([service('default', 'web', '127.96.77.2', port), service('kube-system', 'kube-dns', '127.96.77.10', port)]);
    const listening = async (servedLocally: Parameters<typeof startServiceProxy>[0]['servedLocally']): Promise<readonly string[]> => {
      const loop = startServiceProxy({ projection, mode: 'userspace', logger, ...(servedLocally ? { servedLocally } : {}) });
      try {
        await loop.settled();
        return (loop.proxy as UserspaceProxy).stats().listening;
      } finally {
        await loop.close();
      }
    };
    expect(await listening([{ namespace: 'kube-system', name: 'kube-dns' }])).toEqual([`127.96.77.2:${port}`]);
    expect(await listening(undefined)).toEqual([`127.96.77.10:${port}`, `127.96.77.2:${port}`]);
  });
});
