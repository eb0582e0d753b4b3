/**
 * Every component's Prometheus `/metrics`, read with a real HTTPS client: in `logplane up`
 * the apiserver's shows the controllers', the scheduler's, the agent's, the log's and the
 * projection's metrics; in distributed mode `controllers --metrics-address` and the agent's
 * endpoint serve their own, checking tokens with the apiserver as their own identities
 * (`system:kube-controller-manager`, `system:node:metrics-node`). Each refuses a request without credentials (401), refuses a
 * user not allowed (403), and shows values that move when work is done.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentManifest } from '../../apiserver/testing.ts';
import { runAgent, runApiserver, runControllers, type Component } from '../../cli/components.ts';
import { ensureClusterCA, kubeletClientCredentials } from '../../cli/pki.ts';
import { startCluster, type RunningCluster } from '../../cli/up.ts';
import { tlsMaterial, type LogTarget } from '../../cli/wiring.ts';
import { waitFor } from './process.ts';

const logger = pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' });

const TOKENS = [
  'admin-token,admin,admin,"system:masters"',
  'scraper-token,scraper,scraper,""',
  'viewer-token,viewer,viewer,""',
].join('\n');

interface Reply {
  readonly status: number;
  readonly body: string;
}

/** A request over HTTPS trusting `ca`, with a bearer token and/or a client certificate when given. */
const send = (
  url: string,
  options: { ca: string; token?: string; cert?: { cert: string; key: string }; method?: string; body?: unknown },
): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const outgoing = httpsRequest(
      url,
      {
        method: options.method ?? 'GET',
        ca: options.ca,
        agent: false,
        headers: {
          ...(options.token !== undefined ? { Authorization: `Bearer ${options.token}` } : {}),
          ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        },
        ...(options.cert ? { cert: options.cert.cert, key: options.cert.key } : {}),
      },
      (reply) => {
        let body = '';
        reply.setEncoding('utf8');
        reply.on('data', (chunk: string) => (body += chunk));
        reply.on('end', () => resolve({ status: reply.statusCode ?? 0, body }));
        reply.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });

