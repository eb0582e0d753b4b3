/**
 * ResourceQuota admission in the fold: kube's evaluators (table-driven, cases after
 * `pkg/quota/v1/evaluator/core/pods_test.go`), the fold's verdicts on v7 creates (fold
 * alone), that pre-v7 creates are never judged, and on both real logs with 1 and 3
 * partitions: verdicts, a race of concurrent writers that never exceeds the quota, and a
 * replay from offset 0 giving the live state hash.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { partitionKeyOf } from '../log/partitioner.ts';
import type { EventLog } from '../log/port.ts';
import { encodeEvent, type EventBody, type EventEnvelope, type KubeObject, type Pod, type ResourceQuota } from '../schemas/index.ts';
import { foldEvent, type Verdict } from './fold.ts';
import { objectCreated } from './node-admission.ts';
import { createProjection } from './projection.ts';
import { isQuotaTerminated } from './quota-admission.ts';
import { isBestEffort, listToRecord, matchingResources, podConstraintViolation, podMatchesScope, podQuotaUsage, quotaUsage } from './quota-evaluators.ts';
import { replayLog } from './replay.ts';
import { LOG_ADAPTERS, makeEvent, memoryFoldState, openTestLog, type LogAdapter } from './testing.ts';

const NS = 'team';

type Resources = { requests?: Record<string, string>; limits?: Record<string, string> };
const pod = (name: string, containers: Resources[] = [{}], extra: Partial<NonNullable<Pod['spec']>> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS },
  spec: { ...extra, containers: containers.map((resources, i) => ({ name: `c${i}`, image: 'logplane/echo', resources })) },
});
const quota = (name: string, hard: Record<string, string>, spec: Partial<NonNullable<ResourceQuota['spec']>> = {}): ResourceQuota => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name, namespace: NS },
  spec: { ...spec, hard },
});
const namespace = (): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });

describe("kube's pod evaluator", () => {
  it.each([
    { name: 'init container larger than the containers', pod: pod('a', [{ requests: { cpu: '1m' }, limits: { cpu: '2m' } }], { initContainers: [{ name: 'init', image: 'x', resources: { requests: { cpu: '2m' }, limits: { cpu: '3m' } } }] }), usage: { 'count/pods': '1', cpu: '2m', 'limits.cpu': '3m', pods: '1', 'requests.cpu': '2m' } },
    { name: 'containers summed', pod: pod('a', [{ requests: { memory: '1Mi' } }, { requests: { memory: '1Mi' }, limits: { memory: '2Mi' } }]), usage: { 'count/pods': '1', 'limits.memory': '2Mi', memory: '2Mi', pods: '1', 'requests.memory': '2Mi' } },
    { name: 'ephemeral storage', pod: pod('a', [{ requests: { 'ephemeral-storage': '32Mi' }, limits: { 'ephemeral-storage': '64Mi' } }]), usage: { 'count/pods': '1', 'ephemeral-storage': '32Mi', 'limits.ephemeral-storage': '64Mi', pods: '1', 'requests.ephemeral-storage': '32Mi' } },
    { name: 'hugepages and extended resources', pod: pod('a', [{ requests: { 'hugepages-2Mi': '100Mi', 'example.com/dongle': '3' }, limits: { 'hugepages-2Mi': '100Mi', 'example.com/dongle': '3' } }]), usage: { 'count/pods': '1', 'hugepages-2Mi': '100Mi', pods: '1', 'requests.example.com/dongle': '3', 'requests.hugepages-2Mi': '100Mi' } },
    { name: 'sidecar init container added to the containers', pod: pod('a', [{ requests: { cpu: '500m' } }], { initContainers: [{ name: 'side', image: 'x', restartPolicy: 'Always', resources: { requests: { cpu: '1' } } }] }), usage: { 'count/pods': '1', cpu: '1500m', pods: '1', 'requests.cpu': '1500m' } },
    { name: 'pod overhead', pod: pod('a', [{ requests: { cpu: '1' }, limits: { cpu: '2' } }], { overhead: { cpu: '250m' } }), usage: { 'count/pods': '1', cpu: '1250m', 'limits.cpu': '2250m', pods: '1', 'requests.cpu': '1250m' } },
  ])('usage: $name', ({ pod: p, usage }) => {
    expect(listToRecord(podQuotaUsage(p, false))).toEqual(usage);
  });

  it('a terminal pod uses only count/pods', () => {
    expect(listToRecord(podQuotaUsage(pod('a', [{ requests: { cpu: '1' } }]), true))).toEqual({ 'count/pods': '1' });
  });

  it.each([
    { required: ['cpu'], pod: pod('a', [{ requests: { cpu: '1' } }]), message: undefined },
    { required: ['limits.cpu', 'limits.memory'], pod: pod('a', [{ limits: { cpu: '1' } }, {}]), message: 'must specify limits.cpu for: c1; limits.memory for: c0,c1' },
    { required: ['requests.memory'], pod: pod('a', [{ limits: { memory: '1Gi' } }]), message: 'must specify requests.memory for: c0' },
    { required: ['pods', 'requests.ephemeral-storage'], pod: pod('a'), message: undefined },
  ])('constraints: $required on a pod → $message', ({ required, pod: p, message }) => {
    expect(podConstraintViolation(required, p)).toBe(message);
  });

  it.each([
    { scope: { scopeName: 'BestEffort', operator: 'Exists', values: [] }, pod: pod('a'), matches: true },
    { scope: { scopeName: 'NotBestEffort', operator: 'Exists', values: [] }, pod: pod('a'), matches: false },
    { scope: { scopeName: 'Terminating', operator: 'Exists', values: [] }, pod: pod('a', [{}], { activeDeadlineSeconds: 60 }), matches: true },
    { scope: { scopeName: 'NotTerminating', operator: 'Exists', values: [] }, pod: pod('a', [{}], { activeDeadlineSeconds: 60 }), matches: false },
    { scope: { scopeName: 'PriorityClass', operator: 'In', values: ['high'] }, pod: pod('a', [{}], { priorityClassName: 'high' }), matches: true },
    { scope: { scopeName: 'PriorityClass', operator: 'NotIn', values: ['high'] }, pod: pod('a', [{}], { priorityClassName: 'high' }), matches: false },
    { scope: { scopeName: 'PriorityClass', operator: 'DoesNotExist', values: [] }, pod: pod('a'), matches: true },
    { scope: { scopeName: 'PriorityClass', operator: 'Exists', values: [] }, pod: pod('a'), matches: false },
  ])('scope $scope.scopeName $scope.operator $scope.values → $matches', ({ scope, pod: p, matches }) => {
    expect(podMatchesScope(scope, p)).toBe(matches);
  });

  it('BestEffort looks at cpu and memory only', () => {
    expect(isBestEffort(pod('a', [{ requests: { 'ephemeral-storage': '1Gi' } }]))).toBe(true);
    expect(isBestEffort(pod('a', [{ limits: { memory: '1Gi' } }]))).toBe(false);
  });

  it('matching resources: pods see compute, extended and their count; other kinds their counts', () => {
    expect(matchingResources('Pod', ['pods', 'requests.cpu', 'services', 'requests.example.com/gpu', 'example.com/gpu', 'requests.hugepages-1Gi'])).toEqual(['pods', 'requests.cpu', 'requests.example.com/gpu', 'requests.hugepages-1Gi']);
    expect(matchingResources('ConfigMap', ['configmaps', 'count/configmaps', 'pods'])).toEqual(['configmaps', 'count/configmaps']);
    expect(matchingResources('Deployment', ['count/deployments.apps', 'count/deployments'])).toEqual(['count/deployments.apps']);
  });

  it('services and claims: node ports, load balancers, storage per class', () => {
    expect(listToRecord(quotaUsage({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: NS }, spec: { type: 'NodePort', ports: [{ port: 80 }, { port: 443 }] } }))).toEqual({ 'count/services': '1', services: '1', 'services.nodeports': '2' });
    expect(listToRecord(quotaUsage({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c', namespace: NS }, spec: { storageClassName: 'fast', resources: { requests: { storage: '10Gi' } } } }))).toEqual({
      'count/persistentvolumeclaims': '1',
      'fast.storageclass.storage.k8s.io/persistentvolumeclaims': '1',
      'fast.storageclass.storage.k8s.io/requests.storage': '10Gi',
      persistentvolumeclaims: '1',
      'requests.storage': '10Gi',
    });
  });
});

/** The fold alone: writes bodies in order and returns each verdict. */
const foldAlone = () => {
  const state = memoryFoldState(1);
  let offset = 0;
  const write = (body: EventBody, key?: string): Verdict => {
    const object = body.type === 'ObjectCreated' || body.type === 'ObjectUpdated' ? body.object : undefined;
    const eventKey = key ?? `${object?.kind}/${object?.metadata.namespace ?? ''}/${object?.metadata.name}`;
    return foldEvent(state, makeEvent(eventKey, structuredClone(body)), 'desired', offset++).verdict;
  };
  write(objectCreated(namespace()), `Namespace//${NS}`);
  return { state, write };
};
const accepted: Verdict = { type: 'accepted' };
const forbidden = (message: string): Verdict => ({ type: 'rejected', reason: 'Forbidden', message });

