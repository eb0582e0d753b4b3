import { afterEach, describe, expect, it } from 'vitest';
import type { EventBody, ServiceAccount } from '../../schemas/index.ts';
import { createTestCluster, namespaceObject, settle, type TestCluster } from '../testing.ts';
import { createServiceAccountController, decideServiceAccount } from './index.ts';

const deleteOf = (kind: 'ServiceAccount' | 'Namespace', namespace: string | null, name: string): EventBody => ({
  type: 'ObjectDeleted', kind, namespace, name, expectedResourceVersion: null, uid: null, propagationPolicy: null, gracePeriodSeconds: null,
});

let cluster: TestCluster;
afterEach(async () => cluster.close());

describe('serviceaccount controller', () => {
  it('gives every active namespace a default ServiceAccount, and recreates it when deleted', () => {
    cluster = createTestCluster();
    cluster.create(namespaceObject('team'));
    const controller = createServiceAccountController();
    settle(cluster, [controller], { now: 0 });
    expect(cluster.view().list('ServiceAccount').map((sa) => `${sa.metadata.namespace}/${sa.metadata.name}`).sort()).toEqual(['default/default', 'team/default']);
    const first = cluster.view().get('ServiceAccount/team/default') as ServiceAccount;
    cluster.apply(deleteOf('ServiceAccount', 'team', 'default'));
    settle(cluster, [controller], { now: 0 });
    const again = cluster.view().get('ServiceAccount/team/default') as ServiceAccount;
    expect(again.metadata.uid).not.toBe(first.metadata.uid);
  });

  it('leaves an edited default ServiceAccount as the user left it', () => {
    cluster = createTestCluster();
    const controller = createServiceAccountController();
    settle(cluster, [controller], { now: 0 });
    const account = cluster.view().get('ServiceAccount/default/default') as ServiceAccount;
    cluster.apply({ type: 'ObjectUpdated', object: { ...account, automountServiceAccountToken: false }, expectedResourceVersion: null, subresource: null });
    expect(decideServiceAccount('ServiceAccount/default/default', cluster.view()).commands).toEqual([]);
  });

  it('creates nothing in a terminating or missing namespace', () => {
    cluster = createTestCluster();
    cluster.create(namespaceObject('gone'));
    cluster.apply(deleteOf('Namespace', null, 'gone'));
    expect(decideServiceAccount('ServiceAccount/gone/default', cluster.view()).commands).toEqual([]);
    expect(decideServiceAccount('ServiceAccount/never/default', cluster.view()).commands).toEqual([]);
  });

  it('looks again only when a namespace changes or a default account is deleted', () => {
    cluster = createTestCluster();
    const controller = createServiceAccountController();
    const ns = cluster.create(namespaceObject('team'));
    const account: ServiceAccount = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: 'team' } };
    const keys = (object: typeof ns | ServiceAccount, type: 'ADDED' | 'MODIFIED' | 'DELETED') =>
      controller.keysFor({ type, key: '', eventId: '', object, topic: 'desired', partition: 0, offset: 0 }, cluster.view());
    expect(keys(ns, 'ADDED')).toEqual(['ServiceAccount/team/default']);
    expect(keys(account, 'DELETED')).toEqual(['ServiceAccount/team/default']);
    expect(keys(account, 'MODIFIED')).toEqual([]);
    expect(keys({ ...account, metadata: { name: 'builder', namespace: 'team' } }, 'DELETED')).toEqual([]);
  });
});
