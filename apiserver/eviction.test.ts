/**
 * The pods/eviction subresource against a real log and projection: the budget's verdicts
 * (allowed and decremented by a status write the fold judges, 429 with kube's message and
 * cause, a budget whose status lags its spec), pods that go without a budget's say
 * (terminal, unready while the budget is met), two budgets (500), dryRun, preconditions,
 * and malformed Evictions (400/422 naming the field, nothing appended); every pod evicted is
 * first marked with kube's DisruptionTarget condition (EvictionByEvictionAPI). Budget statuses
 * are written as the disruption controller would, so the handler is judged alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { describeOnBothLogs, logEnd, openTestLog, podManifest, startTestApiServer, tempDir, type ApiClient, type TestApiServer } from './testing.ts';

const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
const PODS = '/api/v1/namespaces/default/pods';
const VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget.";

const eviction = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' }, ...extra });

const DISRUPTION_TARGET = { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' };

const readyStatus = (ready: boolean, phase = 'Running') => ({
  phase,
  conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2030-01-01T00:00:00Z' }],
});

describeOnBothLogs('pods/eviction', (adapter) => {
  const temp = tempDir('eviction-');
  let log: EventLog;
  let api: TestApiServer;
  let client: ApiClient;
  let app = 0;

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
    client = api.client;
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  const appended = async (): Promise<number> => (await logEnd(log, 'desired')) + (await logEnd(log, 'observed'));

  /** Pods `names` labelled with a fresh app label, reporting `ready`; returns the label. */
  const pods = async (names: readonly string[], ready = true, phase = 'Running'): Promise<string> => {
    const label = `app-${++app}`;
    for (const name of names) {
      expect((await client.request('POST', PODS, { body: podManifest(name, { app: label }) })).status).toBe(201);
      const pod = (await client.request('GET', `${PODS}/${name}`)).body;
      expect((await client.request('PUT', `${PODS}/${name}/status`, { body: { ...pod, status: readyStatus(ready, phase) } })).status).toBe(200);
    }
    return label;
  };

  /** A budget selecting `label`, with the status the disruption controller would report. */
  const budget = async (name: string, label: string, status: Record<string, unknown>, spec: Record<string, unknown> = { minAvailable: 1 }) => {
    const created = await client.request('POST', PDBS, {
      body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec: { selector: { matchLabels: { app: label } }, ...spec } },
    });
    expect(created.status).toBe(201);
    const written = await client.request('PUT', `${PDBS}/${name}/status`, {
      body: { ...created.body, status: { observedGeneration: 1, expectedPods: 2, ...status } },
    });
    expect(written.status).toBe(200);
    return written.body;
  };

  const evict = (name: string, body: unknown = eviction(name), query = '') => client.request('POST', `${PODS}/${name}/eviction${query}`, { body });
  const podExists = async (name: string): Promise<boolean> => (await client.request('GET', `${PODS}/${name}`)).status === 200;

  it('is listed in discovery as pods/eviction, a policy/v1 Eviction kubectl drain finds', async () => {
    const list = await client.request('GET', '/api/v1');
    const resource = list.body.resources.find((r: { name: string }) => r.name === 'pods/eviction');
    expect(resource).toMatchObject({ kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] });
  });

  it('evicts a ready pod the budget allows: disruptionsAllowed decremented, the pod in disruptedPods, then deleted', async () => {
    const label = await pods(['allow-a', 'allow-b']);
    await budget('allow', label, { currentHealthy: 2, desiredHealthy: 1, disruptionsAllowed: 1 });
    const reply = await evict('allow-a');
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ kind: 'Status', status: 'Success' });
    expect(await podExists('allow-a')).toBe(false);
    const pdb = (await client.request('GET', `${PDBS}/allow`)).body;
    expect(pdb.status.disruptionsAllowed).toBe(0);
    expect(Object.keys(pdb.status.disruptedPods)).toEqual(['allow-a']);
    expect(pdb.status.conditions).toEqual([expect.objectContaining({ type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods' })]);

    // The budget has no disruption left: 429 with kube's message and cause, nothing appended.
    const before = await appended();
    const refused = await evict('allow-b');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      reason: 'TooManyRequests',
      message: VIOLATION,
      details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget allow needs 1 healthy pods and has 2 currently' }] },
    });
    expect(await appended()).toBe(before);
    expect(await podExists('allow-b')).toBe(true);
  });

  it('lets exactly one of two concurrent evictions take the last disruption (the fold judges the budget write)', async () => {
    const label = await pods(['race-a', 'race-b', 'race-c']);
    await budget('race', label, { currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1 });
    const replies = await Promise.all([evict('race-a'), evict('race-b')]);
    expect(replies.map((r) => r.status).sort()).toEqual([201, 429]);
    const pdb = (await client.request('GET', `${PDBS}/race`)).body;
    expect(pdb.status.disruptionsAllowed).toBe(0);
    expect(Object.keys(pdb.status.disruptedPods)).toHaveLength(1);
  });

  it('answers 429 "still being processed" while the budget status lags its spec (observedGeneration)', async () => {
    const label = await pods(['lag-a']);
    const pdb = await budget('lag', label, { currentHealthy: 1, desiredHealthy: 0, disruptionsAllowed: 1 });
    expect((await client.request('PUT', `${PDBS}/lag`, { body: { ...pdb, spec: { ...pdb.spec, minAvailable: 0 } } })).status).toBe(200);
    const refused = await evict('lag-a');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('10');
    expect(refused.body.details.causes).toEqual([{ reason: 'DisruptionBudget', message: 'The disruption budget lag is still being processed by the server.' }]);
    expect(await podExists('lag-a')).toBe(true);
  });

  it('deletes a pod no budget selects, after marking it a disruption target (a status write before the delete)', async () => {
    await pods(['free']);
    const before = (await client.request('GET', `${PODS}/free`)).body;
    const listed = (await client.request('GET', PODS)).body.metadata.resourceVersion;
    const watch = await client.watch(`${PODS}?watch=true&fieldSelector=metadata.name%3Dfree&resourceVersion=${listed}`);
    try {
      expect((await evict('free')).status).toBe(201);
      const [marked, deleted] = await watch.take(2);
      if (!marked || !deleted) throw new Error('two watch events expected');
      expect(marked.type).toBe('MODIFIED');
      expect(marked.object.metadata.deletionTimestamp).toBeUndefined();
      expect(marked.object.status.conditions).toEqual([...before.status.conditions, { ...DISRUPTION_TARGET, lastTransitionTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) }]);
      expect(deleted.type).toBe('DELETED');
      expect(deleted.object.status.conditions).toContainEqual(expect.objectContaining(DISRUPTION_TARGET));
    } finally {
      watch.close();
    }
    expect(await podExists('free')).toBe(false);
  });

  it('replaces a DisruptionTarget condition of another reason in place, as podutil.UpdatePodCondition (its transition time kept)', async () => {
    await pods(['marked']);
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'marked-node' }, status: { allocatable: { cpu: '8', memory: '8Gi', pods: '110' }, capacity: { cpu: '8', memory: '8Gi', pods: '110' } } };
    expect((await client.request('POST', '/api/v1/nodes', { body: node })).status).toBe(201);
    const bound = await client.request('POST', `${PODS}/marked/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'marked' }, target: { kind: 'Node', name: 'marked-node' } } });
    expect(bound.status).toBe(201);
    const pod = (await client.request('GET', `${PODS}/marked`)).body;
    const earlier = { type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler', message: 'default-scheduler: preempting', lastTransitionTime: '2030-01-02T00:00:00Z' };
    const conditions = [earlier, ...pod.status.conditions];
    expect((await client.request('PUT', `${PODS}/marked/status`, { body: { ...pod, status: { ...pod.status, conditions } } })).status).toBe(200);
    expect((await evict('marked')).status).toBe(201);
    const terminating = (await client.request('GET', `${PODS}/marked`)).body;
    expect(terminating.metadata.deletionTimestamp).toBeTruthy();
    expect(terminating.status.conditions).toEqual([{ ...DISRUPTION_TARGET, lastTransitionTime: '2030-01-02T00:00:00Z' }, ...pod.status.conditions]);
  });

  it('a resourceVersion precondition the pod has moved past (its status written since) is 409: neither marked nor deleted', async () => {
    await pods(['moved']);
    const pod = (await client.request('GET', `${PODS}/moved`)).body;
    expect((await client.request('PUT', `${PODS}/moved/status`, { body: { ...pod, status: readyStatus(false) } })).status).toBe(200);
    const before = await appended();
    const reply = await evict('moved', eviction('moved', { deleteOptions: { preconditions: { resourceVersion: pod.metadata.resourceVersion } } }));
    expect(reply.status).toBe(409);
    expect(reply.body.message).toContain(`the ResourceVersion in the precondition (${pod.metadata.resourceVersion}) does not match the ResourceVersion in record`);
    expect(await appended()).toBe(before);
    const after = (await client.request('GET', `${PODS}/moved`)).body;
    expect(after.status.conditions.map((c: { type: string }) => c.type)).toEqual(['Ready']);
  });

  it('a resourceVersion precondition naming the pod read is moved to the marked pod, so the delete goes through', async () => {
    await pods(['pinned']);
    const pod = (await client.request('GET', `${PODS}/pinned`)).body;
    expect((await evict('pinned', eviction('pinned', { deleteOptions: { preconditions: { resourceVersion: pod.metadata.resourceVersion } } }))).status).toBe(201);
    expect(await podExists('pinned')).toBe(false);
  });

  it('deletes a terminal pod without consulting its budget', async () => {
    const label = await pods(['done'], false, 'Succeeded');
    await budget('done', label, { currentHealthy: 0, desiredHealthy: 1, disruptionsAllowed: 0 });
    expect((await evict('done')).status).toBe(201);
    expect(await podExists('done')).toBe(false);
    expect((await client.request('GET', `${PDBS}/done`)).body.status.disruptionsAllowed).toBe(0);
  });

  it.each([
    { policy: 'IfHealthyBudget', currentHealthy: 2, desiredHealthy: 2, evicted: true },
    { policy: 'IfHealthyBudget', currentHealthy: 1, desiredHealthy: 2, evicted: false },
    { policy: 'AlwaysAllow', currentHealthy: 1, desiredHealthy: 2, evicted: true },
  ])('an unready pod under $policy with $currentHealthy of $desiredHealthy healthy: evicted=$evicted, no disruption used', async ({ policy, currentHealthy, desiredHealthy, evicted }) => {
    const name = `unready-${policy.toLowerCase()}-${currentHealthy}`;
    const label = await pods([name], false);
    await budget(name, label, { currentHealthy, desiredHealthy, disruptionsAllowed: 0 }, { minAvailable: desiredHealthy, unhealthyPodEvictionPolicy: policy });
    const reply = await evict(name);
    expect(reply.status).toBe(evicted ? 201 : 429);
    expect(await podExists(name)).toBe(!evicted);
    expect((await client.request('GET', `${PDBS}/${name}`)).body.status.disruptedPods).toBeUndefined();
  });

  it('answers 500 when two budgets select the pod, as kube', async () => {
    const label = await pods(['two']);
    await budget('two-a', label, { currentHealthy: 1, desiredHealthy: 0, disruptionsAllowed: 1 });
    await budget('two-b', label, { currentHealthy: 1, desiredHealthy: 0, disruptionsAllowed: 1 });
    const before = await appended();
    const reply = await evict('two');
    expect(reply.status).toBe(500);
    expect(reply.body).toMatchObject({ status: 'Failure', message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.' });
    expect(await appended()).toBe(before);
  });

  it('dryRun (query or deleteOptions) answers as if evicted and changes nothing', async () => {
    const label = await pods(['dry-a', 'dry-b']);
    await budget('dry', label, { currentHealthy: 2, desiredHealthy: 1, disruptionsAllowed: 1 });
    const before = await appended();
    expect((await evict('dry-a', eviction('dry-a'), '?dryRun=All')).status).toBe(201);
    expect((await evict('dry-a', eviction('dry-a', { deleteOptions: { dryRun: ['All'] } }))).status).toBe(201);
    expect(await appended()).toBe(before);
    expect(await podExists('dry-a')).toBe(true);
    expect((await client.request('GET', `${PDBS}/dry`)).body.status.disruptionsAllowed).toBe(1);
  });

  it('honours deleteOptions preconditions: a uid of another pod is 409 and takes no disruption', async () => {
    const label = await pods(['pre-a']);
    await budget('pre', label, { currentHealthy: 1, desiredHealthy: 0, disruptionsAllowed: 1 }, { maxUnavailable: 1 });
    const reply = await evict('pre-a', eviction('pre-a', { deleteOptions: { preconditions: { uid: 'not-the-uid' } } }));
    expect(reply.status).toBe(409);
    expect(await podExists('pre-a')).toBe(true);
  });

  it('honours deleteOptions.gracePeriodSeconds: a pod on a node terminates with that grace period', async () => {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'evict-node' }, status: { allocatable: { cpu: '8', memory: '8Gi', pods: '110' }, capacity: { cpu: '8', memory: '8Gi', pods: '110' } } };
    expect((await client.request('POST', '/api/v1/nodes', { body: node })).status).toBe(201);
    await pods(['graceful']);
    const bound = await client.request('POST', `${PODS}/graceful/binding`, { body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'graceful' }, target: { kind: 'Node', name: 'evict-node' } } });
    expect(bound.status).toBe(201);
    expect((await evict('graceful', eviction('graceful', { deleteOptions: { gracePeriodSeconds: 7 } }))).status).toBe(201);
    const pod = (await client.request('GET', `${PODS}/graceful`)).body;
    expect(pod.metadata.deletionTimestamp).toBeTruthy();
    expect(pod.metadata.deletionGracePeriodSeconds).toBe(7);
    expect(pod.status.conditions).toContainEqual(expect.objectContaining(DISRUPTION_TARGET));
  });

  it('answers 404 for a pod that does not exist', async () => {
    const reply = await evict('missing');
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ reason: 'NotFound', message: 'pods "missing" not found' });
  });

  describe('malformed Evictions get 400/422 naming the field and append nothing', () => {
    it.each([
      { body: [1, 2], status: 400, message: 'an Eviction must be a JSON object' },
      { body: { ...eviction('bad'), kind: 'Pod' }, status: 400, message: 'kind: Invalid value: "Pod": not a Eviction object' },
      { body: { ...eviction('bad'), apiVersion: 'v1' }, status: 400, message: 'apiVersion: Unsupported value: "v1"' },
      { body: eviction('other'), status: 400, message: 'name in URL does not match name in Eviction object' },
      { body: eviction('bad', { deleteOptions: 'now' }), status: 400, message: 'deleteOptions: Invalid value' },
      { body: eviction('bad', { deleteOptions: { gracePeriodSeconds: 'soon' } }), status: 400, message: 'deleteOptions.gracePeriodSeconds: Invalid value: "soon"' },
      { body: eviction('bad', { deleteOptions: { preconditions: { uid: 7 } } }), status: 400, message: 'deleteOptions.preconditions.uid: Invalid value: 7' },
      { body: eviction('bad', { deleteOptions: { dryRun: ['Some'] } }), status: 422, message: 'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value' },
      { body: eviction('bad', { deleteOptions: { propagationPolicy: 'Sideways' } }), status: 422, message: 'propagationPolicy: Unsupported value: "Sideways"' },
    ])('$message', async ({ body, status, message }) => {
      if (!(await podExists('bad'))) await pods(['bad']);
      const before = await appended();
      const reply = await evict('bad', body);
      expect(reply.status).toBe(status);
      expect(reply.body.message).toContain(message);
      expect(await appended()).toBe(before);
      expect(await podExists('bad')).toBe(true);
    });

    it('a dryRun in the query that differs from the body is 400', async () => {
      const reply = await evict('bad', eviction('bad', { deleteOptions: { dryRun: ['All'] } }), '?dryRun=All&dryRun=All');
      expect(reply.status).toBe(400);
      expect(reply.body.message).toBe('Non-matching dry-run options in request and content: [All All] and [All]');
    });
  });

  it('accepts a policy/v1beta1 Eviction', async () => {
    await pods(['beta']);
    expect((await evict('beta', { ...eviction('beta'), apiVersion: 'policy/v1beta1' })).status).toBe(201);
    expect(await podExists('beta')).toBe(false);
  });
});