describe('the fold judges v7 creates against the namespace’s quotas', () => {
  it('refuses the create that would exceed a quota, with kube’s message, and keeps nothing of it', () => {
    const { state, write } = foldAlone();
    expect(write(objectCreated(quota('compute', { 'requests.cpu': '1', pods: '5' })))).toEqual(accepted);
    expect(write(objectCreated(pod('a', [{ requests: { cpu: '600m' } }])))).toEqual(accepted);
    const before = state.contents();
    expect(write(objectCreated(pod('b', [{ requests: { cpu: '500m' } }])))).toEqual(
      forbidden('pods "b" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1'),
    );
    expect(state.contents()).toEqual(before);
    expect(write(objectCreated(pod('c', [{ requests: { cpu: '400m' } }])))).toEqual(accepted);
  });

  it('refuses a pod that does not set a resource its quota limits (“must specify”)', () => {
    const { write } = foldAlone();
    write(objectCreated(quota('q', { 'limits.cpu': '2', 'limits.memory': '1Gi' })));
    expect(write(objectCreated(pod('a', [{ requests: { cpu: '1' } }])))).toEqual(forbidden('pods "a" is forbidden: failed quota: q: must specify limits.cpu for: c0; limits.memory for: c0'));
  });

  it('counts pods, and gives a deleted pod’s share back', () => {
    const { write } = foldAlone();
    write(objectCreated(quota('count', { pods: '1' })));
    expect(write(objectCreated(pod('a')))).toEqual(accepted);
    expect(write(objectCreated(pod('b')))).toEqual(forbidden('pods "b" is forbidden: exceeded quota: count, requested: pods=1, used: pods=1, limited: pods=1'));
    expect(write({ type: 'ObjectDeleted', kind: 'Pod', namespace: NS, name: 'a', uid: null, expectedResourceVersion: null, propagationPolicy: null, gracePeriodSeconds: null }, `Pod/${NS}/a`)).toEqual(accepted);
    expect(write(objectCreated(pod('b')))).toEqual(accepted);
  });

  it('a terminated pod’s compute goes back (quotaRelease), its count/pods stays', () => {
    const { state, write } = foldAlone();
    write(objectCreated(quota('q', { 'requests.cpu': '1', 'count/pods': '2' })));
    write(objectCreated(pod('a', [{ requests: { cpu: '1' } }])));
    expect(write(objectCreated(pod('b', [{ requests: { cpu: '1' } }])))).toMatchObject({ type: 'rejected', reason: 'Forbidden' });
    const a = state.getDesired(`Pod/${NS}/a`)!.object;
    expect(write({ type: 'ObjectUpdated', object: a, expectedResourceVersion: null, subresource: null, quotaRelease: 'Terminated' })).toEqual(accepted);
    expect(isQuotaTerminated(state.getAllocation, `Pod/${NS}/a`, a.metadata.uid)).toBe(true);
    expect(write(objectCreated(pod('b', [{ requests: { cpu: '1' } }])))).toEqual(accepted);
    expect(write(objectCreated(pod('c', [{ requests: { cpu: '0' } }])))).toEqual(forbidden('pods "c" is forbidden: exceeded quota: q, requested: count/pods=1, used: count/pods=2, limited: count/pods=2'));
    expect(write({ type: 'ObjectUpdated', object: { ...a, metadata: { ...a.metadata, uid: 'other' } }, expectedResourceVersion: null, subresource: null, quotaRelease: 'Terminated' })).toMatchObject({ type: 'rejected', reason: 'NotFound' });
  });

  it('scoped quotas judge only the pods in scope; object counts limit quotas themselves', () => {
    const { write } = foldAlone();
    write(objectCreated(quota('best-effort', { pods: '1' }, { scopes: ['BestEffort'] })));
    expect(write(objectCreated(pod('a')))).toEqual(accepted);
    expect(write(objectCreated(pod('b', [{ requests: { cpu: '1' } }])))).toEqual(accepted);
    expect(write(objectCreated(pod('c')))).toMatchObject({ type: 'rejected', reason: 'Forbidden' });
    write(objectCreated(quota('quotas', { resourcequotas: '2' })));
    expect(write(objectCreated(quota('third', { pods: '9' })))).toEqual(forbidden('resourcequotas "third" is forbidden: exceeded quota: quotas, requested: resourcequotas=1, used: resourcequotas=2, limited: resourcequotas=2'));
  });

  it('a create without quotaAdmission (every log before v7) is never judged, and writes nothing new', () => {
    const { state, write } = foldAlone();
    write(objectCreated(quota('count', { pods: '0' })));
    expect(write({ type: 'ObjectCreated', object: pod('old') })).toEqual(accepted);
    expect(Object.keys(state.contents().allocations)).toEqual([]);
    expect(write(objectCreated(pod('new')))).toMatchObject({ type: 'rejected', reason: 'Forbidden' });
  });
});

