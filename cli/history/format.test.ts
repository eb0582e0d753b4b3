import { describe, expect, it } from 'vitest';
import type { CauseLink, EventRecord, Version } from './api.ts';
import { distinctChains, formatAudit, formatClusterDiff, formatDiffLines, formatHistory, formatReconcile, formatReplayResult, formatWhy, objectState } from './format.ts';

const T0 = Date.parse('2024-05-01T12:00:00Z');

describe('formatDiffLines', () => {
  it('prints added, removed and changed fields', () => {
    expect(
      formatDiffLines([
        { type: 'added', path: 'spec.replicas', value: 3 },
        { type: 'removed', path: 'metadata.labels.tier', value: 'web' },
        { type: 'changed', path: 'spec.template.spec.containers[0].image', from: 'echo:1', to: 'echo:2' },
        { type: 'changed', path: 'metadata.annotations.note', from: 'two words', to: null },
        { type: 'added', path: 'spec.template.spec.containers[1]', value: { name: 'side', image: 'x' } },
      ]),
    ).toEqual([
      '+ spec.replicas: 3',
      '- metadata.labels.tier: web',
      '~ spec.template.spec.containers[0].image: echo:1 → echo:2',
      '~ metadata.annotations.note: "two words" → null',
      '+ spec.template.spec.containers[1].name: side',
      '+ spec.template.spec.containers[1].image: x',
    ]);
  });

  it('lists added maps field by field and leaves out the last-applied annotation', () => {
    expect(
      formatDiffLines([
        { type: 'added', path: 'status', value: { replicas: 1, conditions: [{ type: 'Available' }] } },
        { type: 'changed', path: 'metadata.annotations.kubectl.kubernetes.io/last-applied-configuration', from: '{}', to: '{"a":1}' },
      ]),
    ).toEqual(['+ status.replicas: 1', '+ status.conditions[0].type: Available']);
  });

  it('lists a new object field by field, and a deleted one as one line', () => {
    expect(formatDiffLines([{ type: 'changed', path: '.', from: null, to: { metadata: { name: 'web' }, spec: { replicas: 1, ports: [{ port: 80 }] } } }])).toEqual([
      '+ metadata.name: web',
      '+ spec.replicas: 1',
      '+ spec.ports[0].port: 80',
    ]);
    expect(formatDiffLines([{ type: 'changed', path: '.', from: { metadata: { name: 'web' } }, to: null }])).toEqual(['- (object deleted)']);
  });
});

const version = (overrides: Partial<Version>): Version => ({
  position: '2.0',
  topic: 'desired',
  partition: 0,
  offset: 1,
  time: T0,
  actor: { type: 'user', name: 'admin' },
  eventId: 'e1',
  eventType: 'ObjectCreated',
  verdict: { type: 'accepted' },
  change: 'ADDED',
  object: null,
  diff: [],
  managers: [],
  ...overrides,
});

