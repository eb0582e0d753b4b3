import { describe, expect, it } from 'vitest';
import type { Deployment, Endpoints, Namespace, Node, Pod, ReplicaSet, Service } from '../schemas/index.ts';
import { ApiError, ConnectionError } from './client.ts';
import { age, formatError, formatLabelSelector, humanDuration, objectTable, renderTable, toJson, toYaml } from './printers.ts';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const ago = (ms: number): string => new Date(NOW - ms).toISOString();
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

const render = (table: { headers: readonly string[]; rows: readonly (readonly string[])[] }): string => renderTable([table.headers, ...table.rows]);

describe('humanDuration (kube duration.HumanDuration)', () => {
  it.each([
    [0, '0s'],
    [5 * S, '5s'],
    [119 * S, '119s'],
    [2 * M, '2m'],
    [3 * M, '3m'],
    [3 * M + 20 * S, '3m20s'],
    [10 * M + 30 * S, '10m'],
    [179 * M, '179m'],
    [3 * H, '3h'],
    [5 * H + 30 * M, '5h30m'],
    [8 * H, '8h'],
    [47 * H, '47h'],
    [2 * D, '2d'],
    [2 * D + 3 * H, '2d3h'],
    [45 * D, '45d'],
    [730 * D, '2y'],
    [800 * D, '2y70d'],
    [3000 * D, '8y'],
    [-500, '0s'],
    [-1500, '0s'],
    [-5 * S, '<invalid>'],
  ])('%d ms → %s', (ms, expected) => {
    expect(humanDuration(ms)).toBe(expected);
  });

  it('reads timestamps, and says <unknown> without one', () => {
    expect(age(ago(5 * S), NOW)).toBe('5s');
    expect(age(undefined, NOW)).toBe('<unknown>');
    expect(age('not a time', NOW)).toBe('<unknown>');
  });
});

describe('renderTable', () => {
  it('pads every column but the last to its widest cell + 3 (at least 6), like kubectl', () => {
    expect(renderTable([
      ['NAME', 'READY', 'AGE'],
      ['a', '1/1', '5s'],
      ['longer-name', '0/1', '3m'],
    ])).toBe(['NAME          READY   AGE', 'a             1/1     5s', 'longer-name   0/1     3m', ''].join('\n'));
  });
});

const pod = (name: string, overrides: Partial<Pod> = {}): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', creationTimestamp: ago(5 * M), labels: { app: 'web' } },
  spec: { containers: [{ name: 'echo', image: 'echo:1' }], nodeName: 'node-1' },
  status: {
    phase: 'Running',
    podIP: '127.100.0.2',
    containerStatuses: [{ name: 'echo', image: 'echo:1', ready: true, restartCount: 0, state: { running: { startedAt: ago(5 * M) } } }],
  },
  ...overrides,
});

describe('pod tables', () => {
  it('prints NAME READY STATUS RESTARTS AGE', () => {
    const crashing = pod('web-2', {
      status: {
        phase: 'Running',
        containerStatuses: [
          {
            name: 'echo',
            image: 'echo:1',
            ready: false,
            restartCount: 3,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 1, finishedAt: ago(40 * S) } },
          },
        ],
      },
    });
    const pending = pod('web-3', { spec: { containers: [{ name: 'echo' }] }, status: { phase: 'Pending' } });
    expect(render(objectTable('Pod', [pod('web-1'), crashing, pending], { now: NOW }))).toBe(
      [
        'NAME    READY   STATUS             RESTARTS      AGE',
        'web-1   1/1     Running            0             5m',
        'web-2   0/1     CrashLoopBackOff   3 (40s ago)   5m',
        'web-3   0/1     Pending            0             5m',
        '',
      ].join('\n'),
    );
  });

  it('adds IP and NODE with -o wide and NAMESPACE with -A', () => {
    expect(render(objectTable('Pod', [pod('web-1')], { now: NOW, wide: true, withNamespace: true }))).toBe(
      [
        'NAMESPACE   NAME    READY   STATUS    RESTARTS   AGE   IP            NODE     NOMINATED NODE   READINESS GATES',
        'default     web-1   1/1     Running   0          5m    127.100.0.2   node-1   <none>           <none>',
        '',
      ].join('\n'),
    );
  });

  it('shows Terminating for a pod being deleted, and prefixes kind/name when asked', () => {
    const deleting = pod('web-1', { metadata: { name: 'web-1', creationTimestamp: ago(2 * D), deletionTimestamp: ago(0) } });
    expect(objectTable('Pod', [deleting], { now: NOW, namePrefix: 'pod' }).rows[0]).toEqual(['pod/web-1', '1/1', 'Terminating', '0', '2d']);
  });

  it('reports terminated containers by reason or exit code', () => {
    const exited = pod('job', {
      status: { phase: 'Failed', containerStatuses: [{ name: 'echo', image: 'x', ready: false, restartCount: 0, state: { terminated: { exitCode: 2 } } }] },
    });
    expect(objectTable('Pod', [exited], { now: NOW }).rows[0]?.[2]).toBe('ExitCode:2');
  });
});

