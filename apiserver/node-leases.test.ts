import { describe, expect, it } from 'vitest';
import type { KubeObject, Lease } from '../schemas/index.ts';
import { withLatestRenewal } from './node-leases.ts';

const T0 = Date.UTC(2030, 0, 1, 12);
const micro = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
const lease = (namespace: string, renewedAt: number | undefined): Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: 'n1', namespace },
  spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, ...(renewedAt === undefined ? {} : { renewTime: micro(renewedAt) }) },
});
const renewals = (beats: Record<string, number>) => ({ lastSeen: (node: string) => beats[node] });

describe('withLatestRenewal', () => {
  it.each([
    ['a node Lease renewed since it was stored', lease('kube-node-lease', T0), { n1: T0 + 10_250 }, micro(T0 + 10_250)],
    ['a node Lease stored without renewTime', lease('kube-node-lease', undefined), { n1: T0 }, micro(T0)],
    ['a node Lease stored later than its last heartbeat', lease('kube-node-lease', T0 + 5_000), { n1: T0 }, micro(T0 + 5_000)],
    ['a node Lease never renewed since', lease('kube-node-lease', T0), {}, micro(T0)],
    ['a Lease of another namespace', lease('kube-system', T0), { n1: T0 + 10_000 }, micro(T0)],
  ])('%s', (_, stored, beats, renewTime) => {
    const served = withLatestRenewal(stored, renewals(beats)) as Lease;
    expect(served.spec?.renewTime).toBe(renewTime);
    expect(served.metadata).toBe(stored.metadata);
  });

  it('leaves objects alone without renewals, and other kinds always', () => {
    const stored = lease('kube-node-lease', T0);
    expect(withLatestRenewal(stored, undefined)).toBe(stored);
    const namespace: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n1', namespace: 'kube-node-lease' } };
    expect(withLatestRenewal(namespace, renewals({ n1: T0 }))).toBe(namespace);
  });
});