/** The value of the sample `name{labels}` in a Prometheus text exposition (labels in any order); undefined when absent. */
const sample = (text: string, name: string, labels: Readonly<Record<string, string>> = {}): number | undefined => {
  const wanted = Object.entries(labels);
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = new Map([...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (wanted.every(([key, value]) => found.get(key) === value)) return Number(match[3]);
  }
  return undefined;
};

/** The names of the metric families a text exposition declares (`# TYPE name type`). */
const families = (text: string): Set<string> => new Set([...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map((m) => m[1] as string));

/** Every metric `logplane up`'s apiserver serves besides the apiserver's own (README "Metrics"). */
const UP_FAMILIES = [
  'apiserver_request_total',
  'apiserver_request_duration_seconds',
  'workqueue_adds_total',
  'workqueue_depth',
  'workqueue_queue_duration_seconds',
  'workqueue_work_duration_seconds',
  'workqueue_retries_total',
  'workqueue_unfinished_work_seconds',
  'workqueue_longest_running_processor_seconds',
  'scheduler_schedule_attempts_total',
  'scheduler_scheduling_attempt_duration_seconds',
  'scheduler_pending_pods',
  'scheduler_preemption_attempts_total',
  'scheduler_preemption_victims',
  'kubelet_node_name',
  'kubelet_running_pods',
  'kubelet_running_containers',
  'kubelet_pod_start_duration_seconds',
  'kubelet_pod_worker_duration_seconds',
  'kubelet_runtime_operations_total',
  'logplane_log_append_duration_seconds',
  'logplane_log_appended_records_total',
  'logplane_projection_fold_duration_seconds',
  'logplane_projection_folded_events_total',
  'logplane_projection_lag_events',
  'logplane_consumer_group_assigned_partitions',
  'logplane_consumer_group_member',
  'logplane_consumer_group_rebalances_total',
  'process_cpu_seconds_total',
];

describe('/metrics of logplane up (one process, one registry)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-component-metrics-'));
  let cluster: RunningCluster;
  let ca = '';
  const metrics = async (token = 'admin-token'): Promise<string> => {
    const reply = await send(`${cluster.url}/metrics`, { ca, token });
    expect(reply.status).toBe(200);
    return reply.body;
  };
  const api = (method: string, path: string, body: unknown) => send(`${cluster.url}${path}`, { ca, token: 'admin-token', method, body });

  beforeAll(async () => {
    writeFileSync(join(dir, 'tokens.csv'), `${TOKENS}\n`, { mode: 0o600 });
    cluster = await startCluster({ dataDir: dir, nodes: 1, runtime: 'sim', proxy: 'none', port: 0, host: '127.0.0.1', logger, simStartDelayMs: 10 });
    ca = tlsMaterial(dir).cert;
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 401 without a token and 403 to a user not allowed to get /metrics', async () => {
    expect((await send(`${cluster.url}/metrics`, { ca })).status).toBe(401);
    expect((await send(`${cluster.url}/metrics`, { ca, token: 'not-a-token' })).status).toBe(401);
    expect((await send(`${cluster.url}/metrics`, { ca, token: 'viewer-token' })).status).toBe(403);
  });

  it('shows every component\'s metrics, and their values move when a Deployment is rolled out', async () => {
    const before = await metrics();
    expect([...UP_FAMILIES].filter((name) => !families(before).has(name))).toEqual([]);
    const adds = sample(before, 'workqueue_adds_total', { name: 'replicaset' }) ?? 0;
    const scheduled = sample(before, 'scheduler_schedule_attempts_total', { result: 'scheduled', profile: 'default-scheduler' }) ?? 0;
    const appends = sample(before, 'logplane_log_append_duration_seconds_count', { topic: 'desired' }) ?? 0;
    expect(sample(before, 'kubelet_node_name', { node: 'node-1' })).toBe(1);
    expect(sample(before, 'logplane_consumer_group_assigned_partitions', { group: 'logplane.replicaset', topic: 'desired' })).toBe(1);
    expect(sample(before, 'logplane_consumer_group_member', { group: 'logplane.scheduler' })).toBe(1);
    expect(sample(before, 'logplane_projection_lag_events', { topic: 'desired', partition: '0' })).toBeGreaterThanOrEqual(0);

    expect((await api('POST', '/apis/apps/v1/namespaces/default/deployments', deploymentManifest('web', 3))).status).toBe(201);
    const after = await waitFor('three pods running on node-1', async () => {
      const text = await metrics();
      return (sample(text, 'kubelet_running_pods', { node: 'node-1' }) ?? 0) >= 3 ? text : undefined;
    });
    expect(sample(after, 'workqueue_adds_total', { name: 'replicaset' })).toBeGreaterThan(adds);
    expect(sample(after, 'workqueue_adds_total', { name: 'deployment' })).toBeGreaterThan(0);
    expect(sample(after, 'workqueue_work_duration_seconds_count', { name: 'replicaset' })).toBeGreaterThan(0);
    expect(sample(after, 'workqueue_queue_duration_seconds_count', { name: 'replicaset' })).toBeGreaterThan(0);
    expect(sample(after, 'scheduler_schedule_attempts_total', { result: 'scheduled', profile: 'default-scheduler' })).toBeGreaterThanOrEqual(scheduled + 3);
    expect(sample(after, 'scheduler_scheduling_attempt_duration_seconds_count', { result: 'scheduled', profile: 'default-scheduler' })).toBeGreaterThanOrEqual(3);
    expect(sample(after, 'kubelet_running_containers', { container_state: 'running', node: 'node-1' })).toBeGreaterThanOrEqual(3);
    expect(sample(after, 'kubelet_pod_start_duration_seconds_count')).toBeGreaterThanOrEqual(3);
    expect(sample(after, 'kubelet_pod_worker_duration_seconds_count', { operation_type: 'sync' })).toBeGreaterThan(0);
    expect(sample(after, 'logplane_log_append_duration_seconds_count', { topic: 'desired' })).toBeGreaterThan(appends);
    expect(sample(after, 'logplane_projection_fold_duration_seconds_count', { topic: 'observed' })).toBeGreaterThan(0);
    expect(sample(after, 'apiserver_request_total', { verb: 'create', resource: 'deployments', code: '201' })).toBe(1);
  }, 60_000);

  it('counts a pod no node fits as unschedulable, and a gated pod as gated, in scheduler_pending_pods', async () => {
    const before = await metrics();
    const unschedulable = sample(before, 'scheduler_schedule_attempts_total', { result: 'unschedulable', profile: 'default-scheduler' }) ?? 0;
    const huge = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'huge' },
      spec: { containers: [{ name: 'main', image: 'logplane/echo:1', resources: { requests: { cpu: '1000' } } }] },
    };
    const gated = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'gated' }, spec: { schedulingGates: [{ name: 'example.com/wait' }], containers: [{ name: 'main', image: 'logplane/echo:1' }] } };
    expect((await api('POST', '/api/v1/namespaces/default/pods', huge)).status).toBe(201);
    expect((await api('POST', '/api/v1/namespaces/default/pods', gated)).status).toBe(201);
    const after = await waitFor('the huge pod found unschedulable and the gated one gated', async () => {
      const text = await metrics();
      return sample(text, 'scheduler_pending_pods', { queue: 'unschedulable' }) === 1 && sample(text, 'scheduler_pending_pods', { queue: 'gated' }) === 1 ? text : undefined;
    });
    expect(sample(after, 'scheduler_schedule_attempts_total', { result: 'unschedulable', profile: 'default-scheduler' })).toBeGreaterThan(unschedulable);
    expect(sample(after, 'scheduler_pending_pods', { queue: 'backoff' })).toBe(0);
  }, 30_000);
});

