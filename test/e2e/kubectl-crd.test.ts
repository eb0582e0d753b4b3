/**
 * CustomResourceDefinitions with the real kubectl (v1.32) on both logs (issue 16): a CRD
 * shaped like an operator's (two served versions, status subresource, printer columns,
 * nested objects, arrays of maps, defaults) is applied and becomes Established; its objects
 * are created, listed with the CRD's columns, explained, watched (`get -w`), patched, their status
 * written through the subresource, refused by the schema with kube's field error, and
 * deleted with their namespace and with the CRD; the log then replays to the live state hash.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { describeOnBothLogs } from '../../apiserver/testing.ts';
import { replayToLive } from './helpers.ts';
import { useKubectlApiServer, watchKubectl } from './kubectl-harness.ts';

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: databases.ops.example.com
spec:
  group: ops.example.com
  scope: Namespaced
  names:
    plural: databases
    singular: database
    kind: Database
    shortNames: [db]
    categories: [all]
  versions:
  - name: v1alpha1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
    additionalPrinterColumns:
    - {name: Engine, type: string, jsonPath: .spec.engine}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [engine]
            properties:
              engine: {type: string, enum: [postgres, mysql]}
              replicas: {type: integer, minimum: 1, default: 1}
              storage:
                type: object
                properties:
                  size: {type: string}
                  classes:
                    type: array
                    items:
                      type: object
                      properties:
                        name: {type: string}
                        weight: {type: integer}
              users:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    roles: {type: array, items: {type: string}}
          status:
            type: object
            properties:
              phase: {type: string}
              replicas: {type: integer}
              selector: {type: string}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
`;

const DATABASE = `apiVersion: ops.example.com/v1
kind: Database
metadata:
  name: orders
spec:
  engine: postgres
  storage:
    size: 10Gi
    classes: [{name: fast, weight: 3}, {name: slow, weight: 1}]
  users:
  - {name: app, roles: [read, write]}
  - {name: report, roles: [read]}
`;

describeOnBothLogs('kubectl with a CustomResourceDefinition', (adapter) => {
  const harness = useKubectlApiServer(adapter, 'kubectl-crd', { kubectlTimeoutMs: 90_000, controllers: ['customresourcedefinition'] });
  const { kubectl, expectOk, file, dir, kubeconfig } = harness;

  it('applies the CRD, which becomes Established', async () => {
    expect(await expectOk('apply', '-f', file('crd.yaml', CRD))).toBe('customresourcedefinition.apiextensions.k8s.io/databases.ops.example.com created\n');
    await expectOk('wait', '--for', 'condition=Established', 'crd/databases.ops.example.com', '--timeout=30s');
    const crd = JSON.parse(await expectOk('get', 'crd', 'databases.ops.example.com', '-o', 'json'));
    expect(crd.status.acceptedNames).toMatchObject({ plural: 'databases', kind: 'Database', listKind: 'DatabaseList', shortNames: ['db'] });
    expect(crd.status.storedVersions).toEqual(['v1']);
    expect(await expectOk('api-resources', '--api-group=ops.example.com')).toMatch(/^databases\s+db\s+ops\.example\.com\/v1\s+true\s+Database$/m);
  });

  it('creates, lists and reads custom objects with the CRD\'s columns and defaults', async () => {
    await expectOk('create', 'namespace', 'shop');
    expect(await expectOk('apply', '-n', 'shop', '-f', file('db.yaml', DATABASE))).toBe('database.ops.example.com/orders created\n');
    expect(await expectOk('get', 'databases', '-n', 'shop')).toMatch(/^NAME\s+ENGINE\s+REPLICAS\s+READY\s+AGE\norders\s+postgres\s+1\s+\d+s$/m);
    const db = JSON.parse(await expectOk('get', 'db', 'orders', '-n', 'shop', '-o', 'json'));
    expect(db).toMatchObject({
      apiVersion: 'ops.example.com/v1',
      kind: 'Database',
      metadata: { name: 'orders', namespace: 'shop', generation: 1 },
      spec: { engine: 'postgres', replicas: 1, storage: { size: '10Gi', classes: [{ name: 'fast', weight: 3 }, { name: 'slow', weight: 1 }] }, users: [{ name: 'app', roles: ['read', 'write'] }, { name: 'report', roles: ['read'] }] },
    });
    // kubectl's generic describer shows its fields.
    expect(await expectOk('describe', 'db', 'orders', '-n', 'shop')).toMatch(/^Name:\s+orders\nNamespace:\s+shop\n[\s\S]*API Version:\s+ops\.example\.com\/v1\nKind:\s+Database\n[\s\S]*Spec:\n\s+Engine:\s+postgres\n/m);
    // The category `all` lists it with the built-in kinds.
    expect(await expectOk('get', 'all', '-n', 'shop')).toMatch(/database\.ops\.example\.com\/orders/);
  });

  it('explains the custom resource and its nested fields from the CRD\'s schema', async () => {
    expect(await expectOk('explain', 'databases')).toMatch(/GROUP:\s+ops\.example\.com\nKIND:\s+Database\nVERSION:\s+v1\n[\s\S]*FIELDS:[\s\S]*metadata\s+<ObjectMeta>[\s\S]*spec\s+<Object>/);
    expect(await expectOk('explain', 'db.spec.users')).toMatch(/FIELD: users <\[\]Object>[\s\S]*FIELDS:\n\s+name\s+<string> -required-\n[\s\S]*\n\s+roles\s+<\[\]string>/);
    expect(await expectOk('explain', 'databases.spec.engine')).toMatch(/FIELD: engine <string>[\s\S]*ENUM:\n\s+postgres\n\s+mysql/);
  });

  it('refuses an object the schema refuses with kube\'s field error, appending nothing', async () => {
    const bad = await kubectl('apply', '-n', 'shop', '-f', file('bad.yaml', DATABASE.replace('name: orders', 'name: bad').replace('engine: postgres', 'engine: oracle')));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('spec.engine: Unsupported value: "oracle": supported values: "postgres", "mysql"');
    expect((await kubectl('get', 'db', 'bad', '-n', 'shop')).code).not.toBe(0);
    const unknown = await kubectl('create', '-n', 'shop', '--validate=strict', '-f', file('unknown.yaml', DATABASE.replace('name: orders', 'name: strict').replace('  engine: postgres\n', '  engine: postgres\n  color: blue\n')));
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('unknown field "spec.color"');
  });

  it('streams changes with get -w, and writes status through the subresource', async () => {
    const watch = watchKubectl(kubeconfig, join(dir, 'kube-cache'), ['get', 'databases', 'orders', '-n', 'shop', '-w']);
    const seen = watch.seen;
    try {
      await seen(/^orders\s+postgres\s+1\s+\d+s$/m);
      await expectOk('patch', 'database', 'orders', '-n', 'shop', '--type=merge', '-p', '{"spec":{"replicas":3}}');
      await seen(/^orders\s+postgres\s+3\s+\d+s$/m);
      await expectOk('patch', 'database', 'orders', '-n', 'shop', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Ready","conditions":[{"type":"Ready","status":"True"}]}}');
      await seen(/^orders\s+postgres\s+3\s+True\s+\d+s$/m);
    } finally {
      watch.stop();
    }
    const db = JSON.parse(await expectOk('get', 'db', 'orders', '-n', 'shop', '-o', 'json'));
    expect(db.metadata.generation).toBe(2);
    expect(db.status).toEqual({ phase: 'Ready', conditions: [{ type: 'Ready', status: 'True' }] });
    // The main resource does not write status when the version has a status subresource.
    await expectOk('patch', 'database', 'orders', '-n', 'shop', '--type=merge', '-p', '{"status":{"phase":"Ignored"}}');
    expect(JSON.parse(await expectOk('get', 'db', 'orders', '-n', 'shop', '-o', 'json')).status.phase).toBe('Ready');
    // Custom resources take no strategic merge patch, as in kube.
    const strategic = await kubectl('patch', 'database', 'orders', '-n', 'shop', '--type=strategic', '-p', '{"spec":{"replicas":2}}');
    expect(strategic.code).not.toBe(0);
    expect(strategic.stderr).toMatch(/unknown format|UnsupportedMediaType|not supported/i);
  });

  it('scales a custom object through its scale subresource, within its schema', async () => {
    expect(await expectOk('scale', 'db', 'orders', '-n', 'shop', '--replicas=4')).toBe('database.ops.example.com/orders scaled\n');
    const db = JSON.parse(await expectOk('get', 'db', 'orders', '-n', 'shop', '-o', 'json', '--show-managed-fields'));
    expect(db.spec.replicas).toBe(4);
    expect(db.metadata.managedFields).toContainEqual(expect.objectContaining({ manager: 'kubectl', operation: 'Update', subresource: 'scale', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }));
    await expectOk('patch', 'database', 'orders', '-n', 'shop', '--subresource=status', '--type=merge', '-p', '{"status":{"replicas":4,"selector":"app=orders"}}');
    // The status writer owns what it wrote through /status, in an entry of its own.
    const statusWriter = JSON.parse(await expectOk('get', 'db', 'orders', '-n', 'shop', '-o', 'json', '--show-managed-fields')).metadata.managedFields.find(
      (entry: { subresource?: string }) => entry.subresource === 'status',
    );
    expect(statusWriter).toMatchObject({ manager: 'kubectl-patch', operation: 'Update', apiVersion: 'ops.example.com/v1' });
    expect(Object.keys(statusWriter.fieldsV1['f:status']).sort()).toEqual(['.', 'f:conditions', 'f:phase', 'f:replicas', 'f:selector']);
    const scale = JSON.parse(await expectOk('get', '--raw', '/apis/ops.example.com/v1/namespaces/shop/databases/orders/scale'));
    expect(scale).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'orders', namespace: 'shop', uid: db.metadata.uid }, spec: { replicas: 4 }, status: { replicas: 4, selector: 'app=orders' } });
    // The schema's minimum holds through /scale as through the object.
    const zero = await kubectl('scale', 'db', 'orders', '-n', 'shop', '--replicas=0');
    expect(zero.code).not.toBe(0);
    expect(zero.stderr).toContain('spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1');
    expect(JSON.parse(await expectOk('get', 'db', 'orders', '-n', 'shop', '-o', 'json')).spec.replicas).toBe(4);
  });

  it('applies custom objects server-side by field ownership: unchanged re-apply, conflicts, --force-conflicts, list-map merges', async () => {
    const config = `apiVersion: ops.example.com/v1
kind: Database
metadata:
  name: inventory
spec:
  engine: mysql
  replicas: 2
  users:
  - {name: app, roles: [read]}
`;
    const applied = file('inventory.yaml', config);
    expect(await expectOk('apply', '--server-side', '-n', 'shop', '-f', applied)).toBe('database.ops.example.com/inventory serverside-applied\n');
    const created = JSON.parse(await expectOk('get', 'db', 'inventory', '-n', 'shop', '-o', 'json', '--show-managed-fields'));
    expect(created.metadata.managedFields).toEqual([
      expect.objectContaining({
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'ops.example.com/v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:engine': {}, 'f:replicas': {}, 'f:users': { 'k:{"name":"app"}': { '.': {}, 'f:name': {}, 'f:roles': {} } } } },
      }),
    ]);
    // The same configuration again changes nothing: no new resourceVersion.
    await expectOk('apply', '--server-side', '-n', 'shop', '-f', applied);
    expect(JSON.parse(await expectOk('get', 'db', 'inventory', '-n', 'shop', '-o', 'json')).metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    // Another manager changes replicas with an update: the next apply of another value conflicts with it.
    await expectOk('patch', 'db', 'inventory', '-n', 'shop', '--type=merge', '--field-manager=scaler', '-p', '{"spec":{"replicas":5}}');
    const threeReplicas = config.replace('replicas: 2', 'replicas: 3');
    const conflicting = file('inventory-3.yaml', threeReplicas);
    const conflict = await kubectl('apply', '--server-side', '-n', 'shop', '-f', conflicting);
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "scaler" using ops.example.com/v1: .spec.replicas');
    expect(JSON.parse(await expectOk('get', 'db', 'inventory', '-n', 'shop', '-o', 'json')).spec.replicas).toBe(5);
    await expectOk('apply', '--server-side', '--force-conflicts', '-n', 'shop', '-f', conflicting);
    const forced = JSON.parse(await expectOk('get', 'db', 'inventory', '-n', 'shop', '-o', 'json', '--show-managed-fields'));
    expect(forced.spec.replicas).toBe(3);
    expect(forced.metadata.managedFields.map((entry: { manager: string }) => entry.manager).sort()).toEqual(['kubectl']);
    // A second applier's users merge into the list by name (x-kubernetes-list-type: map), each keeping its own.
    await expectOk('apply', '--server-side', '--field-manager=ops-team', '-n', 'shop', '-f', file('ops.yaml', 'apiVersion: ops.example.com/v1\nkind: Database\nmetadata:\n  name: inventory\nspec:\n  engine: mysql\n  users:\n  - {name: ops, roles: [admin]}\n'));
    const merged = JSON.parse(await expectOk('get', 'db', 'inventory', '-n', 'shop', '-o', 'json', '--show-managed-fields'));
    expect(merged.spec.users).toEqual([{ name: 'app', roles: ['read'] }, { name: 'ops', roles: ['admin'] }]);
    const opsTeam = merged.metadata.managedFields.find((entry: { manager: string }) => entry.manager === 'ops-team');
    expect(opsTeam.fieldsV1['f:spec']['f:users']).toEqual({ 'k:{"name":"ops"}': { '.': {}, 'f:name': {}, 'f:roles': {} } });
    // The first applier stops applying its user: the list keeps only the other applier's.
    await expectOk('apply', '--server-side', '--force-conflicts', '-n', 'shop', '-f', file('no-users.yaml', threeReplicas.replace(/  users:\n[\s\S]*$/, '')));
    expect(JSON.parse(await expectOk('get', 'db', 'inventory', '-n', 'shop', '-o', 'json')).spec.users).toEqual([{ name: 'ops', roles: ['admin'] }]);
  });

  it('edits a custom object with kubectl edit, and serves a cluster-scoped CRD\'s objects', async () => {
    // kubectl edit runs KUBE_EDITOR on the object's YAML and sends the change as a merge patch.
    const edited = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        'kubectl',
        ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'kube-cache'), 'edit', 'db', 'orders', '-n', 'shop'],
        { timeout: 60_000, env: { ...process.env, KUBE_EDITOR: "sed -i -e 's/^  engine: postgres$/  engine: mysql/'" } },
        (error, _stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
      );
    });
    expect(edited, edited.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(await expectOk('get', 'db', 'orders', '-n', 'shop', '-o', 'json')).spec.engine).toBe('mysql');
    await expectOk('patch', 'db', 'orders', '-n', 'shop', '--type=merge', '-p', '{"spec":{"engine":"postgres"}}');

    await expectOk('apply', '-f', file('cluster-crd.yaml', `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: regions.ops.example.com
spec:
  group: ops.example.com
  scope: Cluster
  names: {plural: regions, singular: region, kind: Region, shortNames: [rg]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {zone: {type: string}}}
`));
    await expectOk('wait', '--for', 'condition=Established', 'crd/regions.ops.example.com', '--timeout=30s');
    expect(await expectOk('apply', '-f', file('region.yaml', 'apiVersion: ops.example.com/v1\nkind: Region\nmetadata:\n  name: north\nspec:\n  zone: n1\n'))).toBe('region.ops.example.com/north created\n');
    const region = JSON.parse(await expectOk('get', 'rg', 'north', '-o', 'json'));
    expect(region.metadata.namespace).toBeUndefined();
    expect(region.spec).toEqual({ zone: 'n1' });
    expect(await expectOk('get', 'regions')).toMatch(/^north\s+\d+s$/m);
    expect(await expectOk('api-resources', '--api-group=ops.example.com', '--namespaced=false')).toMatch(/^regions\s+rg\s+ops\.example\.com\/v1\s+false\s+Region$/m);
    expect(await expectOk('delete', 'region', 'north')).toBe('region.ops.example.com "north" deleted\n');
    expect(await expectOk('delete', 'crd', 'regions.ops.example.com', '--timeout=60s')).toBe('customresourcedefinition.apiextensions.k8s.io "regions.ops.example.com" deleted\n');
  });

  it('serves the other version, and deletes objects with their namespace and with the CRD', async () => {
    await expectOk('create', 'namespace', 'scratch');
    // Written at v1alpha1, stored at the storage version v1 (None conversion: pruned by v1's schema
    // and defaulted by it, as kube-apiserver reads it back from storage), shown at either version.
    await expectOk('apply', '-n', 'scratch', '-f', file('old.yaml', 'apiVersion: ops.example.com/v1alpha1\nkind: Database\nmetadata:\n  name: legacy\nspec:\n  engine: mysql\n  anything: goes\n'));
    const asAlpha = JSON.parse(await expectOk('get', 'databases.v1alpha1.ops.example.com', 'legacy', '-n', 'scratch', '-o', 'json'));
    expect(asAlpha).toMatchObject({ apiVersion: 'ops.example.com/v1alpha1', spec: { engine: 'mysql', replicas: 1 } });
    expect(asAlpha.spec.anything).toBeUndefined();
    expect(JSON.parse(await expectOk('get', 'databases.v1.ops.example.com', 'legacy', '-n', 'scratch', '-o', 'json'))).toMatchObject({ apiVersion: 'ops.example.com/v1', spec: { engine: 'mysql', replicas: 1 } });
    // An object written at v1 is shown at v1alpha1 too, in lists as well.
    const alphaList = JSON.parse(await expectOk('get', 'databases.v1alpha1.ops.example.com', '-n', 'shop', '-o', 'json'));
    expect(alphaList.items.map((item: { apiVersion: string }) => item.apiVersion)).toEqual(['ops.example.com/v1alpha1', 'ops.example.com/v1alpha1']);
    // A schema change applies to objects already stored, at every version, as kube reads them from
    // storage: a field the schema no longer has is gone, a new default is filled in.
    const v1Index = JSON.parse(await expectOk('get', 'crd', 'databases.ops.example.com', '-o', 'json')).spec.versions.findIndex((v: { name: string }) => v.name === 'v1');
    const spec = `/spec/versions/${v1Index}/schema/openAPIV3Schema/properties/spec/properties`;
    await expectOk('patch', 'crd', 'databases.ops.example.com', '--type=json', '-p', JSON.stringify([
      { op: 'add', path: `${spec}/tier`, value: { type: 'string', default: 'standard' } },
      { op: 'remove', path: `${spec}/storage` },
    ]));
    for (const resource of ['databases.v1.ops.example.com', 'databases.v1alpha1.ops.example.com']) {
      const read = JSON.parse(await expectOk('get', resource, 'orders', '-n', 'shop', '-o', 'json'));
      expect(read.spec.tier, resource).toBe('standard');
      expect(read.spec.storage, resource).toBeUndefined();
      expect(read.spec.engine, resource).toBe('postgres');
    }
    await expectOk('delete', 'namespace', 'scratch', '--timeout=60s');
    expect((await kubectl('get', 'db', 'legacy', '-n', 'scratch')).code).not.toBe(0);
    expect(await expectOk('delete', 'crd', 'databases.ops.example.com', '--timeout=60s')).toBe('customresourcedefinition.apiextensions.k8s.io "databases.ops.example.com" deleted\n');
    expect((await kubectl('get', 'crd', 'databases.ops.example.com')).code).not.toBe(0);
    const gone = await kubectl('get', 'databases', '-n', 'shop');
    expect(gone.code).not.toBe(0);
    // With kubectl's discovery cache still naming the resource, the server's 404 (kube answers the same).
    expect(gone.stderr).toMatch(/the server doesn't have a resource type "databases"|\(NotFound\)/);
    // The CRD's finalizer deleted its objects first.
    expect(harness.api.projection.view().list('Database.ops.example.com')).toEqual([]);
  });

  it('replays the log, custom objects included, to the live state hash', async () => {
    const comparison = await replayToLive({ log: harness.log, projection: harness.api.projection });
    expect(comparison.liveHash).toBeDefined();
    expect(comparison.replayHash).toBe(comparison.liveHash);
  });
});