describe('other kinds', () => {
  it('nodes: NAME STATUS ROLES AGE VERSION', () => {
    const node: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'node-1', creationTimestamp: ago(3 * H), labels: { 'node-role.kubernetes.io/worker': '' } },
      spec: { unschedulable: true },
      status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'logplane-0.1.0' } },
    };
    const notReady: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-2', creationTimestamp: ago(3 * H) }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } };
    expect(render(objectTable('Node', [node, notReady], { now: NOW, withNamespace: true }))).toBe(
      [
        'NAME     STATUS                     ROLES    AGE   VERSION',
        'node-1   Ready,SchedulingDisabled   worker   3h    logplane-0.1.0',
        'node-2   NotReady                   <none>   3h    ',
        '',
      ].join('\n'),
    );
  });

  it('services: NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE', () => {
    const services: Service[] = [
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', creationTimestamp: ago(10 * S) }, spec: { clusterIP: '127.96.0.10', ports: [{ port: 80 }], selector: { app: 'web' } } },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'edge', creationTimestamp: ago(10 * S) },
        spec: { type: 'NodePort', clusterIP: '127.96.0.11', ports: [{ port: 80, nodePort: 30080 }, { port: 443, protocol: 'TCP', nodePort: 30443 }] },
      },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'lb', creationTimestamp: ago(10 * S) }, spec: { type: 'LoadBalancer', clusterIP: '127.96.0.12', ports: [] } },
    ];
    expect(render(objectTable('Service', services, { now: NOW, wide: true }))).toBe(
      [
        'NAME   TYPE           CLUSTER-IP    EXTERNAL-IP   PORT(S)                      AGE   SELECTOR',
        'web    ClusterIP      127.96.0.10   <none>        80/TCP                       10s   app=web',
        'edge   NodePort       127.96.0.11   <none>        80:30080/TCP,443:30443/TCP   10s   <none>',
        'lb     LoadBalancer   127.96.0.12   <pending>     <none>                       10s   <none>',
        '',
      ].join('\n'),
    );
  });

  it('deployments: NAME READY UP-TO-DATE AVAILABLE AGE (+ CONTAINERS IMAGES SELECTOR)', () => {
    const deployment: Deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default', creationTimestamp: ago(2 * D) },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'echo', image: 'echo:2' }] } },
      },
      status: { replicas: 3, readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
    };
    expect(render(objectTable('Deployment', [deployment], { now: NOW, wide: true }))).toBe(
      ['NAME   READY   UP-TO-DATE   AVAILABLE   AGE   CONTAINERS   IMAGES   SELECTOR', 'web    2/3     3            2           2d    echo         echo:2   app=web', ''].join('\n'),
    );
  });

  it('replicasets: NAME DESIRED CURRENT READY AGE', () => {
    const rs: ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web-7d9c', creationTimestamp: ago(90 * S) },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } } },
      status: { replicas: 2, readyReplicas: 1 },
    };
    expect(render(objectTable('ReplicaSet', [rs], { now: NOW }))).toBe(['NAME       DESIRED   CURRENT   READY   AGE', 'web-7d9c   2         2         1       90s', ''].join('\n'));
  });

  it('endpoints: up to three addresses, then "+ N more..."', () => {
    const endpoints: Endpoints = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web', creationTimestamp: ago(M) },
      subsets: [{ addresses: [1, 2, 3, 4].map((i) => ({ ip: `127.100.0.${i}` })), ports: [{ port: 8080 }] }],
    };
    const empty: Endpoints = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'none', creationTimestamp: ago(M) } };
    const table = objectTable('Endpoints', [endpoints, empty], { now: NOW });
    expect(table.headers).toEqual(['NAME', 'ENDPOINTS', 'AGE']);
    expect(table.rows).toEqual([
      ['web', '127.100.0.1:8080,127.100.0.2:8080,127.100.0.3:8080 + 1 more...', '60s'],
      ['none', '<none>', '60s'],
    ]);
  });

  it('namespaces: NAME STATUS AGE', () => {
    const namespaces: Namespace[] = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default', creationTimestamp: ago(D) }, status: { phase: 'Active' } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'old', creationTimestamp: ago(D), deletionTimestamp: ago(0) } },
    ];
    expect(render(objectTable('Namespace', namespaces, { now: NOW }))).toBe(['NAME      STATUS        AGE', 'default   Active        24h', 'old       Terminating   24h', ''].join('\n'));
  });
});

