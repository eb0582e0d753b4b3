import { describe, expect, it } from 'vitest';
import type { ContainerStatus, Endpoints, Node, Pod, Service } from '../schemas/index.ts';
import { sampleObject } from '../schemas/avro-gen/openapi-samples.ts';
import { loadApiDocument } from '../schemas/avro-gen/openapi.ts';
import { STORED_KINDS } from '../schemas/kinds/registry.ts';
import { formatEndpoints, humanDuration, rowCells, toTable } from './tables.ts';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const meta = (name: string, ageSeconds: number) => ({ name, namespace: 'default', creationTimestamp: new Date(NOW - ageSeconds * 1000).toISOString() });

describe('humanDuration (kube duration.HumanDuration)', () => {
  it.each([
    [-5_000, '<invalid>'],
    [-500, '0s'],
    [45_000, '45s'],
    [119_000, '119s'],
    [200_000, '3m20s'],
    [300_000, '5m'],
    [3_600_000, '60m'],
    [5 * 3_600_000 + 60_000, '5h1m'],
    [30 * 3_600_000, '30h'],
    [50 * 3_600_000, '2d2h'],
    [30 * 86_400_000, '30d'],
    [800 * 86_400_000, '2y70d'],
    [3000 * 86_400_000, '8y'],
  ])('%i ms is %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

describe('pod rows', () => {
  const pod = (status: Pod['status'], extra: Partial<Pod['metadata']> = {}): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...meta('p', 90), ...extra },
    spec: { containers: [{ name: 'a' }, { name: 'b' }], nodeName: 'n1' },
    ...(status ? { status } : {}),
  });
  it.each([
    ['pending', pod({ phase: 'Pending' }), ['p', '0/2', 'Pending', '0', '90s']],
    [
      'running and ready',
      pod({
        phase: 'Running',
        podIP: '127.100.0.3',
        containerStatuses: [
          { name: 'a', image: 'x', ready: true, restartCount: 0, state: { running: {} } },
          { name: 'b', image: 'x', ready: true, restartCount: 2, state: { running: {} }, lastState: { terminated: { exitCode: 1, finishedAt: new Date(NOW - 30_000).toISOString() } } },
        ],
      }),
      ['p', '2/2', 'Running', '2 (30s ago)', '90s', '127.100.0.3', 'n1'],
    ],
    [
      'crash looping',
      pod({ phase: 'Running', containerStatuses: [{ name: 'a', image: 'x', ready: false, restartCount: 5, state: { waiting: { reason: 'CrashLoopBackOff' } } }] }),
      ['p', '0/2', 'CrashLoopBackOff', '5'],
    ],
    ['exited without reason', pod({ phase: 'Failed', containerStatuses: [{ name: 'a', image: 'x', ready: false, restartCount: 0, state: { terminated: { exitCode: 3 } } }] }), ['p', '0/2', 'ExitCode:3']],
    ['terminating', pod({ phase: 'Running' }, { deletionTimestamp: new Date(NOW).toISOString() }), ['p', '0/2', 'Terminating']],
  ])('%s', (_title, object, cells) => {
    expect(rowCells(object, NOW).slice(0, cells.length)).toEqual(cells);
  });

  // kube 1.32 printPod with init containers: Init:i/n while one waits or runs, Init:<reason> when
  // one fails or backs off, sidecars counted in READY once started, their restarts kept.
  const withInit = (status: Pod['status']): Pod => ({
    ...pod(status),
    spec: {
      initContainers: [{ name: 'proxy', restartPolicy: 'Always' }, { name: 'migrate' }, { name: 'seed' }],
      containers: [{ name: 'a' }],
      nodeName: 'n1',
    },
  });
  const proxyUp: ContainerStatus = { name: 'proxy', image: 'x', ready: true, started: true, restartCount: 1, state: { running: {} }, lastState: { terminated: { exitCode: 1, finishedAt: new Date(NOW - 60_000).toISOString() } } };
  const done = (name: string): ContainerStatus => ({ name, image: 'x', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } });
  it.each([
    [
      'the second init container running',
      withInit({ phase: 'Pending', initContainerStatuses: [proxyUp, { name: 'migrate', image: 'x', ready: false, restartCount: 0, state: { running: {} } }, { name: 'seed', image: 'x', ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } }] }),
      ['p', '1/2', 'Init:1/3', '1 (60s ago)'],
    ],
    [
      'an init container crash looping',
      withInit({ phase: 'Pending', initContainerStatuses: [proxyUp, { name: 'migrate', image: 'x', ready: false, restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } } }] }),
      ['p', '1/2', 'Init:CrashLoopBackOff', '5 (60s ago)'],
    ],
    [
      'an init container failed',
      withInit({ phase: 'Failed', initContainerStatuses: [proxyUp, { name: 'migrate', image: 'x', ready: false, restartCount: 0, state: { terminated: { exitCode: 2, reason: 'Error' } } }] }),
      ['p', '1/2', 'Init:Error'],
    ],
    [
      'initialized and running',
      withInit({
        phase: 'Running',
        conditions: [{ type: 'Initialized', status: 'True' }, { type: 'Ready', status: 'True' }],
        initContainerStatuses: [proxyUp, done('migrate'), done('seed')],
        containerStatuses: [{ name: 'a', image: 'x', ready: true, restartCount: 0, state: { running: {} } }],
      }),
      ['p', '2/2', 'Running', '1 (60s ago)'],
    ],
  ])('%s', (_title, object, cells) => {
    expect(rowCells(object, NOW).slice(0, cells.length)).toEqual(cells);
  });
});