describe('formatHistory', () => {
  it('names the field managers a version wrote, instead of their managedFields bookkeeping in the diff', () => {
    const entry = (manager: string, operation: string, time: string) => ({ manager, operation, apiVersion: 'apps/v1', time, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } });
    const created = { metadata: { name: 'web', managedFields: [entry('kubectl-client-side-apply', 'Update', '2024-05-01T12:00:00Z')] }, spec: { replicas: 2 } };
    const text = formatHistory([
      version({ diff: [{ type: 'changed', path: '.', from: null, to: created }], managers: [{ manager: 'kubectl-client-side-apply', operation: 'Update' }] }),
      version({
        position: '6.1',
        eventType: 'ObjectUpdated',
        change: 'MODIFIED',
        diff: [
          { type: 'changed', path: 'metadata.managedFields[0].time', from: '2024-05-01T12:00:00Z', to: '2024-05-01T12:01:00Z' },
          { type: 'changed', path: 'spec.replicas', from: 2, to: 3 },
        ],
        managers: [{ manager: 'kubectl', operation: 'Apply' }, { manager: 'kubelet', operation: 'Update', subresource: 'status' }],
      }),
    ]);
    expect(text.split('\n').slice(1, 7)).toEqual([
      '2.0        2024-05-01T12:00:00Z   user:admin   ObjectCreated   accepted',
      '    field manager: kubectl-client-side-apply (Update)',
      '    + metadata.name: web',
      '    + spec.replicas: 2',
      '6.1        2024-05-01T12:00:00Z   user:admin   ObjectUpdated   accepted',
      '    field manager: kubectl (Apply), kubelet (Update, status)',
    ]);
    expect(text).toContain('    ~ spec.replicas: 2 → 3');
    expect(text).not.toContain('managedFields');
  });

  it('prints a row per event with its indented diff, rejected writes and the deletion', () => {
    const text = formatHistory([
      version({ diff: [{ type: 'changed', path: '.', from: null, to: { spec: { replicas: 2 } } }] }),
      version({
        position: '6.1',
        time: T0 + 60_000,
        eventType: 'ObjectUpdated',
        change: 'MODIFIED',
        diff: [{ type: 'changed', path: 'spec.replicas', from: 2, to: 3 }],
      }),
      version({
        position: '7.1',
        time: T0 + 61_000,
        eventType: 'ObjectUpdated',
        change: null,
        verdict: { type: 'rejected', reason: 'Conflict', message: 'the object has been modified' },
      }),
      version({ position: '10.3', time: T0 + 120_000, eventType: 'ObjectDeleted', change: 'DELETED', diff: [{ type: 'changed', path: '.', from: {}, to: null }] }),
    ]);
    expect(text).toBe(
      [
        'POSITION   TIME                   ACTOR        EVENT           VERDICT',
        '2.0        2024-05-01T12:00:00Z   user:admin   ObjectCreated   accepted',
        '    + spec.replicas: 2',
        '6.1        2024-05-01T12:01:00Z   user:admin   ObjectUpdated   accepted',
        '    ~ spec.replicas: 2 → 3',
        '7.1        2024-05-01T12:01:01Z   user:admin   ObjectUpdated   rejected (Conflict)',
        '    ! the object has been modified',
        '10.3       2024-05-01T12:02:00Z   user:admin   ObjectDeleted   accepted',
        '    - (object deleted)',
        '',
      ].join('\n'),
    );
  });
});

const event = (id: string, key: string, eventType: string, actor: EventRecord['actor'], causationId: string | null): EventRecord => ({
  id,
  key,
  eventType,
  actor,
  causationId,
  time: T0,
  topic: 'desired',
  partition: 0,
  offset: Number(id.slice(1)),
  position: `${Number(id.slice(1)) + 1}.0`,
  verdict: { type: 'accepted' },
});

