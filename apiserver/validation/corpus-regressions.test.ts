/**
 * Manifests kube 1.32 accepts that logplane refused or changed, and manifests kube refuses
 * that logplane let in, found by the manifest corpus (test/corpus/): each case as kube's
 * pkg/apis/<group>/validation and defaulting decide it, with kube's field paths.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.ts';
import { resourceOfKind } from '../resources.ts';
import { admitCreate, admitUpdate } from './admit.ts';

const create = (kind: Parameters<typeof resourceOfKind>[0], body: Record<string, unknown>) =>
  admitCreate({ resource: resourceOfKind(kind), body: { metadata: { name: 'x' }, ...body }, fieldValidation: 'Strict', namespace: 'default' }).object as unknown as Record<string, any>;

/** The `field: message` lines of the 422 an admission answered. */
const refusal = (kind: Parameters<typeof resourceOfKind>[0], body: Record<string, unknown>): string[] => {
  try {
    create(kind, body);
  } catch (error) {
    if (error instanceof ApiError) return (error.status.details?.causes ?? []).map((cause) => `${cause.field}: ${cause.message}`);
    throw error;
  }
  throw new Error(`${kind} was admitted`);
};

const container = { name: 'c', image: 'busybox:1.36' };
const podSpec = (spec: Record<string, unknown>) => ({ spec: { containers: [container], ...spec } });

describe('probes', () => {
  it('accepts a grpc probe as the handler (docs: grpc-liveness.yaml)', () => {
    const pod = create('Pod', podSpec({ containers: [{ ...container, livenessProbe: { grpc: { port: 2379 }, initialDelaySeconds: 10 } }] }));
    expect(pod['spec'].containers[0].livenessProbe).toMatchObject({ grpc: { port: 2379 }, periodSeconds: 10 });
    expect(refusal('Pod', podSpec({ containers: [{ ...container, livenessProbe: { grpc: { port: 0 } } }] }))).toEqual([
      'spec.containers[0].livenessProbe.grpc.port: Invalid value: 0: must be between 1 and 65535, inclusive',
    ]);
    expect(refusal('Pod', podSpec({ containers: [{ ...container, readinessProbe: { periodSeconds: 5 } }] }))).toEqual([
      'spec.containers[0].readinessProbe: Required value: must specify a handler type',
    ]);
  });
});

describe('ExternalName services', () => {
  it('accepts one without ports or selector, and refuses one without a DNS name or with a cluster IP', () => {
    const service = create('Service', { spec: { type: 'ExternalName', externalName: 'my.database.example.com.' } });
    expect(service['spec']).toMatchObject({ type: 'ExternalName', externalName: 'my.database.example.com.' });
    expect(refusal('Service', { spec: { type: 'ExternalName' } })).toEqual(['spec.externalName: Required value']);
    expect(refusal('Service', { spec: { type: 'ExternalName', externalName: 'Not_A_Host' } })[0]).toMatch(/^spec\.externalName: Invalid value: "Not_A_Host": a lowercase RFC 1123 subdomain/);
    expect(refusal('Service', { spec: { type: 'ExternalName', externalName: 'db.example.com', clusterIP: '10.0.0.1' } })).toEqual([
      'spec.clusterIPs: Forbidden: may not be set for ExternalName services',
    ]);
    expect(refusal('Service', { spec: { type: 'ClusterIP' } })).toEqual(['spec.ports: Required value']);
  });

  it('accepts an update of one that holds the cluster IP the fold gave it', () => {
    const current = create('Service', { spec: { type: 'ExternalName', externalName: 'db.example.com' } });
    const allocated = { ...current, metadata: { ...current['metadata'], uid: 'u', resourceVersion: '1' }, spec: { ...current['spec'], clusterIP: '127.96.0.1', clusterIPs: ['127.96.0.1'] } };
    const next = { ...allocated, spec: { ...allocated.spec, externalName: 'db2.example.com' } };
    const { object } = admitUpdate({ resource: resourceOfKind('Service'), body: next, fieldValidation: 'Strict', namespace: 'default', name: 'x', current: allocated as never });
    expect((object as unknown as { spec: { externalName: string } }).spec.externalName).toBe('db2.example.com');
  });
});