describe('other kinds', () => {
  it('prints nodes with roles, readiness and versions', () => {
    const node: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', creationTimestamp: meta('n1', 600).creationTimestamp, labels: { 'node-role.kubernetes.io/control-plane': '', 'node-role.kubernetes.io/worker': '' } },
      spec: { unschedulable: true },
      status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v1.32.0' }, addresses: [{ type: 'InternalIP', address: '127.0.0.1' }] },
    };
    expect(rowCells(node, NOW)).toEqual(['n1', 'Ready,SchedulingDisabled', 'control-plane,worker', '10m', 'v1.32.0', '127.0.0.1', '<none>', '<unknown>', '<unknown>', '<unknown>']);
  });

  it('prints services with node ports and selectors', () => {
    const service: Service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta('s', 5),
      spec: { type: 'NodePort', clusterIP: '127.96.0.5', ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }], selector: { b: '2', a: '1' } },
    };
    expect(rowCells(service, NOW)).toEqual(['s', 'NodePort', '127.96.0.5', '<none>', '80:30080/TCP,53/UDP', '5s', 'a=1,b=2']);
  });

  it.each([
    ['an ExternalName by its name', { type: 'ExternalName', externalName: 'db.example.com' }, ['<none>', 'db.example.com']],
    ['external IPs', { type: 'ClusterIP', clusterIP: '127.96.0.7', externalIPs: ['192.0.2.1', '192.0.2.2'] }, ['127.96.0.7', '192.0.2.1,192.0.2.2']],
    ['a pending load balancer', { type: 'LoadBalancer', clusterIP: '127.96.0.8' }, ['127.96.0.8', '<pending>']],
  ] as const)('prints %s in the EXTERNAL-IP column as kube does', (_case, spec, [clusterIp, external]) => {
    const service = { apiVersion: 'v1', kind: 'Service', metadata: meta('s', 5), spec } as unknown as Service;
    expect(rowCells(service, NOW).slice(2, 4)).toEqual([clusterIp, external]);
  });

  it('formats endpoints like kubectl, with "+ N more..."', () => {
    const endpoints = (ips: string[]): Endpoints => ({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: meta('e', 1),
      subsets: [{ addresses: ips.map((ip) => ({ ip })), ports: [{ port: 8080 }] }],
    });
    expect(formatEndpoints(endpoints([]))).toBe('<none>');
    expect(formatEndpoints(endpoints(['127.100.0.1', '127.100.0.2']))).toBe('127.100.0.1:8080,127.100.0.2:8080');
    expect(formatEndpoints(endpoints(['1.1.1.1', '1.1.1.2', '1.1.1.3', '1.1.1.4', '1.1.1.5']))).toBe('1.1.1.1:8080,1.1.1.2:8080,1.1.1.3:8080 + 2 more...');
  });

  it('builds Tables with PartialObjectMetadata rows by default', () => {
    const table = toTable([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', labels: { a: 'b' } } }], {
      kind: 'Namespace',
      includeObject: 'Metadata',
      version: 'v1',
      resourceVersion: '4.0',
      now: NOW,
    });
    expect(table).toMatchObject({
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '4.0' },
      rows: [{ cells: ['x', 'Active', '<unknown>'], object: { kind: 'PartialObjectMetadata', metadata: { name: 'x', labels: { a: 'b' } } } }],
    });
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Status', 'Age']);
  });
});

