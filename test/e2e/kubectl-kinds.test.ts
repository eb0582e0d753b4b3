/**
 * The kinds served besides the original seven, with the real kubectl (v1.32) on both logs:
 * `kubectl apply` of a manifest per kind (fields such as volumes, securityContext,
 * env valueFrom, envFrom and numeric quantities included), `get -o json` giving back every
 * field applied (quantities canonical, Secret stringData folded into data as kube does),
 * tables with kube's columns, `kubectl create configmap|secret|job`, and a namespace
 * deletion that removes every namespaced kind.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { generateSelfSignedCertificate, writeKubeconfig } from '../../apiserver/index.ts';
import { ADMIN_TOKEN, describeOnBothLogs, openTestLog, startTestApiServer, tempDir, type TestApiServer } from '../../apiserver/testing.ts';
import type { EventLog } from '../../log/port.ts';
import { startControllers, type RunningControllers } from '../../reconcilers/controllers.ts';
import { createKubectl } from './kubectl-harness.ts';

type Doc = { kind: string; metadata: { name: string } } & Record<string, unknown>;

const MANIFESTS = new URL('./manifests/', import.meta.url);
const read = (name: string): { path: string; docs: Doc[] } => {
  const path = new URL(name, MANIFESTS).pathname;
  return { path, docs: parseAllDocuments(readFileSync(path, 'utf8')).map((doc) => doc.toJSON() as Doc) };
};

/** What kube gives back for what was applied: canonical quantities, stringData folded into data. */
const expected = (doc: Doc): Doc => {
  const text = JSON.stringify(doc).replace('"cpu":0.1', '"cpu":"100m"');
  const out = JSON.parse(text) as Doc;
  if (out.kind === 'Secret' && out['stringData']) {
    const data = Object.fromEntries(Object.entries(out['stringData'] as Record<string, string>).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    delete out['stringData'];
    out['data'] = data;
  }
  return out;
};

describeOnBothLogs('kubectl with every served kind', (adapter) => {
  const temp = tempDir('kubectl-kinds-');
  const kubeconfig = join(temp.dir, 'kubeconfig');
  let log: EventLog;
  let api: TestApiServer;
  let controllers: RunningControllers | undefined;

  const { kubectl } = createKubectl({ kubeconfig: () => kubeconfig, dir: () => temp.dir }, 90_000);
  const ok = async (...args: string[]): Promise<string> => {
    const result = await kubectl(...args);
    expect(result.stderr, args.join(' ')).toBe('');
    expect(result.code, args.join(' ')).toBe(0);
    return result.stdout;
  };

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    const tls = generateSelfSignedCertificate();
    api = await startTestApiServer(log, temp.dir, { tls });
    writeKubeconfig(kubeconfig, { server: api.server.url, token: ADMIN_TOKEN, certificateAuthority: tls.cert });
    controllers = await startControllers({ log, projection: api.projection, logger: pino({ level: 'silent' }), only: ['namespace', 'pvc-protection', 'pv-protection'] });
  });

  afterAll(async () => {
    await controllers?.stop();
    await api?.close();
    await log?.close();
    temp.remove();
  });

  const namespaced = read('kinds.yaml');
  const clusterScoped = read('cluster-kinds.yaml');

  it('applies a manifest of every kind and gives back every field applied', async () => {
    await ok('create', 'namespace', 'shop');
    const applied = await ok('apply', '-n', 'shop', '-f', namespaced.path);
    const appliedCluster = await ok('apply', '-f', clusterScoped.path);
    for (const doc of [...namespaced.docs, ...clusterScoped.docs]) {
      expect(`${applied}${appliedCluster}`).toMatch(new RegExp(`/${doc.metadata.name} created`));
      const isCluster = clusterScoped.docs.includes(doc);
      const got = JSON.parse(await ok('get', doc.kind, doc.metadata.name, ...(isCluster ? [] : ['-n', 'shop']), '-o', 'json')) as Doc;
      expect(got, `${doc.kind}/${doc.metadata.name}`).toMatchObject(expected(doc));
      expect(got.metadata).toMatchObject({ uid: expect.any(String), resourceVersion: expect.any(String) });
    }
  });

  it.each([
    ['configmaps', /^NAME\s+DATA\s+AGE\napp-config\s+3\s+\d+s$/m],
    ['secrets', /^NAME\s+TYPE\s+DATA\s+AGE\napp-secret\s+Opaque\s+1\s+\d+s$/m],
    ['jobs', /^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\nmigrate\s+Running\s+0\/1\s+\d+s$/m],
    ['cronjobs', /^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\nreport\s+\*\/5 \* \* \* \*\s+<none>\s+False\s+0\s+<none>\s+\d+s$/m],
    ['pvc', /^NAME\s+STATUS\s+VOLUME\s+CAPACITY\s+ACCESS MODES\s+STORAGECLASS\s+VOLUMEATTRIBUTESCLASS\s+AGE\ndata\s+Pending\s+local-path\s+<unset>\s+\d+s$/m],
    ['rolebindings', /^NAME\s+ROLE\s+AGE\napp-reader\s+Role\/reader\s+\d+s$/m],
    ['ingress', /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE\nweb\s+nginx\s+shop\.example\.com\s+80\s+\d+s$/m],
  ])('prints %s with kube\'s columns', async (resource, table) => {
    expect(await ok('get', resource, '-n', 'shop')).toMatch(table);
  });

  it('prints cluster-scoped kinds with kube\'s columns', async () => {
    expect(await ok('get', 'storageclass')).toMatch(/^local-path \(default\)\s+rancher\.io\/local-path\s+Delete\s+WaitForFirstConsumer\s+false\s+\d+s$/m);
    expect(await ok('get', 'priorityclass', 'high')).toMatch(/^high\s+1000000\s+false\s+\d+s\s+PreemptLowerPriority$/m);
  });

  it.each([
    ['pod.spec.volumes', /FIELD: volumes <\[\]Volume>[\s\S]*List of volumes that can be mounted by containers/],
    ['jobs.spec.backoffLimit', /GROUP:\s+batch[\s\S]*FIELD: backoffLimit <integer>/],
    ['ingress.spec.rules.http.paths.backend.service.port', /FIELD: port <ServiceBackendPort>/],
    ['clusterrolebinding.roleRef', /GROUP:\s+rbac\.authorization\.k8s\.io[\s\S]*FIELD: roleRef <RoleRef>/],
  ])('explains %s', async (field, text) => {
    expect(await ok('explain', field)).toMatch(text);
  });

  it('creates config maps, secrets and jobs with kubectl create', async () => {
    await ok('create', 'configmap', 'literal', '-n', 'shop', '--from-literal=color=blue');
    await ok('create', 'secret', 'generic', 'token', '-n', 'shop', '--from-literal=token=abc');
    await ok('create', 'job', 'once', '-n', 'shop', '--image=busybox:1.36', '--', 'echo', 'hi');
    const secret = JSON.parse(await ok('get', 'secret', 'token', '-n', 'shop', '-o', 'json')) as { data: Record<string, string> };
    expect(Buffer.from(secret.data['token'] ?? '', 'base64').toString()).toBe('abc');
    const job = JSON.parse(await ok('get', 'job', 'once', '-n', 'shop', '-o', 'json')) as { spec: { template: { spec: { containers: { command: string[] }[]; restartPolicy: string } } } };
    expect(job.spec.template.spec).toMatchObject({ restartPolicy: 'Never', containers: [{ command: ['echo', 'hi'] }] });
  });

  it('refuses a bad object of a new kind with kube\'s field error, appending nothing', async () => {
    const bad = join(temp.dir, 'bad.yaml');
    writeFileSync(bad, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\ndata:\n  no/slash: x\n');
    const result = await kubectl('apply', '-n', 'shop', '-f', bad);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/data\[no\/slash\]: Invalid value: "no\/slash": a valid config key must consist of alphanumeric characters/);
    expect((await kubectl('get', 'configmap', 'bad', '-n', 'shop')).stderr).toMatch(/NotFound|not found/);
  });

  it('scales every kind with a scale subresource: StatefulSet and ReplicationController too', async () => {
    const rc = join(temp.dir, 'rc.yaml');
    writeFileSync(
      rc,
      'apiVersion: v1\nkind: ReplicationController\nmetadata: {name: mysql}\nspec:\n  replicas: 1\n  selector: {app: mysql, tier: db}\n  template:\n    metadata: {labels: {app: mysql, tier: db}}\n    spec: {containers: [{name: mysql, image: mysql:8}]}\n',
    );
    await ok('create', '-n', 'shop', '-f', rc);
    expect(await ok('scale', 'rc', 'mysql', '-n', 'shop', '--replicas=2')).toMatch(/replicationcontroller\/mysql scaled/);
    expect(await ok('scale', 'statefulset', 'db', '-n', 'shop', '--replicas=4')).toMatch(/statefulset.apps\/db scaled/);
    expect(await ok('get', 'rc', 'mysql', '-n', 'shop', '-o', 'jsonpath={.spec.replicas}')).toBe('2');
    expect(await ok('get', 'statefulset', 'db', '-n', 'shop', '-o', 'jsonpath={.spec.replicas}')).toBe('4');
    const scale = JSON.parse(await ok('get', '--raw', '/api/v1/namespaces/shop/replicationcontrollers/mysql/scale')) as Doc;
    expect(scale).toMatchObject({ kind: 'Scale', spec: { replicas: 2 }, status: { selector: 'app=mysql,tier=db' } });
    const refused = await kubectl('scale', 'daemonset', 'agent', '-n', 'shop', '--replicas=2');
    expect(refused.code).not.toBe(0);
  });

  it('serves autoscaling/v1 and events.k8s.io/v1 as conversions of the stored versions', async () => {
    const manifest = join(temp.dir, 'converted.yaml');
    writeFileSync(
      manifest,
      [
        'apiVersion: autoscaling/v1',
        'kind: HorizontalPodAutoscaler',
        'metadata: {name: api}',
        'spec: {scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: db}, minReplicas: 2, maxReplicas: 6, targetCPUUtilizationPercentage: 65}',
        '---',
        'apiVersion: events.k8s.io/v1',
        'kind: Event',
        'metadata: {name: db-0.restarted}',
        'eventTime: "2026-01-01T00:00:00.000000Z"',
        'regarding: {kind: Pod, name: db-0, namespace: shop}',
        'reason: Restarted',
        'note: Restarted by the operator',
        'type: Warning',
        'action: Restart',
        'reportingController: example.com/operator',
        'reportingInstance: operator-0',
      ].join('\n'),
    );
    await ok('apply', '-n', 'shop', '-f', manifest);
    const v2 = JSON.parse(await ok('get', 'hpa', 'api', '-n', 'shop', '-o', 'json')) as Doc;
    expect(v2).toMatchObject({ apiVersion: 'autoscaling/v2', spec: { metrics: [{ resource: { name: 'cpu', target: { averageUtilization: 65 } } }] } });
    const v1 = JSON.parse(await ok('get', 'horizontalpodautoscalers.v1.autoscaling', 'api', '-n', 'shop', '-o', 'json')) as Doc;
    expect(v1).toMatchObject({ apiVersion: 'autoscaling/v1', spec: { targetCPUUtilizationPercentage: 65, minReplicas: 2 } });
    expect(await ok('get', 'hpa', 'api', '-n', 'shop')).toMatch(/^api\s+StatefulSet\/db\s+cpu: <unknown>\/65%\s+2\s+6\s+0\s+\d+s$/m);
    expect(await ok('explain', 'hpa.spec.targetCPUUtilizationPercentage', '--api-version=autoscaling/v1')).toMatch(/FIELD: targetCPUUtilizationPercentage <integer>/);
    const core = JSON.parse(await ok('get', 'events', 'db-0.restarted', '-n', 'shop', '-o', 'json')) as Doc;
    expect(core).toMatchObject({ apiVersion: 'v1', involvedObject: { name: 'db-0' }, message: 'Restarted by the operator', reportingComponent: 'example.com/operator' });
    const events = JSON.parse(await ok('get', 'events.v1.events.k8s.io', '-n', 'shop', '-o', 'json')) as { items: Doc[] };
    expect(events.items).toContainEqual(expect.objectContaining({ apiVersion: 'events.k8s.io/v1', note: 'Restarted by the operator', regarding: expect.objectContaining({ name: 'db-0' }) }));
    expect(await ok('get', 'events', '-n', 'shop')).toMatch(/Warning\s+Restarted\s+pod\/db-0\s+Restarted by the operator/);
    // Server-side apply merges in the request's version.
    const serverSide = join(temp.dir, 'hpa-v1.yaml');
    const hpaV1 = (target: number) =>
      `apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: api2}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: db}, maxReplicas: 4, targetCPUUtilizationPercentage: ${target}}\n`;
    writeFileSync(serverSide, hpaV1(50));
    await ok('apply', '--server-side', '-n', 'shop', '-f', serverSide);
    writeFileSync(serverSide, hpaV1(40));
    await ok('apply', '--server-side', '-n', 'shop', '-f', serverSide);
    expect(await ok('get', 'horizontalpodautoscalers.v1.autoscaling', 'api2', '-n', 'shop', '-o', 'jsonpath={.spec.targetCPUUtilizationPercentage}')).toBe('40');
    expect(await ok('get', 'hpa', 'api2', '-n', 'shop', '-o', 'jsonpath={.spec.metrics[0].resource.target.averageUtilization}')).toBe('40');
  });

  it('deletes objects of the new kinds, and a namespace deletion removes every namespaced kind', async () => {
    // Every namespaced resource the server lists, but the metrics API's (usage samples from node agents, not objects).
    const resources = (await ok('api-resources', '--namespaced=true', '--verbs=list', '-o', 'name'))
      .trim()
      .split('\n')
      .filter((resource) => !resource.endsWith('.metrics.k8s.io'));
    const listed = async (): Promise<string> => {
      const result = await kubectl('get', resources.join(','), '-n', 'shop', '-o', 'name');
      expect(result.code, result.stderr).toBe(0);
      return result.stdout;
    };
    const before = await listed();
    for (const doc of namespaced.docs) expect(before, `${doc.kind}/${doc.metadata.name}`).toMatch(new RegExp(`/${doc.metadata.name}$`, 'm'));
    await ok('delete', 'cronjob', 'report', '-n', 'shop');
    expect((await kubectl('get', 'cronjob', 'report', '-n', 'shop')).stderr).toMatch(/not found/);
    await ok('delete', 'namespace', 'shop', '--timeout=60s');
    expect((await kubectl('get', 'namespace', 'shop')).stderr).toMatch(/NotFound/);
    expect(await listed()).toBe('');
    expect(JSON.parse(await ok('get', 'storageclass', 'local-path', '-o', 'json'))).toMatchObject({ provisioner: 'rancher.io/local-path' });
  });
});