describe('Job pod failure policy', () => {
  it('defaults onPodConditions[].status to True (docs: job-pod-failure-policy-example.yaml)', () => {
    const job = create('Job', {
      spec: {
        template: { spec: { restartPolicy: 'Never', containers: [container] } },
        podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] },
      },
    });
    expect(job['spec'].podFailurePolicy.rules[0].onPodConditions).toEqual([{ type: 'DisruptionTarget', status: 'True' }]);
  });
});

describe('volumes and mounts', () => {
  it('refuses mounts of volumes the pod does not declare, duplicate names and volumes without a source', () => {
    expect(refusal('Pod', podSpec({ containers: [{ ...container, volumeMounts: [{ name: 'missing', mountPath: '/data' }] }] }))).toEqual([
      'spec.containers[0].volumeMounts[0].name: Not found: "missing"',
    ]);
    // kube's cause type for field.NotFound.
    const thrown = (() => {
      try {
        create('Pod', podSpec({ containers: [{ ...container, volumeMounts: [{ name: 'missing', mountPath: '/data' }] }] }));
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).status.details?.causes?.map((cause) => cause.reason)).toEqual(['FieldValueNotFound']);
    expect(refusal('Pod', podSpec({ volumes: [{ name: 'a', emptyDir: {} }, { name: 'a', emptyDir: {} }] }))).toEqual(['spec.volumes[1].name: Duplicate value: "a"']);
    expect(refusal('Pod', podSpec({ volumes: [{ name: 'a' }] }))).toEqual(['spec.volumes[0]: Required value: must specify a volume type']);
    expect(refusal('Pod', podSpec({ volumes: [{ name: 'a', emptyDir: {}, hostPath: { path: '/x' } }] }))).toEqual([
      'spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type',
    ]);
    expect(
      refusal('Pod', podSpec({ volumes: [{ name: 'a', emptyDir: {} }], containers: [{ ...container, volumeMounts: [{ name: 'a', mountPath: '/a', subPath: '../etc' }, { name: 'a', mountPath: '/a' }] }] })),
    ).toEqual(['spec.containers[0].volumeMounts[0].subPath: Invalid value: "../etc": must not contain \'..\'', 'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/a": must be unique']);
  });

  it('accepts mounts of declared volumes, init containers and block devices included', () => {
    const pod = create('Pod', podSpec({
      initContainers: [{ ...container, name: 'init', volumeMounts: [{ name: 'work', mountPath: '/work' }] }],
      containers: [{ ...container, volumeMounts: [{ name: 'work', mountPath: '/work', subPathExpr: '$(POD_NAME)' }], volumeDevices: [{ name: 'disk', devicePath: '/dev/xvda' }] }],
      volumes: [{ name: 'work', emptyDir: {} }, { name: 'disk', persistentVolumeClaim: { claimName: 'block' } }],
    }));
    expect(pod['spec'].volumes).toHaveLength(2);
  });

  it('leaves a StatefulSet template\'s mounts of its claim templates alone, as kube does', () => {
    const sts = create('StatefulSet', {
      spec: {
        serviceName: 'web',
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ ...container, volumeMounts: [{ name: 'www', mountPath: '/www' }] }] } },
        volumeClaimTemplates: [{ metadata: { name: 'www' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      },
    });
    expect(sts['spec'].volumeClaimTemplates[0].metadata.name).toBe('www');
  });

  it('requires access modes and a storage request of a claim', () => {
    expect(refusal('PersistentVolumeClaim', { spec: {} })).toEqual(['spec.accessModes: Required value: at least 1 access mode is required', 'spec.resources[storage]: Required value']);
    expect(refusal('PersistentVolumeClaim', { spec: { accessModes: ['ReadWriteSometimes'], resources: { requests: { storage: '1Gi' } } } })[0]).toMatch(/^spec\.accessModes: Unsupported value: "ReadWriteSometimes"/);
    expect(create('PersistentVolumeClaim', { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } })['spec']).toMatchObject({ volumeMode: 'Filesystem' });
  });
});

