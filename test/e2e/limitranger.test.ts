/**
 * LimitRanger and ResourceQuota through the HTTP API with the real kubectl, on both logs: a
 * LimitRange defaults a pod's container resources (and its QoS class), a pod over its max gets
 * kube's 403, and an invalid LimitRange kube's 422; `kubectl create quota` limits the pods of
 * a namespace (a create over it gets kube's "exceeded quota" 403), the resourcequota
 * controller's usage shows in `kubectl describe quota` and follows a deletion; a replay of the
 * log from offset 0 gives the live state hash.
 */
import { describe, expect, it } from 'vitest';
import { LIMIT_RANGER_ANNOTATION } from '../../apiserver/admission/limit-ranger.ts';
import type { Pod, ResourceQuota } from '../../schemas/index.ts';
import { LOG_ADAPTERS, replayToLive } from './helpers.ts';
import { useKubectlApiServer } from './kubectl-harness.ts';
import { waitFor } from './process.ts';

describe.each(LOG_ADAPTERS)('LimitRanger and ResourceQuota through the HTTP API with kubectl on the %s log', (adapter) => {
  const harness = useKubectlApiServer(adapter, 'limitranger', { namespaceController: false, controllers: ['resourcequota'] });
  const { kubectl, ok, file } = harness;

  it('defaults a pod, refuses one over the max with kube’s 403, and refuses an invalid LimitRange', async () => {
    const range = `apiVersion: v1
kind: LimitRange
metadata:
  name: cpu-limits
spec:
  limits:
  - type: Container
    max:
      cpu: 500m
    default:
      cpu: 300m
    defaultRequest:
      cpu: 100m
`;
    expect(await ok('apply', '-f', file('range.yaml', range))).toBe('limitrange/cpu-limits created\n');
    expect(await ok('run', 'defaulted', '--image=logplane/echo:1', '--restart=Never')).toBe('pod/defaulted created\n');
    const created = JSON.parse(await ok('get', 'pod', 'defaulted', '-o', 'json')) as Pod;
    expect(created.spec.containers[0]!.resources).toEqual({ limits: { cpu: '300m' }, requests: { cpu: '100m' } });
    expect(created.metadata.annotations?.[LIMIT_RANGER_ANNOTATION]).toBe('LimitRanger plugin set: cpu request for container defaulted; cpu limit for container defaulted');
    expect(created.status?.qosClass).toBe('Burstable');

    const big = `apiVersion: v1
kind: Pod
metadata:
  name: big
spec:
  containers:
  - name: web
    image: logplane/echo:1
    resources:
      limits:
        cpu: "1"
`;
    const refused = await kubectl('apply', '-f', file('big.yaml', big));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('Error from server (Forbidden): error when creating');
    expect(refused.stderr).toContain('pods "big" is forbidden: maximum cpu usage per Container is 500m, but limit is 1');

    const invalid = range.replace('name: cpu-limits', 'name: bad').replace('cpu: 300m', 'cpu: 800m');
    const rejected = await kubectl('apply', '-f', file('bad.yaml', invalid));
    expect(rejected.code).not.toBe(0);
    expect(rejected.stderr).toContain('LimitRange "bad" is invalid: spec.limits[0].default[cpu]: Invalid value: "500m": default value 800m is greater than max value 500m');
  });

  it('limits the pods of a namespace with kubectl create quota; describe quota shows the usage the controller counts', async () => {
    expect(await ok('create', 'namespace', 'team')).toBe('namespace/team created\n');
    expect(await ok('create', 'quota', 'pods', '--hard=pods=2,requests.cpu=1', '-n', 'team')).toBe('resourcequota/pods created\n');
    // kubectl run has no --requests any more (1.24): each pod is a manifest of 200m.
    const pod = (name: string): string => file(`${name}.yaml`, `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: team
spec:
  containers:
  - name: web
    image: logplane/echo:1
    resources:
      requests:
        cpu: 200m
`);
    for (const name of ['a', 'b']) expect(await ok('apply', '-f', pod(name))).toBe(`pod/${name} created\n`);
    const over = await kubectl('apply', '-f', pod('c'));
    expect(over.code).not.toBe(0);
    expect(over.stderr).toContain('pods "c" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2');
    const used = async (): Promise<Record<string, string> | undefined> =>
      (JSON.parse(await ok('get', 'quota', 'pods', '-n', 'team', '-o', 'json')) as ResourceQuota).status?.used;
    await waitFor('the quota counts both pods', async () => (await used())?.['pods'] === '2' && (await used())?.['requests.cpu'] === '400m', { timeoutMs: 30_000, intervalMs: 200 });
    expect(await ok('describe', 'quota', 'pods', '-n', 'team')).toMatch(/pods\s+2\s+2\n\s*requests\.cpu\s+400m\s+1/);
    expect(await ok('delete', 'pod', 'a', '-n', 'team', '--wait=false')).toBe('pod "a" deleted\n');
    await waitFor('the quota counts one pod', async () => (await used())?.['pods'] === '1', { timeoutMs: 30_000, intervalMs: 200 });
    expect(await ok('apply', '-f', pod('c'))).toBe('pod/c created\n');
  });

  it('replays the log from offset 0 into the live state hash', async () => {
    const replay = await replayToLive({ log: harness.log, projection: harness.api.projection });
    expect(replay.liveHash).toBeDefined();
    expect(replay.replayHash).toBe(replay.liveHash);
  });
});
