import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.ts';
import { resourceOfKind } from '../resources.ts';
import { admitCreate, admitUpdate, type FieldValidation } from './admit.ts';

const create = (kind: Parameters<typeof resourceOfKind>[0], body: unknown, fieldValidation: FieldValidation = 'Warn') =>
  admitCreate({ resource: resourceOfKind(kind), body, fieldValidation, namespace: 'default' });

const failure = (action: () => unknown) => {
  try {
    action();
  } catch (error) {
    if (error instanceof ApiError) return error.status;
    throw error;
  }
  throw new Error('expected an ApiError');
};

const container = { name: 'c', image: 'nginx:1.27' };
const pod = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'p' }) => ({ apiVersion: 'v1', kind: 'Pod', metadata, spec });
const deployment = (spec: Record<string, unknown>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'd' },
  spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [container] } }, ...spec },
});
const service = (spec: Record<string, unknown>, name = 'svc') => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec });

describe('admitCreate', () => {
  it('fills defaults, namespace and type meta and drops system fields', () => {
    const { object } = create('Pod', { metadata: { name: 'p', uid: 'x', resourceVersion: '5.0' }, spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }] }, status: { phase: 'Running' } });
    expect(object).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default' },
      spec: {
        containers: [{ name: 'c', image: 'nginx', imagePullPolicy: 'Always', ports: [{ containerPort: 80, protocol: 'TCP' }] }],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 30,
        schedulerName: 'default-scheduler',
      },
      status: { phase: 'Pending', qosClass: 'BestEffort' },
    });
  });

  it('keeps every field of the Kubernetes 1.32 API, and warns about (or refuses) fields it does not have', () => {
    const kept = create('Pod', pod({ containers: [{ ...container, terminationMessagePolicy: 'File' }], dnsPolicy: 'None', volumes: [{ name: 'v', emptyDir: {} }], securityContext: { runAsUser: 1000 } }));
    expect(kept.warnings).toEqual([]);
    expect((kept.object as { spec: object }).spec).toMatchObject({ dnsPolicy: 'None', volumes: [{ name: 'v', emptyDir: {} }], securityContext: { runAsUser: 1000 } });
    const loud = create('Pod', pod({ containers: [container], dnsPolicie: 'None', volumes: [{ name: 'v', emptyDir: {}, emptyDri: { medium: 'Memory' } }] }));
    expect(loud.warnings).toEqual(['unknown field "spec.dnsPolicie"', 'unknown field "spec.volumes[0].emptyDri"']);
    expect((loud.object as { spec: object }).spec).not.toHaveProperty('dnsPolicie');
    expect(create('Pod', pod({ containers: [container], dnsPolicie: 'None' }), 'Ignore').warnings).toEqual([]);
    expect(failure(() => create('Pod', pod({ containers: [container], dnsPolicie: 'None' }), 'Strict'))).toMatchObject({
      code: 400,
      message: 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.dnsPolicie"',
    });
  });

  it('stores quantities in kube\'s canonical form, numbers included, and names a bad one', () => {
    const resources = { requests: { cpu: 0.5, memory: '1024Mi' }, limits: { cpu: 1, memory: '1.5Gi' } };
    const admitted = create('Pod', pod({ containers: [{ ...container, resources }] }));
    expect((admitted.object as { spec: { containers: { resources: unknown }[] } }).spec.containers[0]?.resources).toEqual({
      requests: { cpu: '500m', memory: '1Gi' },
      limits: { cpu: '1', memory: '1536Mi' },
    });
    expect(failure(() => create('Pod', pod({ containers: [{ ...container, resources: { requests: { cpu: 'one' } } }] })))).toMatchObject({
      code: 422,
      details: { causes: [expect.objectContaining({ field: 'spec.containers[0].resources.requests[cpu]', message: expect.stringContaining('quantities must match the regular expression') })] },
    });
  });

  it.each([
    ['a missing name', 'Pod', pod({ containers: [container] }, {}), 'metadata.name', 'Required value: name or generateName is required'],
    ['an upper-case name', 'Pod', pod({ containers: [container] }, { name: 'Web' }), 'metadata.name', expect.stringContaining('a lowercase RFC 1123 subdomain')],
    ['a service name starting with a digit', 'Service', service({ ports: [{ port: 80 }] }, '1svc'), 'metadata.name', expect.stringContaining('DNS-1035 label')],
    ['a bad label value', 'Pod', pod({ containers: [container] }, { name: 'p', labels: { app: 'a b' } }), 'metadata.labels[app]', expect.stringContaining('a valid label')],
    ['a missing image', 'Pod', pod({ containers: [{ name: 'c' }] }), 'spec.containers[0].image', 'Required value'],
    ['duplicate container names', 'Pod', pod({ containers: [container, container] }), 'spec.containers[1].name', 'Duplicate value: "c"'],
    ['an unsupported restart policy', 'Pod', pod({ containers: [container], restartPolicy: 'Sometimes' }), 'spec.restartPolicy', 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
    ['an unsupported protocol', 'Pod', pod({ containers: [{ ...container, ports: [{ containerPort: 80, protocol: 'HTTP' }] }] }), 'spec.containers[0].ports[0].protocol', expect.stringContaining('Unsupported value: "HTTP"')],
    ['a request above its limit', 'Pod', pod({ containers: [{ ...container, resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } }] }), 'spec.containers[0].resources.requests', 'Invalid value: "2": must be less than or equal to cpu limit of 1'],
    ['a probe without a handler', 'Pod', pod({ containers: [{ ...container, livenessProbe: { periodSeconds: 5 } }] }), 'spec.containers[0].livenessProbe', 'Required value: must specify a handler type'],
    ['a bad env name', 'Pod', pod({ containers: [{ ...container, env: [{ name: '1X', value: 'y' }] }] }), 'spec.containers[0].env[0].name', expect.stringContaining('environment variable name')],
    ['negative replicas', 'Deployment', deployment({ replicas: -2 }), 'spec.replicas', 'Invalid value: -2: must be greater than or equal to 0'],
    ['an empty selector', 'Deployment', deployment({ selector: {} }), 'spec.selector', expect.stringContaining('empty selector is invalid')],
    ['a non-Always template restart policy', 'Deployment', deployment({ template: { metadata: { labels: { app: 'd' } }, spec: { containers: [container], restartPolicy: 'Never' } } }), 'spec.template.spec.restartPolicy', 'Unsupported value: "Never": supported values: "Always"'],
    ['zero surge and unavailability', 'Deployment', deployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } } }), 'spec.strategy.rollingUpdate.maxUnavailable', 'Invalid value: "0%": may not be 0 when `maxSurge` is 0'],
    ['a service port out of range', 'Service', service({ ports: [{ port: 0 }] }), 'spec.ports[0].port', 'Invalid value: 0: must be between 1 and 65535, inclusive'],
    ['unnamed ports of a multi-port service', 'Service', service({ ports: [{ port: 80 }, { port: 81 }] }), 'spec.ports[0].name', 'Required value'],
    ['a node port on a ClusterIP service', 'Service', service({ ports: [{ port: 80, nodePort: 30001 }] }), 'spec.ports[0].nodePort', "Forbidden: may not be used when `type` is 'ClusterIP'"],
    ['a node port out of range', 'Service', service({ type: 'NodePort', ports: [{ port: 80, nodePort: 80 }] }), 'spec.ports[0].nodePort', expect.stringContaining('30000-32767')],
    ['a bad endpoint address', 'Endpoints', { metadata: { name: 'e' }, subsets: [{ addresses: [{ ip: '999.1.1.1' }], ports: [{ port: 80 }] }] }, 'subsets[0].addresses[0].ip', expect.stringContaining('must be a valid IP address')],
    ['a daemon set whose selector misses its template', 'DaemonSet', { metadata: { name: 'd' }, spec: { selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'y' } }, spec: { containers: [container] } } } }, 'spec.template.metadata.labels', expect.stringContaining('`selector` does not match template `labels`')],
    ['a job that restarts Always', 'Job', { metadata: { name: 'j' }, spec: { template: { spec: { containers: [container], restartPolicy: 'Always' } } } }, 'spec.template.spec.restartPolicy', 'Unsupported value: "Always": supported values: "OnFailure", "Never"'],
    ['a job without a restart policy', 'Job', { metadata: { name: 'j' }, spec: { template: { spec: { containers: [container] } } } }, 'spec.template.spec.restartPolicy', expect.stringContaining('Unsupported value: "Always"')],
    ['an indexed job without completions', 'Job', { metadata: { name: 'j' }, spec: { completionMode: 'Indexed', parallelism: 2, template: { spec: { containers: [container], restartPolicy: 'Never' } } } }, 'spec.completions', expect.stringContaining('Required value')],
    ['a job with a zero deadline', 'Job', { metadata: { name: 'j' }, spec: { activeDeadlineSeconds: 0, template: { spec: { containers: [container], restartPolicy: 'Never' } } } }, 'spec.activeDeadlineSeconds', 'Invalid value: 0: must be greater than 0'],
    ['a cron job with an unknown concurrency policy', 'CronJob', { metadata: { name: 'c' }, spec: { schedule: '@daily', concurrencyPolicy: 'Sometimes', jobTemplate: { spec: { template: { spec: { containers: [container], restartPolicy: 'Never' } } } } } }, 'spec.concurrencyPolicy', expect.stringContaining('Unsupported value: "Sometimes"')],
    ['a stateful set with an unknown pod management policy', 'StatefulSet', { metadata: { name: 's' }, spec: { serviceName: 's', podManagementPolicy: 'Random', selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [container] } } } }, 'spec.podManagementPolicy', expect.stringContaining('Unsupported value: "Random"')],
    ['a replication controller without a selector or labels', 'ReplicationController', { metadata: { name: 'r' }, spec: { template: { spec: { containers: [container] } } } }, 'spec.selector', 'Required value'],
    ['a config map key with a slash', 'ConfigMap', { metadata: { name: 'c' }, data: { 'a/b': 'x' } }, 'data[a/b]', expect.stringContaining('a valid config key')],
    ['a secret key of dots', 'Secret', { metadata: { name: 's' }, data: { '..': 'eA==' } }, 'data[..]', expect.stringContaining('a valid config key')],
  ])('rejects %s with 422 naming the field', (_title, kind, body, field, message) => {
    const status = failure(() => create(kind as Parameters<typeof resourceOfKind>[0], body));
    expect(status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(status.details?.causes).toContainEqual(expect.objectContaining({ field, message }));
  });

  it.each([
    ['a string port', pod({ containers: [{ ...container, ports: [{ containerPort: '80' }] }] }), 'spec.containers[0].ports[0].containerPort'],
    ['a number name', pod({ containers: [{ ...container, name: 5 }] }), 'spec.containers[0].name'],
    ['labels as a list', pod({ containers: [container] }, { name: 'p', labels: ['a'] }), 'metadata.labels'],
  ])('rejects %s with 400 naming the field', (_title, body, field) => {
    const status = failure(() => create('Pod', body));
    expect(status).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(status.details?.causes?.[0]?.field).toBe(field);
  });

  it('checks kind, apiVersion and namespace against the URL', () => {
    expect(failure(() => create('Pod', { ...pod({ containers: [container] }), kind: 'Service' })).code).toBe(400);
    expect(failure(() => create('Pod', { ...pod({ containers: [container] }), apiVersion: 'apps/v1' })).message).toBe(
      'Pod in version "v1" cannot be handled as a Pod: no kind "Pod" is registered for version "apps/v1" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"',
    );
    expect(failure(() => create('Pod', pod({ containers: [container] }, { name: 'p', namespace: 'other' }))).message).toBe(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  });
});