describe('Secret types', () => {
  it.each([
    [{ type: 'kubernetes.io/tls', data: { 'tls.crt': 'Y2VydA==' } }, ['data[tls.key]: Required value']],
    [{ type: 'kubernetes.io/basic-auth', data: {} }, ['data[username]: Required value', 'data[password]: Required value']],
    [{ type: 'kubernetes.io/ssh-auth', stringData: { other: 'x' } }, ['data[ssh-privatekey]: Required value']],
    [{ type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from('not json').toString('base64') } }, ['data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": must be valid JSON']],
    [{ type: 'kubernetes.io/service-account-token' }, ['metadata.annotations[kubernetes.io/service-account.name]: Required value']],
  ])('refuses %j', (secret, causes) => {
    expect(refusal('Secret', secret)).toEqual(causes);
  });

  it('accepts the keys each type needs, from stringData too', () => {
    expect(create('Secret', { type: 'kubernetes.io/basic-auth', stringData: { username: 'admin' } })['data']).toEqual({ username: 'YWRtaW4=' });
    expect(create('Secret', { type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } })['type']).toBe('kubernetes.io/tls');
  });
});

describe('autoscalers and disruption budgets', () => {
  const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
  it('refuses an autoscaler whose bounds are upside down or whose metric lacks its source', () => {
    expect(refusal('HorizontalPodAutoscaler', { spec: { scaleTargetRef: target, minReplicas: 3, maxReplicas: 1 } })).toEqual([
      'spec.maxReplicas: Invalid value: 1: must be greater than or equal to `minReplicas`',
    ]);
    expect(refusal('HorizontalPodAutoscaler', { spec: { scaleTargetRef: target, maxReplicas: 3, metrics: [{ type: 'Pods' }] } })).toEqual([
      'spec.metrics[0].pods: Required value: must populate information for the given metric source',
    ]);
  });

  it('refuses a budget with both minAvailable and maxUnavailable, or more than 100 %', () => {
    expect(refusal('PodDisruptionBudget', { spec: { minAvailable: 1, maxUnavailable: 1 } })[0]).toMatch(/^spec: Invalid value: .*: minAvailable and maxUnavailable cannot be both set$/);
    expect(refusal('PodDisruptionBudget', { spec: { maxUnavailable: '150%' } })).toEqual(['spec.maxUnavailable: Invalid value: "150%": must not be greater than 100%']);
    expect(create('PodDisruptionBudget', { spec: { minAvailable: '50%', unhealthyPodEvictionPolicy: 'AlwaysAllow' } })['spec']).toMatchObject({ minAvailable: '50%' });
  });
});

describe('core/v1 events', () => {
  const about = (namespace?: string) => ({ involvedObject: { kind: 'Pod', name: 'web-0', ...(namespace ? { namespace } : {}) }, reason: 'Pulled' });
  const inNamespace = (namespace: string, body: Record<string, unknown>) =>
    admitCreate({ resource: resourceOfKind('Event'), body: { metadata: { name: 'e' }, ...body }, fieldValidation: 'Strict', namespace });

  it('refuses an event outside the namespace of the object it is about', () => {
    expect(() => inNamespace('shop', about('default'))).toThrow(/involvedObject\.namespace: Invalid value: "default": does not match event\.namespace/);
    expect(() => inNamespace('shop', about())).toThrow(/involvedObject\.namespace: Invalid value: "": does not match event\.namespace/);
  });

  it('accepts one in the namespace of its object, and one about a cluster-scoped object in default', () => {
    expect(inNamespace('shop', about('shop')).object.metadata.namespace).toBe('shop');
    expect(inNamespace('default', { involvedObject: { kind: 'Node', name: 'node-1' }, reason: 'Rebooted' }).object.metadata.namespace).toBe('default');
  });
});

describe('init containers and sidecars (docs: pods/init-containers.yaml, sidecar containers)', () => {
  it('accepts a sidecar (restartPolicy Always) with probes, and a regular init container without', () => {
    const pod = create('Pod', podSpec({ initContainers: [{ ...container, name: 'proxy', restartPolicy: 'Always', readinessProbe: { tcpSocket: { port: 8080 } } }, { ...container, name: 'setup' }] }));
    expect(pod['spec'].initContainers.map((c: { name: string }) => c.name)).toEqual(['proxy', 'setup']);
  });

  it('refuses restartPolicy on an app container or other than Always on an init container, and probes on a regular init container', () => {
    expect(
      refusal('Pod', podSpec({
        containers: [{ ...container, restartPolicy: 'Always' }],
        initContainers: [{ ...container, name: 'i1', restartPolicy: 'OnFailure' }, { ...container, name: 'i2', livenessProbe: { exec: { command: ['true'] } } }],
      })),
    ).toEqual([
      'spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
      'spec.initContainers[1].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
      'spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers',
    ]);
  });
});
