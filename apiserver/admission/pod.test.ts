/**
 * The Priority, RuntimeClass and StorageObjectInUseProtection admission plugins, and what a
 * Pod or a claim create records (QoS class, data sources), through the real apiserver on the
 * embedded log; and kube's
 * MergeTolerations, table-driven.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../../log/port.ts';
import type { Toleration } from '../../schemas/index.ts';
import { logEnd, openTestLog, startTestApiServer, tempDir, type TestApiServer } from '../testing.ts';
import { mergeTolerations } from './pod.ts';

describe('mergeTolerations (kube tolerations.MergeTolerations)', () => {
  const noSchedule = (key: string, extra: Partial<Toleration> = {}): Toleration => ({ key, operator: 'Exists', effect: 'NoSchedule', ...extra });
  it.each<[string, Toleration[], Toleration[], Toleration[]]>([
    ['disjoint lists are concatenated', [noSchedule('a')], [noSchedule('b')], [noSchedule('a'), noSchedule('b')]],
    ['an equal toleration is kept once', [noSchedule('a')], [noSchedule('a')], [noSchedule('a')]],
    ['Exists covers Equal of the same key', [{ key: 'a', operator: 'Equal', value: 'v', effect: 'NoSchedule' }], [noSchedule('a')], [noSchedule('a')]],
    ['an empty effect covers every effect', [noSchedule('a')], [{ key: 'a', operator: 'Exists' }], [{ key: 'a', operator: 'Exists' }]],
    ['an empty key with Exists covers everything', [noSchedule('a'), noSchedule('b')], [{ operator: 'Exists' }], [{ operator: 'Exists' }]],
    [
      'a NoExecute toleration for longer covers one for shorter',
      [{ key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }],
      [{ key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }],
      [{ key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }],
    ],
    [
      'a NoExecute toleration for a while does not cover one for ever',
      [{ key: 'a', operator: 'Exists', effect: 'NoExecute' }],
      [{ key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }],
      [{ key: 'a', operator: 'Exists', effect: 'NoExecute' }],
    ],
    ['Equal with another value is not covered', [{ key: 'a', operator: 'Equal', value: 'x' }], [{ key: 'a', operator: 'Equal', value: 'y' }], [{ key: 'a', operator: 'Equal', value: 'x' }, { key: 'a', operator: 'Equal', value: 'y' }]],
  ])('%s', (_case, first, second, merged) => {
    expect(mergeTolerations(first, second)).toEqual(merged);
  });
});

type Reply = { status: number; body: any };

describe('pod admission through the apiserver', () => {
  const temp = tempDir('pod-admission-');
  let log: EventLog;
  let api: TestApiServer;
  const pods = '/api/v1/namespaces/default/pods';
  const post = (path: string, body: unknown): Promise<Reply> => api.client.request('POST', path, { body }) as Promise<Reply>;
  const pod = (name: string, spec: Record<string, unknown> = {}, resources?: Record<string, unknown>) => ({
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'nginx:1.27', ...(resources ? { resources } : {}) }], ...spec },
  });
  const created = async (body: unknown, path = pods): Promise<any> => {
    const reply = await post(path, body);
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    return reply.body;
  };
  /** A refused create: its Status, and proof that nothing was appended. */
  const refused = async (body: unknown): Promise<any> => {
    const before = await logEnd(log, 'desired');
    const reply = await post(pods, body);
    expect(await logEnd(log, 'desired')).toBe(before);
    return reply;
  };

  beforeAll(async () => {
    log = await openTestLog('embedded', { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
  });
  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it('records status.qosClass on create, and a later GET and a status write without one keep it', async () => {
    const guaranteed = await created(pod('qos-g', {}, { limits: { cpu: '250m', memory: '64Mi' } }));
    expect(guaranteed.status).toMatchObject({ phase: 'Pending', qosClass: 'Guaranteed' });
    expect(guaranteed.spec.containers[0].resources.requests).toEqual({ cpu: '250m', memory: '64Mi' });
    expect((await created(pod('qos-b', {}, { requests: { cpu: '100m' } }))).status.qosClass).toBe('Burstable');
    expect((await created(pod('qos-be'))).status.qosClass).toBe('BestEffort');
    const read = (await api.client.request('GET', `${pods}/qos-g`)) as Reply;
    expect(read.body.status.qosClass).toBe('Guaranteed');
    const written = (await api.client.request('PUT', `${pods}/qos-g/status`, { body: { metadata: { name: 'qos-g' }, status: { phase: 'Running' } } })) as Reply;
    expect(written.status).toBe(200);
    expect(written.body.status).toMatchObject({ phase: 'Running', qosClass: 'Guaranteed' });
  });

  it('resolves spec.priority and preemptionPolicy from the PriorityClass, the system classes and the default; 0 without one', async () => {
    expect((await created(pod('no-class'))).spec).toMatchObject({ priority: 0, preemptionPolicy: 'PreemptLowerPriority' });
    expect((await created(pod('critical', { priorityClassName: 'system-node-critical' }))).spec.priority).toBe(2000001000);
    expect((await created(pod('cluster-critical', { priorityClassName: 'system-cluster-critical' }))).spec.priority).toBe(2000000000);
    await created({ metadata: { name: 'high' }, value: 1000, preemptionPolicy: 'Never' }, '/apis/scheduling.k8s.io/v1/priorityclasses');
    const high = await created(pod('high', { priorityClassName: 'high' }));
    expect(high.spec).toMatchObject({ priorityClassName: 'high', priority: 1000, preemptionPolicy: 'Never' });
    expect((await created(pod('same-priority', { priorityClassName: 'high', priority: 1000 }))).spec.priority).toBe(1000);
    await created({ metadata: { name: 'everyone' }, value: 7, globalDefault: true }, '/apis/scheduling.k8s.io/v1/priorityclasses');
    const defaulted = await created(pod('defaulted'));
    expect(defaulted.spec).toMatchObject({ priorityClassName: 'everyone', priority: 7, preemptionPolicy: 'PreemptLowerPriority' });
    // A PUT that leaves the resolved fields out keeps them (the plugin's update step).
    const { priority: _p, preemptionPolicy: _pp, ...spec } = high.spec;
    const put = (await api.client.request('PUT', `${pods}/high`, { body: { ...high, spec } })) as Reply;
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.spec).toMatchObject({ priority: 1000, preemptionPolicy: 'Never' });
  });

  it('refuses a pod naming a missing PriorityClass, or setting another priority or preemption policy, as kube (403, nothing appended)', async () => {
    const missing = await refused(pod('missing', { priorityClassName: 'nope' }));
    expect(missing.status).toBe(403);
    expect(missing.body).toMatchObject({ reason: 'Forbidden', message: 'pods "missing" is forbidden: no PriorityClass with name nope was found', details: { name: 'missing', kind: 'pods' } });
    const priority = await refused(pod('own-priority', { priority: 5 }));
    expect(priority.status).toBe(403);
    expect(priority.body.message).toBe(
      'pods "own-priority" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 7 from the given PriorityClass name',
    );
    const policy = await refused(pod('own-policy', { priorityClassName: 'high', preemptionPolicy: 'PreemptLowerPriority' }));
    expect(policy.status).toBe(403);
    expect(policy.body.message).toContain('the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never');
  });

  it('refuses a second globalDefault PriorityClass', async () => {
    const reply = await post('/apis/scheduling.k8s.io/v1/priorityclasses', { metadata: { name: 'another' }, value: 3, globalDefault: true });
    expect(reply.status).toBe(403);
    expect(reply.body.message).toBe('priorityclasses.scheduling.k8s.io "another" is forbidden: PriorityClass everyone is already marked as default. Only one default can exist');
  });

  it('takes overhead, nodeSelector and tolerations from the RuntimeClass, and refuses a missing one or a conflict', async () => {
    await created(
      {
        metadata: { name: 'gvisor' },
        handler: 'runsc',
        overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
        scheduling: { nodeSelector: { sandbox: 'gvisor' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] },
      },
      '/apis/node.k8s.io/v1/runtimeclasses',
    );
    const sandboxed = await created(pod('sandboxed', { runtimeClassName: 'gvisor', nodeSelector: { zone: 'a' }, tolerations: [{ key: 'x', operator: 'Exists' }] }));
    expect(sandboxed.spec.overhead).toEqual({ cpu: '250m', memory: '120Mi' });
    expect(sandboxed.spec.nodeSelector).toEqual({ zone: 'a', sandbox: 'gvisor' });
    expect(sandboxed.spec.tolerations).toEqual([{ key: 'x', operator: 'Exists' }, { key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }]);
    const missing = await refused(pod('no-runtime', { runtimeClassName: 'kata' }));
    expect(missing.status).toBe(403);
    expect(missing.body.message).toBe('pods "no-runtime" is forbidden: pod rejected: RuntimeClass "kata" not found');
    const conflict = await refused(pod('conflict', { runtimeClassName: 'gvisor', nodeSelector: { sandbox: 'none' } }));
    expect(conflict.body.message).toBe('pods "conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; pod.spec.nodeSelector[sandbox] = none');
    const overhead = await refused(pod('own-overhead', { overhead: { cpu: '1' } }));
    expect(overhead.status).toBe(403);
    expect(overhead.body.message).toBe('pods "own-overhead" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
  });

  it('mirrors a claim\'s dataSource into dataSourceRef', async () => {
    const claim = await created(
      {
        metadata: { name: 'restored' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, dataSource: { kind: 'PersistentVolumeClaim', name: 'src' } },
      },
      '/api/v1/namespaces/default/persistentvolumeclaims',
    );
    expect(claim.spec.dataSourceRef).toEqual({ kind: 'PersistentVolumeClaim', name: 'src' });
  });

  it('puts the StorageObjectInUseProtection finalizers on new claims and volumes (once)', async () => {
    const claim = await created(
      { metadata: { name: 'protected', finalizers: ['kubernetes.io/pvc-protection'] }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
      '/api/v1/namespaces/default/persistentvolumeclaims',
    );
    expect(claim.metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
    const volume = await created(
      { metadata: { name: 'pv1', finalizers: ['example.com/x'] }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/pv1' } } },
      '/api/v1/persistentvolumes',
    );
    expect(volume.metadata.finalizers).toEqual(['example.com/x', 'kubernetes.io/pv-protection']);
  });
});
