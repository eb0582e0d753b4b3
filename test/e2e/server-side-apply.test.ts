/**
 * Server-side apply with the real kubectl (v1.32) on both logs: `kubectl apply
 * --server-side` creates, re-applies as unchanged (nothing appended, resourceVersion
 * kept), another manager's different `spec.replicas` is a 409 with kube's message,
 * `--force-conflicts` takes the field, a field dropped from the file is removed, the
 * client-side → server-side migration, and every write's manager in managedFields
 * (`--show-managed-fields`). Also `@kubernetes/client-node`'s `KubernetesObjectApi.patch`
 * with the apply patch type.
 */
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ADMIN_TOKEN, describeOnBothLogs, logEnd } from '../../apiserver/testing.ts';
import { useKubectlApiServer } from './kubectl-harness.ts';

const deployment = (options: { name: string; replicas?: number; labels?: Record<string, string>; env?: boolean }): string => {
  const labels = Object.entries({ app: options.name, ...options.labels })
    .map(([k, v]) => `    ${k}: ${v}`)
    .join('\n');
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${options.name}
  labels:
${labels}
spec:
${options.replicas === undefined ? '' : `  replicas: ${options.replicas}\n`}  selector:
    matchLabels:
      app: ${options.name}
  template:
    metadata:
      labels:
        app: ${options.name}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - containerPort: 80
${options.env ? '        env:\n        - name: MODE\n          value: fast\n' : ''}`;
};

interface ManagedEntry {
  manager: string;
  operation: string;
  apiVersion: string;
  time?: string;
  fieldsType: string;
  fieldsV1: Record<string, unknown>;
}

describeOnBothLogs('server-side apply', (adapter) => {
  const server = useKubectlApiServer(adapter, 'ssa-e2e', { namespaceController: false });
  const { kubectl, file, dir, kubeconfig } = server;

  /** A PATCH over TLS trusting the test certificate; the status and parsed body. */
  const patch = (path: string, body: unknown, contentType: string): Promise<{ status: number; body: any }> =>
    new Promise((resolve, reject) => {
      const req = httpsRequest(
        `${server.api.server.url}${path}`,
        { method: 'PATCH', ca: server.ca, headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': contentType, Accept: 'application/json' } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });

  const getYaml = async (...args: string[]): Promise<any> => {
    const result = await kubectl('get', ...args, '-o', 'yaml');
    expect(result.stderr).toBe('');
    return parseYaml(result.stdout);
  };

  it('creates with --server-side, recording kubectl as the Apply manager, shown only with --show-managed-fields', async () => {
    const path = file('web.yaml', deployment({ name: 'web', replicas: 2 }));
    const created = await kubectl('apply', '--server-side', '-f', path);
    expect(created).toMatchObject({ code: 0, stderr: '', stdout: 'deployment.apps/web serverside-applied\n' });
    const hidden = await getYaml('deploy', 'web');
    expect(hidden.metadata.managedFields).toBeUndefined();
    expect(hidden.spec.replicas).toBe(2);
    const shown = await getYaml('deploy', 'web', '--show-managed-fields');
    const entries = shown.metadata.managedFields as ManagedEntry[];
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ manager: 'kubectl', operation: 'Apply', apiVersion: 'apps/v1', fieldsType: 'FieldsV1' });
    expect(entries[0]!.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(entries[0]!.fieldsV1).toEqual({
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': {
        'f:replicas': {},
        'f:selector': {},
        'f:template': {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': {
            'f:containers': {
              'k:{"name":"web"}': {
                '.': {},
                'f:image': {},
                'f:name': {},
                'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
              },
            },
          },
        },
      },
    });
  });

  it('re-applies the same file as unchanged: nothing appended, resourceVersion kept', async () => {
    const before = await getYaml('deploy', 'web');
    const end = await logEnd(server.log, 'desired');
    const again = await kubectl('apply', '--server-side', '-f', join(dir, 'web.yaml'));
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(await logEnd(server.log, 'desired')).toBe(end);
    const after = await getYaml('deploy', 'web');
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it("answers another manager's different replicas with kube's 409, and --force-conflicts takes the field", async () => {
    const path = file('web-5.yaml', deployment({ name: 'web', replicas: 5 }));
    const conflict = await kubectl('apply', '--server-side', '--field-manager=ci', '-f', path);
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas');
    expect((await getYaml('deploy', 'web')).spec.replicas).toBe(2);

    const forced = await kubectl('apply', '--server-side', '--field-manager=ci', '--force-conflicts', '-f', path);
    expect(forced).toMatchObject({ code: 0, stderr: '' });
    const shown = await getYaml('deploy', 'web', '--show-managed-fields');
    expect(shown.spec.replicas).toBe(5);
    const entries = shown.metadata.managedFields as ManagedEntry[];
    const byManager = Object.fromEntries(entries.map((e) => [e.manager, e]));
    expect(Object.keys(byManager).sort()).toEqual(['ci', 'kubectl']);
    expect((byManager['ci']!.fieldsV1['f:spec'] as Record<string, unknown>)['f:replicas']).toEqual({});
    expect((byManager['kubectl']!.fieldsV1['f:spec'] as Record<string, unknown>)['f:replicas']).toBeUndefined();
    // Both still own the image they applied with the same value: no conflict, shared.
    expect(JSON.stringify(byManager['kubectl']!.fieldsV1)).toContain('"f:image"');
    expect(JSON.stringify(byManager['ci']!.fieldsV1)).toContain('"f:image"');
  });

  it("applies the README's example (a Deployment and a Service): created, unchanged, conflict, forced", async () => {
    const example = new URL('../../examples/echo.yaml', import.meta.url);
    const created = await kubectl('apply', '--server-side', '-f', example.pathname);
    expect(created).toMatchObject({ code: 0, stderr: '', stdout: 'deployment.apps/echo serverside-applied\nservice/echo serverside-applied\n' });
    const service = await getYaml('svc', 'echo');
    expect(service.spec.clusterIP).toMatch(/^127\.96\./);
    const end = await logEnd(server.log, 'desired');
    expect((await kubectl('apply', '--server-side', '-f', example.pathname)).code).toBe(0);
    expect(await logEnd(server.log, 'desired')).toBe(end);
    expect((await getYaml('svc', 'echo')).metadata.resourceVersion).toBe(service.metadata.resourceVersion);

    const scaled = file('echo-5.yaml', readFileSync(example, 'utf8').replace('replicas: 3', 'replicas: 5'));
    const conflict = await kubectl('apply', '--server-side', '--field-manager=gitops', '-f', scaled);
    expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas');
    const forced = await kubectl('apply', '--server-side', '--field-manager=gitops', '--force-conflicts', '-f', scaled);
    expect(forced).toMatchObject({ code: 0, stderr: '' });
    expect((await getYaml('deploy', 'echo')).spec.replicas).toBe(5);
  });

  it('applies with --dry-run=server without appending, and applies cluster-scoped kinds', async () => {
    const end = await logEnd(server.log, 'desired');
    const dry = await kubectl('apply', '--server-side', '--dry-run=server', '-f', file('dry.yaml', deployment({ name: 'dry', replicas: 1 })));
    expect(dry).toMatchObject({ code: 0, stderr: '', stdout: 'deployment.apps/dry serverside-applied (server dry run)\n' });
    expect(await logEnd(server.log, 'desired')).toBe(end);
    expect((await kubectl('get', 'deploy', 'dry')).stderr).toContain('NotFound');
    const ns = await kubectl('apply', '--server-side', '-f', file('ns.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: applied\n  labels:\n    team: a\n'));
    expect(ns).toMatchObject({ code: 0, stderr: '', stdout: 'namespace/applied serverside-applied\n' });
    const shown = await getYaml('namespace', 'applied', '--show-managed-fields');
    expect(shown.metadata.managedFields[0]).toMatchObject({ manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:team': {} } } } });
  });

  it('records kubectl scale as an Update entry of the scale subresource, which takes spec.replicas', async () => {
    const path = file('scaled.yaml', deployment({ name: 'scaled', replicas: 2 }));
    expect((await kubectl('apply', '--server-side', '-f', path)).code).toBe(0);
    expect((await kubectl('scale', 'deploy', 'scaled', '--replicas=4')).stdout).toBe('deployment.apps/scaled scaled\n');
    const shown = await getYaml('deploy', 'scaled', '--show-managed-fields');
    expect(shown.spec.replicas).toBe(4);
    const scaleEntry = (shown.metadata.managedFields as (ManagedEntry & { subresource?: string })[]).find((e) => e.subresource === 'scale');
    expect(scaleEntry).toMatchObject({ operation: 'Update', apiVersion: 'apps/v1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } });
    const conflict = await kubectl('apply', '--server-side', '-f', path);
    expect(conflict.stderr).toContain(`Apply failed with 1 conflict: conflict with "${scaleEntry!.manager}" with subresource "scale" using apps/v1: .spec.replicas`);
  });

  it('removes a field the applier no longer applies and nobody else owns', async () => {
    const withExtras = file('extras.yaml', deployment({ name: 'extras', replicas: 1, labels: { tier: 'front' }, env: true }));
    expect((await kubectl('apply', '--server-side', '-f', withExtras)).code).toBe(0);
    const before = await getYaml('deploy', 'extras');
    expect(before.metadata.labels).toEqual({ app: 'extras', tier: 'front' });
    expect(before.spec.template.spec.containers[0].env).toEqual([{ name: 'MODE', value: 'fast' }]);

    const without = file('extras-2.yaml', deployment({ name: 'extras', replicas: 1 }));
    expect((await kubectl('apply', '--server-side', '-f', without)).code).toBe(0);
    const after = await getYaml('deploy', 'extras');
    expect(after.metadata.labels).toEqual({ app: 'extras' });
    expect(after.spec.template.spec.containers[0].env).toBeUndefined();
    expect(after.spec.template.spec.containers[0].image).toBe('nginx:1.27');
  });

  it('keeps a field another manager also owns when the applier drops it', async () => {
    const base = file('shared.yaml', deployment({ name: 'shared', replicas: 3 }));
    expect((await kubectl('apply', '--server-side', '-f', base)).code).toBe(0);
    expect((await kubectl('apply', '--server-side', '--field-manager=other', '-f', base)).code).toBe(0);
    const dropped = file('shared-2.yaml', deployment({ name: 'shared' }));
    expect((await kubectl('apply', '--server-side', '-f', dropped)).code).toBe(0);
    expect((await getYaml('deploy', 'shared')).spec.replicas).toBe(3);
  });

  it('migrates a client-side applied object to server-side apply without conflicts', async () => {
    const path = file('migrate.yaml', deployment({ name: 'migrate', replicas: 2 }));
    expect((await kubectl('apply', '-f', path)).stdout).toBe('deployment.apps/migrate created\n');
    const clientSide = (await getYaml('deploy', 'migrate', '--show-managed-fields')).metadata.managedFields as ManagedEntry[];
    expect(clientSide.map((e) => [e.manager, e.operation])).toEqual([['kubectl-client-side-apply', 'Update']]);
    expect(clientSide[0]!.fieldsV1['f:metadata']).toHaveProperty(['f:annotations', 'f:kubectl.kubernetes.io/last-applied-configuration']);

    const changed = file('migrate-3.yaml', deployment({ name: 'migrate', replicas: 3 }));
    const serverSide = await kubectl('apply', '--server-side', '-f', changed);
    expect(serverSide).toMatchObject({ code: 0, stderr: '', stdout: 'deployment.apps/migrate serverside-applied\n' });
    const migrated = await getYaml('deploy', 'migrate', '--show-managed-fields');
    expect(migrated.spec.replicas).toBe(3);
    const managers = (migrated.metadata.managedFields as ManagedEntry[]).map((e) => `${e.manager}/${e.operation}`);
    expect(managers).toContain('kubectl/Apply');
    const lastApplied = JSON.parse(migrated.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
    expect(lastApplied.spec.replicas).toBe(3);
    // Client-side apply goes on working from the synced annotation (kubectl rewrites it in its own spelling).
    expect(await kubectl('apply', '-f', changed)).toMatchObject({ code: 0, stderr: '', stdout: 'deployment.apps/migrate configured\n' });
    expect((await getYaml('deploy', 'migrate')).spec.replicas).toBe(3);
  });

  it('records the manager of a create and of a merge patch as Update entries, which an applier then conflicts with', async () => {
    expect((await kubectl('create', 'configmap', 'settings', '--from-literal=a=1')).code).toBe(0);
    const created = await getYaml('configmap', 'settings', '--show-managed-fields');
    expect((created.metadata.managedFields as ManagedEntry[]).map((e) => [e.manager, e.operation])).toEqual([['kubectl-create', 'Update']]);
    expect(created.metadata.managedFields[0].fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:a': {} } });

    expect((await kubectl('patch', 'configmap', 'settings', '--type=merge', '-p', '{"data":{"b":"2"}}')).code).toBe(0);
    const patched = await getYaml('configmap', 'settings', '--show-managed-fields');
    const entries = patched.metadata.managedFields as ManagedEntry[];
    expect(entries.map((e) => e.manager).sort()).toEqual(['kubectl-create', 'kubectl-patch']);
    expect(entries.find((e) => e.manager === 'kubectl-patch')!.fieldsV1).toEqual({ 'f:data': { 'f:b': {} } });

    const conflict = await kubectl('apply', '--server-side', '-f', file('settings.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  b: "3"\n'));
    expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: .data.b');
  });

  it('refuses an apply patch without fieldManager with 422, and one with unknown fields with 400', async () => {
    const config = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'raw' }, data: { a: '1' } };
    const missing = await patch('/api/v1/namespaces/default/configmaps/raw', config, 'application/apply-patch+yaml');
    expect(missing.status).toBe(422);
    expect(missing.body.message).toBe('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    const unknown = await patch('/api/v1/namespaces/default/configmaps/raw?fieldManager=t', { ...config, spec: { x: 1 } }, 'application/apply-patch+yaml');
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('.spec: field not declared in schema');
    const json = await patch('/api/v1/namespaces/default/configmaps/raw?fieldManager=t', config, 'application/apply-patch+json');
    expect(json.status).toBe(201);
    expect(json.body.data).toEqual({ a: '1' });
  });

  it("applies with @kubernetes/client-node's KubernetesObjectApi.patch and the apply patch type", async () => {
    const config = new k8s.KubeConfig();
    config.loadFromFile(kubeconfig);
    const client = k8s.KubernetesObjectApi.makeApiClient(config);
    const spec = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'node-client', namespace: 'default' }, spec: { replicas: 1, selector: { matchLabels: { app: 'nc' } }, template: { metadata: { labels: { app: 'nc' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } } };
    const created = (await client.patch(spec, undefined, undefined, 'node-app', true, k8s.PatchStrategy.ServerSideApply)) as k8s.V1Deployment;
    expect(created.metadata?.managedFields?.map((e) => [e.manager, e.operation])).toEqual([['node-app', 'Apply']]);
    const conflict = client.patch({ ...spec, spec: { ...spec.spec, replicas: 4 } }, undefined, undefined, 'someone-else', false, k8s.PatchStrategy.ServerSideApply);
    await expect(conflict).rejects.toMatchObject({ code: 409 });
    const updated = await client.patch({ ...spec, spec: { ...spec.spec, replicas: 4 } }, undefined, undefined, 'node-app', false, k8s.PatchStrategy.ServerSideApply);
    expect((updated as k8s.V1Deployment).spec?.replicas).toBe(4);
  });
});