describe('formatWhy', () => {
  const deploymentCreated: CauseLink = { event: event('e1', 'Deployment/default/web', 'ObjectCreated', { type: 'user', name: 'admin' }, null), summary: '' };
  const rsCreated: CauseLink = { event: event('e2', 'ReplicaSet/default/web-7d9', 'ObjectCreated', { type: 'controller', name: 'deployment' }, 'e1'), summary: '' };
  const podCreated: CauseLink = { event: event('e3', 'Pod/default/web-7d9-abc12', 'ObjectCreated', { type: 'controller', name: 'replicaset' }, 'e2'), summary: '' };
  const bound: CauseLink = {
    event: { ...event('e4', 'Pod/default/web-7d9-abc12', 'PodBound', { type: 'controller', name: 'scheduler' }, 'e3'), decidedAt: '3.0' },
    rationale: {
      filtered: [{ node: 'node-3', reasons: ['Insufficient cpu'] }],
      scores: [
        { node: 'node-1', score: 60, plugins: [] },
        { node: 'node-2', score: 87, plugins: [] },
      ],
      feasibleNodes: 2,
      totalNodes: 3,
    },
    summary: '',
  };
  const running: CauseLink = { event: event('e5', 'Pod/default/web-7d9-abc12', 'PodStatusChanged', { type: 'node', name: 'node-2' }, 'e4'), summary: '' };

  it('prints the chain back to the user request as a tree, dropping chains contained in others', () => {
    const chains = [
      [running, bound, podCreated, rsCreated, deploymentCreated],
      [bound, podCreated, rsCreated, deploymentCreated],
      [podCreated, rsCreated, deploymentCreated],
    ];
    expect(distinctChains(chains)).toHaveLength(1);
    expect(formatWhy('Pod default/web-7d9-abc12 Running', { key: 'Pod/default/web-7d9-abc12' }, chains)).toBe(
      [
        'Pod default/web-7d9-abc12 Running',
        '  ← status reported by node "node-2"  [2024-05-01T12:00:00Z 6.0]',
        '    ← bound to node "node-2" by controller "scheduler" (score 87, 1 node filtered: node-3: Insufficient cpu)  [2024-05-01T12:00:00Z 5.0, decided at 3.0]',
        '        scores: node-2=87, node-1=60',
        '      ← created by controller "replicaset"  [2024-05-01T12:00:00Z 4.0]',
        '        ← ReplicaSet default/web-7d9 created by controller "deployment"  [2024-05-01T12:00:00Z 3.0]',
        '          ← Deployment default/web applied by user "admin"  [2024-05-01T12:00:00Z 2.0]',
        '',
      ].join('\n'),
    );
  });

  it('names the victims and the reason of the preemption a binding followed (v9 rationale)', () => {
    const preempting: CauseLink = {
      ...bound,
      rationale: {
        ...(bound.rationale as NonNullable<CauseLink['rationale']>),
        preemption: {
          nominatedNode: 'node-2',
          reason: '0/3 nodes are available: 3 Insufficient cpu.',
          victims: [
            { namespace: 'default', name: 'low-1', uid: 'u-1', priority: 0 },
            { namespace: 'batch', name: 'low-2', uid: null, priority: -1 },
          ],
        },
      },
    };
    expect(formatWhy('Pod default/web-7d9-abc12 Running', { key: 'Pod/default/web-7d9-abc12', nodeName: 'node-2' }, [[preempting, podCreated]])).toBe(
      [
        'Pod default/web-7d9-abc12 Running',
        '  ← bound to node "node-2" by controller "scheduler" (score 87, 1 node filtered: node-3: Insufficient cpu)  [2024-05-01T12:00:00Z 5.0, decided at 3.0]',
        '      scores: node-2=87, node-1=60',
        '      preempted 2 pods on node "node-2": default/low-1 (priority 0, uid u-1), batch/low-2 (priority -1); because 0/3 nodes are available: 3 Insufficient cpu.',
        '    ← created by controller "replicaset"  [2024-05-01T12:00:00Z 4.0]',
        '',
      ].join('\n'),
    );
  });

  it('names the field managers a create or update wrote', () => {
    const applied: CauseLink = { ...deploymentCreated, managers: [{ manager: 'kubectl', operation: 'Apply' }] };
    const scaled: CauseLink = { event: event('e6', 'Deployment/default/web', 'ObjectUpdated', { type: 'user', name: 'admin' }, null), summary: '', managers: [{ manager: 'kubectl', operation: 'Update', subresource: 'scale' }] };
    const text = formatWhy('Deployment default/web', { key: 'Deployment/default/web' }, [[scaled], [applied]]);
    expect(text).toContain('← updated by user "admin" as kubectl (Update, scale)');
    expect(text).toContain('← applied by user "admin" as kubectl (Apply)');
  });

  it('words the writes of a custom object as those of a built-in kind', () => {
    const key = 'Database.ops.example.com/shop/orders';
    const links: CauseLink[] = [
      { event: event('e7', key, 'CustomObjectUpdated', { type: 'user', name: 'admin' }, null), summary: '' },
      { event: event('e6', key, 'CustomObjectCreated', { type: 'user', name: 'admin' }, null), summary: '' },
      { event: event('e8', key, 'CustomObjectDeleted', { type: 'user', name: 'admin' }, null), summary: '' },
    ];
    const text = formatWhy('Database.ops.example.com shop/orders', { key }, links.map((link) => [link]));
    expect(text).toContain('← updated by user "admin"  [');
    expect(text).toContain('← applied by user "admin"  [');
    expect(text).toContain('← deleted by user "admin"  [');
  });

  it('names the node the pod is bound to when scores tie', () => {
    const tied: CauseLink = {
      ...bound,
      rationale: { filtered: [], scores: [{ node: 'node-1', score: 50, plugins: [] }, { node: 'node-2', score: 50, plugins: [] }], feasibleNodes: 2, totalNodes: 2 },
    };
    expect(formatWhy('Pod default/web-7d9-abc12 Running', { key: 'Pod/default/web-7d9-abc12', nodeName: 'node-2' }, [[tied]])).toContain(
      '← bound to node "node-2" by controller "scheduler" (score 50, 2 of 2 nodes feasible)',
    );
  });

  it('keeps separate chains that do not contain each other', () => {
    const unlinkedStatus: CauseLink = { event: event('e6', 'Pod/default/p', 'PodStatusChanged', { type: 'node', name: 'node-1' }, null), summary: '' };
    expect(distinctChains([[unlinkedStatus], [podCreated, rsCreated], [podCreated, rsCreated]])).toEqual([[unlinkedStatus], [podCreated, rsCreated]]);
  });

  it('names the state of the object', () => {
    expect(objectState(undefined)).toBe('(deleted)');
    expect(objectState({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [] }, status: { phase: 'Running' } })).toBe('Running');
  });
});

