import { describe, expect, it } from 'vitest';
import type { Deployment, PodTemplateSpec, ReplicaSet } from '../../schemas/index.ts';
import { parseDuration, rollbackTemplate, rolloutStatus } from './rollout.ts';

const template = (image: string): PodTemplateSpec => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'echo', image }] },
});

const deployment = (image: string, overrides: Partial<Deployment> = {}): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', uid: 'd-1', generation: 3, annotations: { 'deployment.kubernetes.io/revision': '3' } },
  spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: template(image) },
  ...overrides,
});

const replicaSet = (name: string, revision: string | undefined, image: string, owner = 'd-1'): ReplicaSet => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: {
    name,
    namespace: 'default',
    ...(revision !== undefined ? { annotations: { 'deployment.kubernetes.io/revision': revision } } : {}),
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: owner, controller: true }],
  },
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web', 'pod-template-hash': name.slice(4) } }, spec: { containers: [{ name: 'echo', image }] } },
  },
});

const history = [
  replicaSet('web-aaa', '1', 'echo:1'),
  replicaSet('web-ccc', '3', 'echo:3'),
  replicaSet('web-bbb', '2', 'echo:2'),
  replicaSet('web-zzz', '9', 'echo:9', 'someone-else'),
  replicaSet('web-nnn', undefined, 'echo:n'),
];

describe('rollbackTemplate', () => {
  it('picks the second-highest revision by default and strips pod-template-hash', () => {
    expect(rollbackTemplate(deployment('echo:3'), history)).toEqual({ type: 'rollback', revision: 2, template: template('echo:2') });
  });

  it('picks the requested revision', () => {
    expect(rollbackTemplate(deployment('echo:3'), history, 1)).toEqual({ type: 'rollback', revision: 1, template: template('echo:1') });
  });

  it('ignores ReplicaSets owned by another deployment and those without a revision', () => {
    expect(rollbackTemplate(deployment('echo:3'), history, 9)).toEqual({ type: 'error', message: 'unable to find specified revision 9 in history' });
  });

  it('skips when the chosen revision is already the current template', () => {
    expect(rollbackTemplate(deployment('echo:2'), history)).toEqual({
      type: 'skipped',
      revision: 2,
      message: 'skipped rollback (current template already matches revision 2)',
    });
  });

  it('fails without a previous revision', () => {
    expect(rollbackTemplate(deployment('echo:1'), [replicaSet('web-aaa', '1', 'echo:1')])).toEqual({
      type: 'error',
      message: 'no rollout history found for deployment "web"',
    });
  });
});

describe('rolloutStatus (kubectl DeploymentStatusViewer)', () => {
  const withStatus = (status: Deployment['status'], generation = 3): Deployment => deployment('echo:3', { metadata: { name: 'web', generation }, status });
  it.each<[string, Deployment, ReturnType<typeof rolloutStatus>]>([
    ['spec not observed', withStatus({ observedGeneration: 2 }), { type: 'progressing', message: 'Waiting for deployment spec update to be observed...' }],
    [
      'replicas being updated',
      withStatus({ observedGeneration: 3, replicas: 4, updatedReplicas: 1, availableReplicas: 3 }),
      { type: 'progressing', message: 'Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...' },
    ],
    [
      'old replicas terminating',
      withStatus({ observedGeneration: 3, replicas: 4, updatedReplicas: 3, availableReplicas: 3 }),
      { type: 'progressing', message: 'Waiting for deployment "web" rollout to finish: 1 old replicas are pending termination...' },
    ],
    [
      'updated replicas becoming available',
      withStatus({ observedGeneration: 3, replicas: 3, updatedReplicas: 3, availableReplicas: 1 }),
      { type: 'progressing', message: 'Waiting for deployment "web" rollout to finish: 1 of 3 updated replicas are available...' },
    ],
    [
      'done',
      withStatus({ observedGeneration: 3, replicas: 3, updatedReplicas: 3, availableReplicas: 3 }),
      { type: 'done', message: 'deployment "web" successfully rolled out' },
    ],
    [
      'deadline exceeded',
      withStatus({ observedGeneration: 3, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] }),
      { type: 'failed', message: 'deployment "web" exceeded its progress deadline' },
    ],
  ])('%s', (_, d, expected) => {
    expect(rolloutStatus(d)).toEqual(expected);
  });
});

describe('parseDuration', () => {
  it.each([
    ['0', 0],
    ['0s', 0],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['250ms', 250],
  ])('%s → %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it('rejects other text', () => {
    expect(() => parseDuration('5 minutes')).toThrow(/invalid duration/);
  });
});
