/**
 * A Job end to end on both logs (and 1 and 3 partitions): the job controller on the real
 * runtime, the test nodes standing in for the scheduler and the node agents, and the test
 * finishing the running pods as their containers would.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { View } from '../../projections/index.ts';
import type { Job, Pod } from '../../schemas/index.ts';
import { isoTime } from '../replicaset/objects.ts';
import { LOG_ADAPTERS, startScenario, type Scenario } from '../testing.ts';
import { createJobController } from './index.ts';

const KEY = 'Job.batch/default/pi';
const jobOf = (view: View): Job | undefined => view.get(KEY) as Job | undefined;
const runningPods = (view: View): Pod[] => (view.list('Pod', 'default') as Pod[]).filter((pod) => pod.status?.phase === 'Running' && !pod.metadata.deletionTimestamp);
const hasCondition = (view: View, type: string): boolean => jobOf(view)?.status?.conditions?.some((c) => c.type === type && c.status === 'True') === true;

const cases = LOG_ADAPTERS.flatMap((adapter) => [1, 3].map((partitions) => ({ adapter, partitions, label: `${adapter.name} log, ${partitions} partition(s)` })));

describe.each(cases)('a Job on the $label', ({ adapter, partitions }) => {
  let scenario: Scenario;
  beforeEach(async () => {
    scenario = await startScenario({ adapter, partitions, controllers: [createJobController()] });
  });
  afterEach(async () => {
    await scenario.close();
  });

  it('runs 5 completions 2 at a time, counts every pod once, and completes', async () => {
    await scenario.apply({
      type: 'ObjectCreated',
      object: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'pi', namespace: 'default' },
        spec: {
          completions: 5,
          parallelism: 2,
          backoffLimit: 6,
          completionMode: 'NonIndexed',
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'logplane/crasher' }] } },
        },
      },
    });
    for (let finished = 0; !hasCondition(scenario.projection.view(), 'SuccessCriteriaMet'); ) {
      await scenario.waitUntil('a pod runs', (view) => runningPods(view).length > 0 || hasCondition(view, 'SuccessCriteriaMet'));
      const running = runningPods(scenario.projection.view());
      expect(running.length).toBeLessThanOrEqual(2);
      for (const pod of running) {
        await scenario.apply({
          type: 'PodStatusChanged',
          namespace: 'default',
          name: pod.metadata.name,
          uid: pod.metadata.uid ?? null,
          status: { phase: 'Succeeded', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: isoTime(Date.now()) }] },
        });
        finished += 1;
      }
      expect(finished).toBeLessThanOrEqual(5);
    }
    await scenario.waitUntil('the Job is Complete', (view) => hasCondition(view, 'Complete'));
    const job = jobOf(scenario.projection.view());
    expect(job?.status).toMatchObject({ succeeded: 5, ready: 0, terminating: 0 });
    expect(job?.status).not.toHaveProperty('failed');
    expect(job?.status).not.toHaveProperty('active');
    expect(job?.status?.uncountedTerminatedPods?.succeeded ?? []).toEqual([]);
    const pods = scenario.projection.view().list('Pod', 'default') as Pod[];
    expect(pods).toHaveLength(5);
    expect(pods.every((pod) => pod.status?.phase === 'Succeeded' && pod.metadata.finalizers === undefined)).toBe(true);
  });
});
