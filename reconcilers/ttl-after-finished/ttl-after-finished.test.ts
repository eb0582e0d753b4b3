import { afterEach, describe, expect, it } from 'vitest';
import type { Job, JobCondition } from '../../schemas/index.ts';
import { isoTime } from '../replicaset/objects.ts';
import { createTestCluster, type TestCluster } from '../testing.ts';
import { createTtlAfterFinishedController, decideTtl, ttlKeysFor } from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const KEY = 'Job.batch/default/pi';
const T0 = Date.UTC(2030, 0, 1);

const condition = (type: string, at: number): JobCondition => ({ type, status: 'True', lastTransitionTime: isoTime(at), lastProbeTime: isoTime(at) });

/** A Job with `ttl`, finished at T0 as given (status written as the job controller does). */
const setup = (ttl: number | undefined, finished: 'Complete' | 'Failed' | 'running') => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  const job = cluster.create<Job>({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'pi', namespace: 'default' },
    spec: {
      ...(ttl === undefined ? {} : { ttlSecondsAfterFinished: ttl }),
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'logplane/crasher' }] } },
    },
  });
  const status =
    finished === 'running'
      ? { active: 1 }
      : finished === 'Complete'
        ? { succeeded: 1, completionTime: isoTime(T0), conditions: [condition('SuccessCriteriaMet', T0), condition('Complete', T0)] }
        : { failed: 1, conditions: [condition('FailureTarget', T0), condition('Failed', T0)] };
  cluster.apply({ type: 'ObjectUpdated', object: { ...job, status }, expectedResourceVersion: null, subresource: 'status' });
  return { cluster, job: cluster.view().get(KEY) as Job };
};

describe('ttl-after-finished decide', () => {
  it.each([{ finished: 'Complete' as const }, { finished: 'Failed' as const }])('deletes a $finished Job once its TTL passed, requeueing until then', ({ finished }) => {
    const { cluster, job } = setup(60, finished);
    expect(decideTtl(KEY, cluster.view(), T0 + 20_000)).toEqual({ commands: [], requeueAfterMs: 40_000 });
    expect(decideTtl(KEY, cluster.view(), T0 + 60_000)).toEqual({
      commands: [
        {
          type: 'ObjectDeleted',
          kind: 'Job',
          namespace: 'default',
          name: 'pi',
          expectedResourceVersion: job.metadata.resourceVersion,
          uid: job.metadata.uid,
          propagationPolicy: 'Background',
          gracePeriodSeconds: null,
        },
      ],
    });
    const [record] = cluster.apply(...decideTtl(KEY, cluster.view(), T0 + 60_000).commands);
    expect(record?.verdict.type).toBe('accepted');
    expect(cluster.view().get(KEY)).toBeUndefined();
  });

  it('leaves a running Job and a Job without TTL alone', () => {
    const running = setup(0, 'running');
    expect(decideTtl(KEY, running.cluster.view(), T0 + 3_600_000)).toEqual({ commands: [] });
    const forever = setup(undefined, 'Complete');
    expect(decideTtl(KEY, forever.cluster.view(), T0 + 3_600_000)).toEqual({ commands: [] });
    expect(createTtlAfterFinishedController().initialKeys(forever.cluster.view())).toEqual([]);
    expect(createTtlAfterFinishedController().initialKeys(running.cluster.view())).toEqual([KEY]);
    const change = { eventId: 'e', partition: 0, offset: 0, type: 'MODIFIED', key: KEY, object: running.job, topic: 'observed' } as const;
    expect(ttlKeysFor(change)).toEqual([KEY]);
    expect(ttlKeysFor({ ...change, object: forever.job })).toEqual([]);
  });
});