describe('/metrics of the controllers and of the agent (distributed mode)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-component-metrics-dist-'));
  const pkiDir = join(dir, 'pki');
  const components: Component[] = [];
  let apiUrl = '';
  let apiCA = '';
  let controllersMetrics = '';
  let controllersCA = '';
  let agentMetrics = '';
  const api = (method: string, path: string, body?: unknown) => send(`${apiUrl}${path}`, { ca: apiCA, token: 'admin-token', method, body });

  beforeAll(async () => {
    const target: LogTarget = { type: 'embedded', dir: join(dir, 'log'), cluster: 'metrics', partitions: 1 };
    const apiDir = join(dir, 'api');
    mkdirSync(apiDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(apiDir, 'tokens.csv'), `${TOKENS}\n`, { mode: 0o600 });
    const apiserver = await runApiserver({ target, dataDir: apiDir, pkiDir, port: 0, host: '127.0.0.1', tls: true, logger, serviceCIDR: '127.94.0.0/16' });
    components.push(apiserver);
    apiUrl = apiserver.url;
    apiCA = tlsMaterial(apiDir).cert;
    // The scraper may get /metrics and nodes/metrics (what Prometheus' service account gets in kube); the viewer may not.
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'metrics-scraper' },
      rules: [
        { nonResourceURLs: ['/metrics'], verbs: ['get'] },
        { apiGroups: [''], resources: ['nodes/metrics'], verbs: ['get'] },
      ],
    };
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'metrics-scraper' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-scraper' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'scraper' }],
    };
    expect((await api('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role)).status).toBe(201);
    expect((await api('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', binding)).status).toBe(201);

    const controllersDir = join(dir, 'controllers');
    const controllers = await runControllers({
      target,
      dataDir: controllersDir,
      pkiDir,
      only: ['deployment', 'replicaset', 'scheduler', 'serviceaccount'],
      metricsAddress: '127.0.0.1:0',
      logger,
    });
    components.push(controllers);
    controllersMetrics = `${controllers.metricsUrl}/metrics`;
    controllersCA = tlsMaterial(controllersDir, 'controllers').cert;

    components.push(
      await runAgent({ target, dataDir: join(dir, 'agent'), pkiDir, nodes: ['metrics-node'], runtime: 'sim', proxy: 'none', podCIDR: '127.123.0.0/24', logger }),
    );
    // The apiserver's projection shows the Node once it folded the agent's registration.
    const port = await waitFor('the agent\'s Node with its endpoint', async () => {
      const reply = await api('GET', '/api/v1/nodes/metrics-node');
      if (reply.status !== 200) return undefined;
      return (JSON.parse(reply.body) as { status?: { daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } } }).status?.daemonEndpoints?.kubeletEndpoint?.Port;
    });
    agentMetrics = `https://127.0.0.1:${port}/metrics`;
  }, 90_000);

  afterAll(async () => {
    for (const component of components.reverse()) await component.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the controllers\' metrics port: 401 without a valid token, 403 for a user not allowed, the metrics for one allowed', async () => {
    expect(await send(controllersMetrics, { ca: controllersCA })).toMatchObject({ status: 401 });
    expect(await send(controllersMetrics, { ca: controllersCA, token: 'not-a-token' })).toMatchObject({ status: 401 });
    expect(await send(controllersMetrics, { ca: controllersCA, token: 'viewer-token' })).toMatchObject({ status: 403, body: 'forbidden: User "viewer" cannot get path "/metrics"\n' });
    expect(await send(controllersMetrics.replace('/metrics', '/healthz'), { ca: controllersCA })).toEqual({ status: 200, body: 'ok\n' });
    const text = (await send(controllersMetrics, { ca: controllersCA, token: 'scraper-token' })).body;
    for (const name of ['workqueue_adds_total', 'workqueue_depth', 'scheduler_schedule_attempts_total', 'logplane_projection_lag_events', 'logplane_consumer_group_member']) {
      expect(families(text)).toContain(name);
    }
    // The apiserver's own metrics are not the controllers'.
    expect(families(text)).not.toContain('apiserver_request_total');
  });

  it('the agent\'s endpoint: 401 without credentials, 403 for a token not allowed nodes/metrics, the metrics for an allowed token or the apiserver\'s certificate', async () => {
    const ca = ensureClusterCA(pkiDir).cert;
    expect(await send(agentMetrics, { ca })).toMatchObject({ status: 401 });
    expect(await send(agentMetrics, { ca, token: 'not-a-token' })).toMatchObject({ status: 401 });
    expect(await send(agentMetrics, { ca, token: 'viewer-token' })).toMatchObject({
      status: 403,
      body: 'Forbidden (user=viewer, verb=get, resource=nodes, subresource(s)=[metrics])\n',
    });
    // A token does not open the logs: they stay the apiserver's certificate's.
    expect((await send(agentMetrics.replace('/metrics', '/containerLogs/metrics-node/default/x/main'), { ca, token: 'scraper-token' })).status).toBe(401);
    const byToken = await send(agentMetrics, { ca, token: 'scraper-token' });
    expect(byToken.status).toBe(200);
    expect(sample(byToken.body, 'kubelet_node_name', { node: 'metrics-node' })).toBe(1);
    const byCertificate = await send(agentMetrics, { ca, cert: kubeletClientCredentials(pkiDir) });
    expect(byCertificate.status).toBe(200);
    expect(families(byCertificate.body)).toContain('kubelet_running_pods');
  });

  it('values move on both when a Deployment is rolled out: the replicaset queue, the bindings, the running pods', async () => {
    const ca = ensureClusterCA(pkiDir).cert;
    const controllersBefore = (await send(controllersMetrics, { ca: controllersCA, token: 'scraper-token' })).body;
    const adds = sample(controllersBefore, 'workqueue_adds_total', { name: 'replicaset' }) ?? 0;
    const scheduled = sample(controllersBefore, 'scheduler_schedule_attempts_total', { result: 'scheduled', profile: 'default-scheduler' }) ?? 0;
    expect((await api('POST', '/apis/apps/v1/namespaces/default/deployments', deploymentManifest('remote', 2))).status).toBe(201);
    await waitFor('two pods running on metrics-node', async () => {
      const text = (await send(agentMetrics, { ca, token: 'scraper-token' })).body;
      return (sample(text, 'kubelet_running_pods', { node: 'metrics-node' }) ?? 0) >= 2;
    });
    const controllersAfter = (await send(controllersMetrics, { ca: controllersCA, token: 'scraper-token' })).body;
    expect(sample(controllersAfter, 'workqueue_adds_total', { name: 'replicaset' })).toBeGreaterThan(adds);
    expect(sample(controllersAfter, 'scheduler_schedule_attempts_total', { result: 'scheduled', profile: 'default-scheduler' })).toBeGreaterThanOrEqual(scheduled + 2);
  }, 60_000);
});