describe('selectors', () => {
  it('prints match labels and expressions like kubectl', () => {
    expect(
      formatLabelSelector({
        matchLabels: { tier: 'web', app: 'shop' },
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['prod', 'dev'] },
          { key: 'gpu', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('app=shop,tier=web,env in (dev,prod),!gpu');
    expect(formatLabelSelector({})).toBe('<none>');
  });
});

describe('yaml and json', () => {
  it('sorts keys and does not indent sequences, like kubectl -o yaml', () => {
    expect(toYaml({ kind: 'Pod', apiVersion: 'v1', spec: { containers: [{ name: 'a', image: 'b' }] } })).toBe(
      ['apiVersion: v1', 'kind: Pod', 'spec:', '  containers:', '  - image: b', '    name: a', ''].join('\n'),
    );
    expect(toJson({ b: 1, a: [2] })).toBe('{\n    "a": [\n        2\n    ],\n    "b": 1\n}\n');
  });
});

describe('formatError', () => {
  it.each([
    [{ kind: 'Status', status: 'Failure', reason: 'NotFound', message: 'pods "x" not found', code: 404 }, 'Error from server (NotFound): pods "x" not found'],
    [
      { kind: 'Status', status: 'Failure', reason: 'AlreadyExists', message: 'deployments.apps "web" already exists', code: 409 },
      'Error from server (AlreadyExists): deployments.apps "web" already exists',
    ],
    [
      {
        kind: 'Status',
        status: 'Failure',
        reason: 'Conflict',
        message: 'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again',
        code: 409,
      },
      'Error from server (Conflict): Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again',
    ],
    [{ kind: 'Status', status: 'Failure', reason: 'Unauthorized', message: 'Unauthorized', code: 401 }, 'error: You must be logged in to the server (Unauthorized)'],
    [{ kind: 'Status', status: 'Failure', message: 'something odd', code: 500 }, 'Error from server: something odd'],
    [
      {
        kind: 'Status',
        status: 'Failure',
        reason: 'Invalid',
        message: 'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
        details: {
          name: 'web',
          kind: 'Deployment.apps',
          causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be greater than or equal to 0', field: 'spec.replicas' }],
        },
        code: 422,
      },
      'The Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    ],
    [
      {
        kind: 'Status',
        status: 'Failure',
        reason: 'Invalid',
        message: 'Pod "p" is invalid: [spec.containers: Required value, metadata.name: Invalid value]',
        details: {
          name: 'p',
          kind: 'Pod',
          causes: [
            { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' },
            { reason: 'FieldValueInvalid', message: 'Invalid value', field: 'metadata.name' },
          ],
        },
        code: 422,
      },
      'The Pod "p" is invalid: \n* spec.containers: Required value\n* metadata.name: Invalid value',
    ],
  ] as const)('%j', (status, expected) => {
    expect(formatError(new ApiError(status, status.code))).toBe(expected);
  });

  it('prints refused connections like kubectl, other errors with "error: "', () => {
    const refused = new ConnectionError('127.0.0.1:6443', Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }) }));
    expect(formatError(refused)).toBe('The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?');
    expect(formatError(new Error('the server doesn\'t have a resource type "foo"'))).toBe('error: the server doesn\'t have a resource type "foo"');
  });
});