describe('admitUpdate', () => {
  const current = create('Deployment', deployment({})).object;

  it('refuses a changed selector and a name that differs from the URL', () => {
    const changed = structuredClone(current) as typeof current & { spec: { selector: unknown; template: { metadata: { labels: unknown } } } };
    changed.spec.selector = { matchLabels: { app: 'e' } };
    changed.spec.template.metadata.labels = { app: 'e' };
    const status = failure(() => admitUpdate({ resource: resourceOfKind('Deployment'), body: changed, fieldValidation: 'Strict', namespace: 'default', name: 'd', current }));
    expect(status.details?.causes).toContainEqual(expect.objectContaining({ field: 'spec.selector', message: expect.stringContaining('field is immutable') }));
    const renamed = failure(() => admitUpdate({ resource: resourceOfKind('Deployment'), body: current, fieldValidation: 'Strict', namespace: 'default', name: 'other', current }));
    expect(renamed.message).toBe('the name of the object (d) does not match the name on the URL (other)');
  });

  it('forbids pod spec changes other than images', () => {
    const running = create('Pod', pod({ containers: [container] })).object;
    const image = structuredClone(running) as typeof running & { spec: { containers: { image: string }[]; restartPolicy: string } };
    image.spec.containers[0]!.image = 'nginx:1.28';
    const admitted = admitUpdate({ resource: resourceOfKind('Pod'), body: structuredClone(image), fieldValidation: 'Strict', namespace: 'default', name: 'p', current: running });
    expect(admitted).toEqual({ object: image, warnings: [] });
    expect((admitted.object as typeof image).spec.containers[0]!.image).toBe('nginx:1.28');
    const policy = structuredClone(running) as typeof image;
    policy.spec.restartPolicy = 'Never';
    const status = failure(() => admitUpdate({ resource: resourceOfKind('Pod'), body: policy, fieldValidation: 'Strict', namespace: 'default', name: 'p', current: running }));
    expect(status.details?.causes?.[0]).toMatchObject({ field: 'spec', reason: 'FieldValueForbidden' });
  });
});