describe('rows of the kinds printed from the registry columns (kube printers.go)', () => {
  const cases: [string, unknown, (string | number)[]][] = [
    ['ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('cm', 60), data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } }, ['cm', 3, '60s']],
    ['Secret', { apiVersion: 'v1', kind: 'Secret', metadata: meta('s', 120), type: 'kubernetes.io/tls', data: { 'tls.crt': 'AA==', 'tls.key': 'AA==' } }, ['s', 'kubernetes.io/tls', 2, '2m']],
    [
      'Job',
      { apiVersion: 'batch/v1', kind: 'Job', metadata: meta('j', 600), spec: { completions: 3, template: { spec: { containers: [{ name: 'c', image: 'busybox' }] } } }, status: { succeeded: 1, startTime: new Date(NOW - 300_000).toISOString() } },
      ['j', 'Running', '1/3', '5m', '10m', 'c', 'busybox', '<none>'],
    ],
    [
      'PersistentVolumeClaim',
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('data', 60), spec: { volumeName: 'pv-1', storageClassName: 'local', volumeMode: 'Filesystem' }, status: { phase: 'Bound', capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] } },
      ['data', 'Bound', 'pv-1', '1Gi', 'RWO', 'local', '<unset>', '60s', 'Filesystem'],
    ],
    ['RoleBinding', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: meta('rb', 60), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'view' }, subjects: [{ kind: 'ServiceAccount', name: 'app', namespace: 'default' }, { kind: 'User', name: 'alice' }] }, ['rb', 'Role/view', '60s', 'alice', '', 'default:app']],
    ['Role', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta('r', 60) }, ['r', new Date(NOW - 60_000).toISOString()]],
  ];
  it.each(cases)('%s', (kind, object, cells) => {
    expect(rowCells(object as Pod, NOW)).toEqual(cells);
    const table = toTable([object as Pod], { kind: kind as Pod['kind'], includeObject: 'None', version: 'v1', now: NOW });
    expect(table.columnDefinitions.length).toBe(cells.length);
  });
});

describe('every kind prints a row as wide as its columns', () => {
  const document = loadApiDocument();
  const kinds = STORED_KINDS.map((kind) => [kind.kind, kind.definition] as const);
  it.each(kinds)('%s with every field set', (kind, definition) => {
    const columns = toTable([], { kind: kind as Pod['kind'], includeObject: 'None', version: 'v1', now: NOW }).columnDefinitions.length;
    const full = { ...sampleObject(document, definition), metadata: { ...meta('full', 30) } } as unknown as Pod;
    for (const object of [full]) {
      const cells = rowCells(object, NOW);
      expect(cells).toHaveLength(columns);
      for (const cell of cells) expect(['string', 'number']).toContain(typeof cell);
    }
    expect(String(rowCells(full, NOW)[0])).not.toBe('');
  });
});
