/**
 * The resource quota controller on both logs, on the real runtime with test nodes running
 * the pods: a ResourceQuota's `status.hard` follows its `spec.hard` and `status.used`
 * follows the namespace's creates, terminations and deletes as kube's controller counts
 * them (`pods` and compute requests of non-terminal pods, `count/pods` of every pod,
 * `count/configmaps`), objects of another namespace not counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import type { ConfigMap, EventBody, KubeObject, Pod, ResourceQuota } from '../../schemas/index.ts';
import { deleteCommand, updateCommand } from '../replicaset/objects.ts';
import { LOG_ADAPTERS, namespaceObject, startScenario, type Scenario } from '../testing.ts';
import { createResourceQuotaController } from './index.ts';

const QUOTA_KEY = 'ResourceQuota/default/compute';

const HARD = { pods: '4', 'count/pods': '5', 'requests.cpu': '2', 'requests.memory': '1Gi', 'count/configmaps': '3' };

const quota: ResourceQuota = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'compute', namespace: 'default' }, spec: { hard: HARD } };

const pod = (name: string, namespace = 'default'): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace },
  spec: { containers: [{ name: 'app', image: 'logplane/echo:1', resources: { requests: { cpu: '250m', memory: '128Mi' } } }] },
});

const configMap = (name: string): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { a: '1' } });

const statusOf = (view: View): ResourceQuota['status'] => (view.get(QUOTA_KEY) as ResourceQuota | undefined)?.status;

const used = (values: Partial<Record<keyof typeof HARD, string>>): Record<string, string> => ({
  pods: '0',
  'count/pods': '0',
  'requests.cpu': '0',
  'requests.memory': '0',
  'count/configmaps': '0',
  ...values,
});

describe.each(LOG_ADAPTERS)('resource quota usage on the $name log', (adapter) => {
  let scenario: Scenario;
  beforeAll(async () => {
    scenario = await startScenario({ adapter, nodes: ['n1'], controllers: [createResourceQuotaController()] });
  });
  afterAll(async () => {
    await scenario?.close();
  });

  const waitForUsed = (expected: Record<string, string>, what: string): Promise<void> =>
    scenario.waitUntil(what, (view) => sameRecord(statusOf(view)?.used, expected));

  it('reports status.hard from spec.hard and nothing used in an empty namespace', async () => {
    await scenario.apply({ type: 'ObjectCreated', object: quota });
    await waitForUsed(used({}), 'the quota reports nothing used');
    expect(statusOf(scenario.projection.view())?.hard).toEqual(HARD);
  });

  it('counts created pods (pods, count/pods, requests) and config maps, and not those of another namespace', async () => {
    await scenario.apply(
      { type: 'ObjectCreated', object: namespaceObject('other') },
      { type: 'ObjectCreated', object: pod('a') },
      { type: 'ObjectCreated', object: pod('b') },
      { type: 'ObjectCreated', object: pod('elsewhere', 'other') },
      { type: 'ObjectCreated', object: configMap('settings') },
    );
    await waitForUsed(used({ pods: '2', 'count/pods': '2', 'requests.cpu': '500m', 'requests.memory': '256Mi', 'count/configmaps': '1' }), 'two pods and a config map are counted');
  });

  it('stops counting a terminated pod against pods and requests, still against count/pods', async () => {
    await scenario.waitUntil('pod a runs', (view) => (view.get('Pod/default/a') as Pod | undefined)?.status?.phase === 'Running');
    const running = scenario.projection.view().get('Pod/default/a') as Pod;
    await scenario.apply({ type: 'PodStatusChanged', namespace: 'default', name: 'a', uid: running.metadata.uid ?? null, status: { ...running.status, phase: 'Succeeded' } });
    await waitForUsed(used({ pods: '1', 'count/pods': '2', 'requests.cpu': '250m', 'requests.memory': '128Mi', 'count/configmaps': '1' }), 'the succeeded pod counts only in count/pods');
  });

  it('gives back what deleted objects used', async () => {
    const view = scenario.projection.view();
    const deletes: EventBody[] = ['Pod/default/a', 'Pod/default/b', 'ConfigMap/default/settings'].map((key) => ({ ...deleteCommand(view.get(key) as KubeObject), gracePeriodSeconds: 0 }));
    await scenario.apply(...deletes);
    await waitForUsed(used({}), 'nothing is used again');
  });

  it('follows a change of spec.hard in status.hard', async () => {
    const current = scenario.projection.view().get(QUOTA_KEY) as ResourceQuota;
    const hard = { ...HARD, 'requests.cpu': '3', 'limits.memory': '2Gi' };
    await scenario.apply(updateCommand(current, { ...current, spec: { hard } }));
    await scenario.waitUntil('status.hard follows the spec', (view) => sameRecord(statusOf(view)?.hard, hard));
    expect(statusOf(scenario.projection.view())?.used).toEqual({ ...used({}), 'limits.memory': '0' });
  });
});

/** Whether two resource lists hold the same entries, whatever their order. */
const sameRecord = (actual: Record<string, string> | undefined, expected: Record<string, string>): boolean =>
  actual !== undefined && Object.keys(actual).length === Object.keys(expected).length && Object.entries(expected).every(([name, value]) => actual[name] === value);