describe('defaults of the kinds without a controller yet (pkg/apis/*/v1/defaults.go)', () => {
  const template = { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } };
  it.each([
    [
      'Job',
      { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { ...template.spec, restartPolicy: 'Never' } } } },
      { spec: { completions: 1, parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false, podReplacementPolicy: 'TerminatingOrFailed', template: { spec: { terminationGracePeriodSeconds: 30, containers: [{ imagePullPolicy: 'IfNotPresent' }] } } } },
    ],
    [
      'CronJob',
      { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'c' }, spec: { schedule: '@hourly', jobTemplate: { spec: { template: { spec: { ...template.spec, restartPolicy: 'OnFailure' } } } } } },
      { spec: { concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1, jobTemplate: { spec: { backoffLimit: 6 } } } },
    ],
    [
      'DaemonSet',
      { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'd' }, spec: { selector: { matchLabels: { app: 'a' } }, template } },
      { spec: { revisionHistoryLimit: 10, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } }, template: { spec: { restartPolicy: 'Always' } } } },
    ],
    [
      'StatefulSet',
      { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 's' }, spec: { serviceName: 's', selector: { matchLabels: { app: 'a' } }, template } },
      { spec: { replicas: 1, podManagementPolicy: 'OrderedReady', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' } } },
    ],
    ['Secret', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { a: 'b' }, data: { c: 'ZA==' } }, { type: 'Opaque', data: { a: 'Yg==', c: 'ZA==' } }],
    ['NetworkPolicy', { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'n' }, spec: { podSelector: {}, egress: [{ ports: [{ port: 53 }] }] } }, { spec: { policyTypes: ['Ingress', 'Egress'], egress: [{ ports: [{ port: 53, protocol: 'TCP' }] }] } }],
    [
      'ReplicationController',
      { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'r' }, spec: { template } },
      { metadata: { labels: { app: 'a' } }, spec: { replicas: 1, selector: { app: 'a' } } },
    ],
  ])('%s', (kind, body, defaults) => {
    const { object } = create(kind as Parameters<typeof resourceOfKind>[0], body);
    expect(object).toMatchObject(defaults);
    if (kind === 'Secret') expect(object).not.toHaveProperty('stringData');
  });
});