// ---------------------------------------------------------------------------- real logs

const opened: { close: () => Promise<void> }[] = [];
const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-quota-'));
  dirs.push(dir);
  return dir;
};
afterEach(async () => {
  for (const resource of opened.splice(0).reverse()) await resource.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const append = async (log: EventLog, events: readonly EventEnvelope[]) =>
  log.append('desired', events.map((event) => ({ key: partitionKeyOf(event.key), value: encodeEvent(event), timestamp: event.time })));
const keyOf = (object: KubeObject): string => `${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
const created = (object: KubeObject): EventEnvelope => makeEvent(keyOf(object), objectCreated(object));

describe.each(LOG_ADAPTERS.flatMap((adapter) => [1, 3].map((partitions) => [adapter, partitions] as const)))(
  'on the %s log with %i partition(s)',
  (adapter: LogAdapter, partitions: number) => {
    let log: EventLog;
    beforeAll(async () => {
      // Kafka: the first consumer group of a fresh cluster waits for the coordinator; paid once here.
      log = await openTestLog(adapter, { dir: tempDir(), partitions });
    }, 300_000);

    it('concurrent creates never exceed the quota; every projection and a replay agree', async () => {
      const projection = createProjection({ dir: tempDir(), log });
      opened.push(projection, log);
      const [ns, q] = [created(namespace()), created(quota('compute', { 'requests.cpu': '2', pods: '10' }))];
      const first = await append(log, [ns!, q!]);
      await projection.waitForEvent('desired', first[1]!.partition, first[1]!.offset, q!.id, 290_000);
      // 12 writers at once, each creating a pod of 300m: at most 6 fit in 2 cpu.
      const pods = Array.from({ length: 12 }, (_, i) => created(pod(`p${i}`, [{ requests: { cpu: '300m' } }])));
      const positions = await Promise.all(pods.map((event) => append(log, [event])));
      const verdicts = await Promise.all(
        positions.map(async ([position], i) => (await projection.waitForEvent('desired', position!.partition, position!.offset, pods[i]!.id, 290_000)).verdict),
      );
      expect(verdicts.filter((v) => v.type === 'accepted')).toHaveLength(6);
      for (const verdict of verdicts.filter((v) => v.type === 'rejected')) {
        expect(verdict).toMatchObject({ reason: 'Forbidden', message: expect.stringMatching(/exceeded quota: compute, requested: requests.cpu=300m, used: requests.cpu=1800m, limited: requests.cpu=2$/) });
      }
      const end = { desired: await log.endOffsets('desired'), observed: await log.endOffsets('observed') };
      await projection.waitFor(end);
      const replayed = await replayLog({ log, dir: tempDir() });
      expect(replayed.stateHash).toBe(projection.stateHash());
    }, 300_000);
  },
);
