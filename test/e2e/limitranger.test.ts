/**
 * LimitRanger through the HTTP API with the real kubectl: a LimitRange defaults a pod's
 * container resources (and its QoS class), a pod over its max gets kube's 403, and an invalid
 * LimitRange kube's 422.
 */
import { describe, expect, it } from 'vitest';
import { LIMIT_RANGER_ANNOTATION } from '../../apiserver/admission/limit-ranger.ts';
import type { Pod } from '../../schemas/index.ts';
import { useKubectlApiServer } from './kubectl-harness.ts';

describe('LimitRanger through the HTTP API with kubectl', () => {
  const { kubectl, ok, file } = useKubectlApiServer('embedded', 'limitranger', { namespaceController: false });

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
});