describe("a Job's generated selector (kube's job strategy)", () => {
  const spec = { template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], restartPolicy: 'Never' } } };
  it('selects the pods by the uid the Job gets at create, with kube\'s four template labels', () => {
    const { object } = create('Job', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: structuredClone(spec) });
    const uid = object.metadata.uid!;
    expect(uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(object).toMatchObject({
      spec: {
        selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
        template: { metadata: { labels: { app: 'a', 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': 'j', 'controller-uid': uid, 'job-name': 'j' } } },
      },
    });
  });

  it('leaves a manualSelector Job as written', () => {
    const { object } = create('Job', { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { ...structuredClone(spec), manualSelector: true, selector: { matchLabels: { app: 'a' } } } });
    expect(object.metadata.uid).toBeUndefined();
    expect((object as { spec: { selector: unknown; template: { metadata: { labels: unknown } } } }).spec).toMatchObject({ selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } } } });
    expect((object as { spec: { template: { metadata: { labels: Record<string, string> } } } }).spec.template.metadata.labels['job-name']).toBeUndefined();
  });
});

describe('updates of the new kinds (immutable fields, as kube validates them)', () => {
  const template = { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } };
  const update = (kind: Parameters<typeof resourceOfKind>[0], current: unknown, body: unknown) =>
    admitUpdate({ resource: resourceOfKind(kind), body, fieldValidation: 'Strict', namespace: 'default', name: (body as { metadata: { name: string } }).metadata.name, current: current as never });
  it.each([
    [
      'a stateful set\'s volume claim templates',
      'StatefulSet',
      { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 's', namespace: 'default' }, spec: { serviceName: 's', selector: { matchLabels: { app: 'a' } }, template } },
      (o: Record<string, any>) => ({ ...o, spec: { ...o.spec, volumeClaimTemplates: [{ metadata: { name: 'd' }, spec: { accessModes: ['ReadWriteOnce'] } }] } }),
      'spec',
      expect.stringContaining('updates to statefulset spec for fields other than'),
    ],
    [
      'a running job\'s template',
      'Job',
      { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'default' }, spec: { template: { spec: { ...template.spec, restartPolicy: 'Never' } } } },
      (o: Record<string, any>) => ({ ...o, spec: { ...o.spec, template: { spec: { ...o.spec.template.spec, containers: [{ name: 'c', image: 'busybox:1.37' }] } } } }),
      'spec.template',
      expect.stringContaining('field is immutable'),
    ],
    [
      'a daemon set\'s selector',
      'DaemonSet',
      { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'd', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'a' } }, template } },
      (o: Record<string, any>) => ({ ...o, spec: { ...o.spec, selector: { matchLabels: { app: 'a', tier: 'x' } }, template: { ...template, metadata: { labels: { app: 'a', tier: 'x' } } } } }),
      'spec.selector',
      expect.stringContaining('field is immutable'),
    ],
    [
      'an immutable config map\'s data',
      'ConfigMap',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { a: '1' }, immutable: true },
      (o: Record<string, any>) => ({ ...o, data: { a: '2' } }),
      'data',
      expect.stringContaining('field is immutable when `immutable` is set'),
    ],
    [
      'a secret\'s type',
      'Secret',
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' }, type: 'Opaque', data: { a: 'eA==' } },
      (o: Record<string, any>) => ({ ...o, type: 'kubernetes.io/tls' }),
      'type',
      expect.stringContaining('field is immutable'),
    ],
  ])('refuses a change of %s', (_title, kind, body, change, field, message) => {
    const { object: current } = create(kind as Parameters<typeof resourceOfKind>[0], body);
    const status = failure(() => update(kind as Parameters<typeof resourceOfKind>[0], current, change(structuredClone(current) as Record<string, any>)));
    expect(status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(status.details?.causes).toContainEqual(expect.objectContaining({ field, message }));
  });
});