describe('other outputs', () => {
  it('audit table', () => {
    expect(
      formatAudit({ events: [event('e1', 'Deployment/default/web', 'ObjectCreated', { type: 'user', name: 'admin' }, null), event('e2', 'Node//node-1', 'ObjectDeleted', { type: 'user', name: 'ops' }, null)] }),
    ).toBe(
      [
        'POSITION   TIME                   ACTOR        EVENT           OBJECT                   VERDICT',
        '2.0        2024-05-01T12:00:00Z   user:admin   ObjectCreated   Deployment/default/web   accepted',
        '3.0        2024-05-01T12:00:00Z   user:ops     ObjectDeleted   Node/node-1              accepted',
        '',
      ].join('\n'),
    );
  });

  it('cluster diff', () => {
    const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod' as const, metadata: { name, namespace: 'default' }, spec: { containers: [] } });
    expect(
      formatClusterDiff({
        from: '10',
        to: '42',
        created: [pod('new')],
        deleted: [pod('old')],
        changed: [{ before: pod('web'), after: pod('web'), diff: [{ type: 'changed', path: 'status.phase', from: 'Pending', to: 'Running' }] }],
      }),
    ).toBe(['from position 10 to position 42:', '+ Pod default/new', '- Pod default/old', '~ Pod default/web', '    ~ status.phase: Pending → Running', ''].join('\n'));
  });

  it('replay summary says whether the hashes are equal', () => {
    const result = { type: 'result' as const, events: 1200, seconds: 0.5, eventsPerSecond: 2400, stateHash: 'abc', liveStateHash: 'abc', position: '1200' };
    expect(formatReplayResult(result)).toBe('replayed 1200 events in 0.50 s (2400 events/s); state hash abc; live hash abc (equal)\n');
    expect(formatReplayResult({ ...result, liveStateHash: 'def' })).toContain('live hash def (DIFFERENT)');
  });

  it('reconcile result as YAML', () => {
    const command = { type: 'PodBound' as const, namespace: 'default', name: 'p', node: 'node-2', expectedPodVersion: '4', rationale: { filtered: [], scores: [], feasibleNodes: 1, totalNodes: 1 } };
    const text = formatReconcile({ controller: 'scheduler', key: 'Pod/default/p', at: '42', commands: [command], recorded: [command], identical: true });
    expect(text).toContain('# controller "scheduler" deciding Pod/default/p at position 42');
    expect(text).toContain('- expectedPodVersion: "4"\n  name: p\n  namespace: default\n  node: node-2');
    expect(text).toContain('# identical to what the controller appended then');
  });
});
