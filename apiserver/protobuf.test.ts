import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.ts';
import { decodeKubernetesProtobuf, encodeKubernetesProtobuf } from './protobuf.ts';

/** The body kubectl v1.32 sent for `kubectl create deployment capture2 --image=nginx:1.27 --replicas=3 --port=8080`. */
const KUBECTL_CREATE_DEPLOYMENT = [
  '6b387300 0a150a07 61707073 2f763112 0a446570 6c6f796d 656e7412 d2010a29',
  '0a086361 70747572 65321200 1a002200 2a003200 38004200 5a0f0a03 61707012',
  '08636170 74757265 32129601 08031211 0a0f0a03 61707012 08636170 74757265',
  '321a770a 210a0012 001a0022 002a0032 00380042 005a0f0a 03617070 12086361',
  '70747572 65321252 12340a05 6e67696e 78120a6e 67696e78 3a312e32 372a0032',
  '0b0a0010 0018903f 22002a00 42006a00 72008001 00880100 900100a2 01001a00',
  '32004200 4a005200 58006000 68008201 008a0100 9a0100c2 01002202 0a002800',
  '38001a0c 08001000 18002000 28003800 1a002200',
].join('').replace(/ /g, '');

/**
 * The bodies kubectl v1.32 sent (captured with `-v=8`) for `kubectl create priorityclass cap1
 * --value=0 --description=d`, `create quota capq --hard=cpu=500m,pods=3 --scopes=NotTerminating`,
 * `create poddisruptionbudget cappdb --selector=app=web --max-unavailable=0`, `create cronjob capcj
 * --image=busybox --schedule='0 * * * *'`, `create ingress caping --rule='a.io/x*=svc:80,tls=sec'`
 * and `autoscale deployment d1 --name=caphpa --max=4 --cpu-percent=70`.
 */
const KUBECTL_BODIES = {
  priorityclass: [
    '6b3873000a250a147363686564756c696e672e6b38732e696f2f7631120d5072696f72697479436c61737312330a140a',
    '046361703112001a0022002a00320038004200100018002201642a14507265656d70744c6f7765725072696f72697479',
    '1a002200',
  ].join(''),
  quota: [
    '6b3873000a130a027631120d5265736f7572636551756f746112460a140a046361707112001a0022002a003200380042',
    '00122c0a0d0a0363707512060a043530306d0a0b0a04706f647312030a0133120e4e6f745465726d696e6174696e671a',
    '001a002200',
  ].join(''),
  poddisruptionbudget: [
    '6b3873000a200a09706f6c6963792f76311213506f6444697372757074696f6e427564676574123c0a160a0663617070',
    '646212001a0022002a003200380042001216120c0a0a0a0361707012037765621a06080010001a001a0a080018002000',
    '280030001a002200',
  ].join(''),
  cronjob: [
    '6b3873000a130a0862617463682f7631120743726f6e4a6f6212a5010a150a05636170636a12001a0022002a00320038',
    '0042001289010a0930202a202a202a202a1a002a7a0a150a05636170636a12001a0022002a003200380042001261325f',
    '0a100a0012001a0022002a00320038004200124b12240a05636170636a120762757379626f782a0042006a0072008001',
    '00880100900100a201001a094f6e4661696c757265320042004a0052005800600068008201008a01009a0100c201001a',
    '001a002200',
  ].join(''),
  ingress: [
    '6b3873000a1f0a146e6574776f726b696e672e6b38732e696f2f76311207496e677265737312540a160a06636170696e',
    '6712001a0022002a003200380042001236120b0a04612e696f12037365631a270a04612e696f121f0a1d0a1b0a022f78',
    '120d220b0a0373766312040a0010501a065072656669781a020a001a002200',
  ].join(''),
  autoscale: [
    '6b3873000a290a0e6175746f7363616c696e672f76311217486f72697a6f6e74616c506f644175746f7363616c657212',
    '3f0a160a0663617068706112001a0022002a00320038004200121f0a190a0a4465706c6f796d656e74120264311a0761',
    '7070732f7631180420461a04180020001a002200',
  ].join(''),
};

