import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../log/embedded/index.ts';
import type { Actor, KubeObject } from '../schemas/index.ts';
import { why } from './history.ts';
import { createProjection } from './projection.ts';
import { appendAndWait } from './writer.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const admin: Actor = { type: 'user', name: 'admin' };
const controller = (name: string): Actor => ({ type: 'controller', name });
const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'logplane/echo' }] } };

describe('why', () => {
  it('walks from a pod through its owners to the user request, even when the controller was woken by something else', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logplane-why-'));
    dirs.push(dir);
    const log = await createEmbeddedLog({ dir: join(dir, 'log'), cluster: 'why' });
    const projection = createProjection({ dir: join(dir, 'projection'), log });
    try {
      const write = (object: KubeObject, actor: Actor, causationId: string | null = null) =>
        appendAndWait(log, projection, [{ type: 'ObjectCreated', object }], { actor, causationId });
      await write({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }, admin);
      const [deployment] = await write(
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } }, template } },
        admin,
      );
      const deploymentUid = deployment!.appended.event.id;
      // The replicaset is created in reaction to an unrelated event (as in a later rollout step).
      const [unrelated] = await write({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } }, admin);
      const [replicaSet] = await write(
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          metadata: { name: 'web-1', namespace: 'default', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: deploymentUid, controller: true }] },
          spec: { selector: { matchLabels: { app: 'web' } }, template },
        },
        controller('deployment'),
        unrelated!.appended.event.id,
      );
      await write(
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'web-1-a', namespace: 'default', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: replicaSet!.appended.event.id, controller: true }] },
          spec: template.spec,
        },
        controller('replicaset'),
        unrelated!.appended.event.id,
      );
      const [chain] = await why(projection.store, log, projection.partitions, 'Pod/default/web-1-a');
      expect(chain?.map((link) => `${link.event.eventType} ${link.event.key} by ${link.event.actor.name}`)).toEqual([
        'ObjectCreated Pod/default/web-1-a by replicaset',
        'ObjectCreated Namespace//other by admin',
        'ObjectCreated ReplicaSet/default/web-1 by deployment',
        'ObjectCreated Deployment/default/web by admin',
      ]);
    } finally {
      await projection.close();
      await log.close();
    }
  });

  it('names the field managers each create and update wrote', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logplane-why-'));
    dirs.push(dir);
    const log = await createEmbeddedLog({ dir: join(dir, 'log'), cluster: 'why-managers' });
    const projection = createProjection({ dir: join(dir, 'projection'), log });
    try {
      const entry = (manager: string, operation: string, time: string) => ({ manager, operation, apiVersion: 'v1', time, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } });
      const config = (managedFields: ReturnType<typeof entry>[], a: string): KubeObject =>
        ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default', managedFields }, data: { a } }) as KubeObject;
      await appendAndWait(log, projection, [{ type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } } }], { actor: admin });
      await appendAndWait(log, projection, [{ type: 'ObjectCreated', object: config([entry('kubectl', 'Apply', '2024-05-01T12:00:00Z')], '1') }], { actor: admin });
      const version = projection.view().get('ConfigMap/default/c')?.metadata.resourceVersion ?? null;
      await appendAndWait(
        log,
        projection,
        [{ type: 'ObjectUpdated', object: config([entry('kubectl', 'Apply', '2024-05-01T12:00:00Z'), entry('kubectl-edit', 'Update', '2024-05-01T12:01:00Z')], '2'), expectedResourceVersion: version, subresource: null }],
        { actor: admin },
      );
      const chains = await why(projection.store, log, projection.partitions, 'ConfigMap/default/c');
      const managers = chains.flat().map((link) => [link.event.eventType, link.managers]);
      expect(managers).toContainEqual(['ObjectUpdated', [{ manager: 'kubectl-edit', operation: 'Update' }]]);
      expect(managers).toContainEqual(['ObjectCreated', [{ manager: 'kubectl', operation: 'Apply' }]]);
    } finally {
      await projection.close();
      await log.close();
    }
  });
});
