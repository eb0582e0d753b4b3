/**
 * The kubectl commands whose typed clients send Kubernetes protobuf bodies for kinds that
 * logplane once answered with 415 (`kubectl create quota|priorityclass|poddisruptionbudget|
 * cronjob|ingress`, `kubectl autoscale`), run with the real kubectl 1.32 against a TLS
 * cluster on both logs: each succeeds, and the created object in the projection carries
 * the fields the flags set, zeros that are values included (`--value=0`, `--max-unavailable=0`).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { objectKey, type Kind } from '../../schemas/index.ts';
import { LOG_ADAPTERS } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

const NS = 'pb';

describe.each(LOG_ADAPTERS)('kubectl commands that send protobuf bodies, on the %s log', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-kubectl-create');
  const { kubectl } = harness;
  /** Runs kubectl, expecting success with `expected` on stdout; returns the object `kind/name` (in NS if namespaced) from the projection. */
  const created = async (ref: string, expected: string, ...args: string[]): Promise<Record<string, unknown>> => {
    const [kind, name] = ref.split('/') as [Kind, string];
    const key = objectKey({ kind, metadata: { namespace: NS, name } });
    const result = await kubectl(...args);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(expected);
    const object = harness.cluster.projection.view().get(key) as Record<string, unknown> | undefined;
    expect(object, key).toBeDefined();
    return object!;
  };

  beforeAll(async () => {
    const namespace = await kubectl('create', 'namespace', NS);
    expect(namespace.stdout).toContain(`namespace/${NS} created`);
  }, 120_000);

  it('kubectl create quota', async () => {
    const quota = await created('ResourceQuota/compute', 'resourcequota/compute created', 'create', 'quota', 'compute', '-n', NS, '--hard=cpu=1500m,memory=1Gi,pods=4', '--scopes=NotBestEffort');
    expect(quota['spec']).toEqual({ hard: { cpu: '1500m', memory: '1Gi', pods: '4' }, scopes: ['NotBestEffort'] });
  });

  it('kubectl create priorityclass, with a zero value and as the global default', async () => {
    const low = await created('PriorityClass/zero', 'priorityclass.scheduling.k8s.io/zero created', 'create', 'priorityclass', 'zero', '--value=0', '--global-default', '--description=batch work', '--preemption-policy=Never');
    expect(low).toMatchObject({ value: 0, globalDefault: true, description: 'batch work', preemptionPolicy: 'Never' });
    const high = await created('PriorityClass/high', 'priorityclass.scheduling.k8s.io/high created', 'create', 'priorityclass', 'high', '--value=100000');
    expect(high).toMatchObject({ value: 100000, preemptionPolicy: 'PreemptLowerPriority' });
    expect(high['globalDefault']).toBeFalsy();
  });

  it('kubectl create poddisruptionbudget, with min-available and with a zero max-unavailable', async () => {
    const min = await created('PodDisruptionBudget/web-min', 'poddisruptionbudget.policy/web-min created', 'create', 'poddisruptionbudget', 'web-min', '-n', NS, '--selector=app=web', '--min-available=50%');
    expect(min['spec']).toEqual({ minAvailable: '50%', selector: { matchLabels: { app: 'web' } } });
    const max = await created('PodDisruptionBudget/web-max', 'poddisruptionbudget.policy/web-max created', 'create', 'pdb', 'web-max', '-n', NS, '--selector=app=web,tier in (front)', '--max-unavailable=0');
    expect(max['spec']).toEqual({
      maxUnavailable: 0,
      selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['front'] }] },
    });
  });

  it('kubectl create cronjob', async () => {
    const cronJob = await created('CronJob/yearly', 'cronjob.batch/yearly created', 'create', 'cronjob', 'yearly', '-n', NS, '--image=busybox:1.36', '--schedule=0 0 1 1 *', '--restart=Never', '--', 'date', '-u');
    const spec = cronJob['spec'] as { schedule: string; jobTemplate: { metadata: { name: string }; spec: { template: { spec: { restartPolicy: string; containers: { name: string; image: string; command: string[] }[] } } } } };
    expect(spec.schedule).toBe('0 0 1 1 *');
    expect(spec.jobTemplate.metadata.name).toBe('yearly');
    expect(spec.jobTemplate.spec.template.spec.restartPolicy).toBe('Never');
    expect(spec.jobTemplate.spec.template.spec.containers).toMatchObject([{ name: 'yearly', image: 'busybox:1.36', command: ['date', '-u'] }]);
  });

  it('kubectl create ingress, with rules, TLS, a class, a default backend and annotations', async () => {
    const ingress = await created(
      'Ingress/site',
      'ingress.networking.k8s.io/site created',
      'create', 'ingress', 'site', '-n', NS, '--class=nginx', '--default-backend=fallback:80', '--annotation=team=web',
      '--rule=a.example.com/api*=api:8080,tls=a-tls', '--rule=b.example.com/=web:http',
    );
    expect((ingress['metadata'] as { annotations: Record<string, string> }).annotations).toEqual({ team: 'web' });
    expect(ingress['spec']).toEqual({
      ingressClassName: 'nginx',
      defaultBackend: { service: { name: 'fallback', port: { number: 80 } } },
      tls: [{ hosts: ['a.example.com'], secretName: 'a-tls' }],
      rules: [
        { host: 'a.example.com', http: { paths: [{ path: '/api', pathType: 'Prefix', backend: { service: { name: 'api', port: { number: 8080 } } } }] } },
        { host: 'b.example.com', http: { paths: [{ path: '/', pathType: 'Exact', backend: { service: { name: 'web', port: { name: 'http' } } } }] } },
      ],
    });
  });

  it('kubectl autoscale (an autoscaling/v1 body)', async () => {
    await created('Deployment/web', 'deployment.apps/web created', 'create', 'deployment', 'web', '-n', NS, '--image=logplane/sleeper');
    const hpa = await created('HorizontalPodAutoscaler/web', 'horizontalpodautoscaler.autoscaling/web autoscaled', 'autoscale', 'deployment', 'web', '-n', NS, '--min=2', '--max=5', '--cpu-percent=60');
    const spec = hpa['spec'] as Record<string, unknown>;
    expect(spec).toMatchObject({ scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 2, maxReplicas: 5 });
    // Stored as autoscaling/v2: the v1 target utilization became a cpu Resource metric.
    expect(spec['metrics']).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }]);
    const v1 = await kubectl('get', 'horizontalpodautoscalers.v1.autoscaling', 'web', '-n', NS, '-o', 'jsonpath={.spec.targetCPUUtilizationPercentage}');
    expect(v1.stdout).toBe('60');
  });
});