describe('decodeKubernetesProtobuf', () => {
  it('reads what kubectl create deployment sends, dropping zero scalars like JSON omitempty', () => {
    expect(decodeKubernetesProtobuf(Buffer.from(KUBECTL_CREATE_DEPLOYMENT, 'hex'))).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'capture2', labels: { app: 'capture2' } },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'capture2' } },
        template: {
          metadata: { labels: { app: 'capture2' } },
          spec: { containers: [{ name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 8080 }], resources: {} }] },
        },
        strategy: {},
      },
      status: {},
    });
  });

  it('round-trips objects with maps, int-or-strings, quantities, times and inlined probe handlers', () => {
    const pod = {
      metadata: { name: 'p', namespace: 'ns', creationTimestamp: '2026-01-01T00:00:00Z', annotations: { a: 'b' } },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'busybox',
            command: ['sh', '-c', 'sleep 1'],
            env: [{ name: 'A', value: '1' }],
            resources: { requests: { cpu: '100m', memory: '64Mi' } },
            livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5 },
            readinessProbe: { tcpSocket: { port: 8080 } },
          },
        ],
        terminationGracePeriodSeconds: 0,
        tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }],
      },
      status: { phase: 'Running', containerStatuses: [{ name: 'c', image: 'busybox', ready: false, restartCount: 0 }] },
    };
    expect(decodeKubernetesProtobuf(encodeKubernetesProtobuf('v1', 'Pod', pod))).toEqual({ apiVersion: 'v1', kind: 'Pod', ...pod });
  });

  it('keeps zero where it is a value (replicas: 0) and names fields logplane does not model', () => {
    const decoded = decodeKubernetesProtobuf(
      encodeKubernetesProtobuf('apps/v1', 'Deployment', {
        metadata: { name: 'd' },
        spec: { replicas: 0, template: { spec: { containers: [{ name: 'c' }], volumes: [{}] } } },
      }),
    ) as { spec: { replicas: number; template: { spec: Record<string, unknown> } } };
    expect(decoded.spec.replicas).toBe(0);
    expect(decoded.spec.template.spec['volumes']).toEqual([{ '(protobuf)': '2 bytes' }]);
  });

  it('decodes DeleteOptions with a zero grace period', () => {
    expect(decodeKubernetesProtobuf(encodeKubernetesProtobuf('v1', 'DeleteOptions', { gracePeriodSeconds: 0, propagationPolicy: 'Foreground' }))).toEqual({
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: 0,
      propagationPolicy: 'Foreground',
    });
  });

  it.each([
    ['priorityclass', { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'cap1' }, value: 0, description: 'd', preemptionPolicy: 'PreemptLowerPriority' }],
    [
      'quota',
      { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'capq' }, spec: { hard: { cpu: '500m', pods: '3' }, scopes: ['NotTerminating'] }, status: {} },
    ],
    [
      'poddisruptionbudget',
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'cappdb' },
        spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 0 },
        status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 },
      },
    ],
    [
      'cronjob',
      {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'capcj' },
        spec: {
          schedule: '0 * * * *',
          jobTemplate: {
            metadata: { name: 'capcj' },
            spec: { template: { metadata: {}, spec: { containers: [{ name: 'capcj', image: 'busybox', resources: {} }], restartPolicy: 'OnFailure' } } },
          },
        },
        status: {},
      },
    ],
    [
      'ingress',
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'caping' },
        spec: {
          tls: [{ hosts: ['a.io'], secretName: 'sec' }],
          rules: [{ host: 'a.io', http: { paths: [{ path: '/x', pathType: 'Prefix', backend: { service: { name: 'svc', port: { number: 80 } } } }] } }],
        },
        status: { loadBalancer: {} },
      },
    ],
    [
      'autoscale',
      {
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'caphpa' },
        spec: { scaleTargetRef: { kind: 'Deployment', name: 'd1', apiVersion: 'apps/v1' }, maxReplicas: 4, targetCPUUtilizationPercentage: 70 },
        status: { currentReplicas: 0, desiredReplicas: 0 },
      },
    ],
  ] as const)('reads what kubectl %s sends, keeping zeros that are values (value: 0, maxUnavailable: 0)', (command, expected) => {
    expect(decodeKubernetesProtobuf(Buffer.from(KUBECTL_BODIES[command], 'hex'))).toEqual(expected);
  });

  it.each([
    [
      'v1',
      'ResourceQuota',
      {
        metadata: { name: 'q', namespace: 'ns' },
        spec: {
          hard: { cpu: '2', 'requests.memory': '1Gi', pods: '10' },
          scopes: ['NotBestEffort'],
          scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
        },
        status: { hard: { pods: '10' }, used: { pods: '0' } },
      },
    ],
    ['scheduling.k8s.io/v1', 'PriorityClass', { metadata: { name: 'pc' }, value: -5, globalDefault: true, description: 'low', preemptionPolicy: 'Never' }],
    [
      'policy/v1',
      'PodDisruptionBudget',
      {
        metadata: { name: 'pdb', namespace: 'ns' },
        spec: {
          minAvailable: '50%',
          selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
          unhealthyPodEvictionPolicy: 'AlwaysAllow',
        },
        status: {
          observedGeneration: 3,
          disruptedPods: { 'web-1': '2026-01-01T00:00:00Z' },
          disruptionsAllowed: 1,
          currentHealthy: 3,
          desiredHealthy: 2,
          expectedPods: 3,
          conditions: [{ type: 'DisruptionAllowed', status: 'True', observedGeneration: 3, lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'SufficientPods', message: '' }],
        },
      },
    ],
    [
      'batch/v1',
      'CronJob',
      {
        metadata: { name: 'cj', namespace: 'ns' },
        spec: {
          schedule: '*/5 * * * *',
          timeZone: 'Etc/UTC',
          startingDeadlineSeconds: 0,
          concurrencyPolicy: 'Forbid',
          suspend: false,
          successfulJobsHistoryLimit: 0,
          failedJobsHistoryLimit: 2,
          jobTemplate: {
            metadata: { labels: { app: 'cj' } },
            spec: { backoffLimit: 0, template: { spec: { containers: [{ name: 'c', image: 'busybox', command: ['date'] }], restartPolicy: 'Never' } } },
          },
        },
        status: {
          active: [{ kind: 'Job', namespace: 'ns', name: 'cj-1', uid: 'u', apiVersion: 'batch/v1' }],
          lastScheduleTime: '2026-01-01T00:05:00Z',
          lastSuccessfulTime: '2026-01-01T00:00:10Z',
        },
      },
    ],
    [
      'networking.k8s.io/v1',
      'Ingress',
      {
        metadata: { name: 'ing', namespace: 'ns' },
        spec: {
          ingressClassName: 'nginx',
          defaultBackend: { resource: { apiGroup: 'example.io', kind: 'Bucket', name: 'static' } },
          tls: [{ hosts: ['a.io', 'b.io'], secretName: 'tls' }],
          rules: [
            {
              host: 'a.io',
              http: {
                paths: [
                  { path: '/api', pathType: 'Exact', backend: { service: { name: 'api', port: { name: 'http' } } } },
                  { path: '/', pathType: 'ImplementationSpecific', backend: { service: { name: 'web', port: { number: 8080 } } } },
                ],
              },
            },
          ],
        },
        status: { loadBalancer: { ingress: [{ ip: '10.0.0.1', hostname: 'lb.a.io', ports: [{ port: 443, protocol: 'TCP', error: 'Pending' }] }] } },
      },
    ],
    [
      'autoscaling/v1',
      'HorizontalPodAutoscaler',
      {
        metadata: { name: 'hpa', namespace: 'ns' },
        spec: { scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' }, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 80 },
        status: { observedGeneration: 2, lastScaleTime: '2026-01-01T00:00:00Z', currentReplicas: 2, desiredReplicas: 3, currentCPUUtilizationPercentage: 95 },
      },
    ],
    [
      'autoscaling/v2',
      'HorizontalPodAutoscaler',
      {
        metadata: { name: 'hpa2', namespace: 'ns' },
        spec: {
          scaleTargetRef: { kind: 'StatefulSet', name: 'db', apiVersion: 'apps/v1' },
          minReplicas: 2,
          maxReplicas: 10,
          metrics: [
            { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
            { type: 'ContainerResource', containerResource: { name: 'memory', container: 'db', target: { type: 'AverageValue', averageValue: '500Mi' } } },
            { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } },
            {
              type: 'Object',
              object: {
                describedObject: { kind: 'Ingress', name: 'main', apiVersion: 'networking.k8s.io/v1' },
                metric: { name: 'rps', selector: { matchLabels: { tier: 'web' } } },
                target: { type: 'Value', value: '2k' },
              },
            },
            { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'Value', value: '30' } } },
          ],
          behavior: {
            scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
            scaleDown: { selectPolicy: 'Disabled' },
          },
        },
        status: {
          observedGeneration: 1,
          currentReplicas: 2,
          desiredReplicas: 2,
          currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 40, averageValue: '200m' } } }],
          conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'ReadyForNewScale' }],
        },
      },
    ],
  ] as const)('round-trips a %s %s', (apiVersion, kind, object) => {
    expect(decodeKubernetesProtobuf(encodeKubernetesProtobuf(apiVersion, kind, object))).toEqual({ apiVersion, kind, ...object });
  });

  it('reads a HorizontalPodAutoscaler with the table of its apiVersion, as the two versions differ', () => {
    const v2 = { spec: { maxReplicas: 3, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }] } };
    const body = encodeKubernetesProtobuf('autoscaling/v2', 'HorizontalPodAutoscaler', v2);
    expect(decodeKubernetesProtobuf(body)).toEqual({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', ...v2 });
    // The same spec as autoscaling/v1 has no field 4 message: v1's field 4 is targetCPUUtilizationPercentage.
    const v1 = decodeKubernetesProtobuf(encodeKubernetesProtobuf('autoscaling/v1', 'HorizontalPodAutoscaler', { spec: { maxReplicas: 3, targetCPUUtilizationPercentage: 50 } }));
    expect(v1['spec']).toEqual({ maxReplicas: 3, targetCPUUtilizationPercentage: 50 });
  });

  it('answers a kind named like an Object.prototype member with 415, not a prototype walk', () => {
    for (const kind of ['__proto__', 'constructor', 'toString', 'Time']) {
      const body = Buffer.concat([Buffer.from('6b3873000a', 'hex'), Buffer.from([6 + kind.length, 0x0a, 0x02]), Buffer.from('v1'), Buffer.from([0x12, kind.length]), Buffer.from(kind)]);
      let code = 0;
      try {
        decodeKubernetesProtobuf(body);
      } catch (error) {
        code = (error as ApiError).status.code;
      }
      expect(code, kind).toBe(415);
    }
  });

  it('answers kinds it has no table for with 415 and garbage with 400', () => {
    // runtime.Unknown{typeMeta: {apiVersion: v1, kind: Event}}: a kind without a table here.
    const secret = Buffer.from('6b3873000a0b0a0276311205' + Buffer.from('Event').toString('hex'), 'hex');
    expect(() => decodeKubernetesProtobuf(secret)).toThrow(ApiError);
    try {
      decodeKubernetesProtobuf(secret);
    } catch (error) {
      expect((error as ApiError).status.code).toBe(415);
    }
    try {
      decodeKubernetesProtobuf(Buffer.from('6b387300ff', 'hex'));
    } catch (error) {
      expect((error as ApiError).status.code).toBe(400);
    }
  });
});
