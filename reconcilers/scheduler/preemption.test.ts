import { describe, expect, it } from 'vitest';
import type { BindingPreemption, Pod, PodCondition } from '../../schemas/index.ts';
import { PREEMPTION_RECORD, preemptionRecord, recordedPreemption } from './preemption.ts';
import { makePod } from './test-fixtures.ts';

const withConditions = (conditions: PodCondition[]): Pod => ({ ...makePod({ name: 'high' }), status: { phase: 'Pending', nominatedNodeName: 'node-1', conditions } });

describe('the preemption recorded on a nominated pod (read back for its binding)', () => {
  it.each<[string, BindingPreemption]>([
    [
      'victims with and without a uid, negative priorities',
      {
        nominatedNode: 'node-1',
        reason: '0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}.',
        victims: [
          { namespace: 'batch', name: 'worker-7f9c-x2k8p', uid: '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b', priority: 10 },
          { namespace: 'default', name: 'no-uid', uid: null, priority: -2147483648 },
        ],
      },
    ],
    ['no victims (room the nominated pods left)', { nominatedNode: 'node-1', reason: '0/1 nodes are available: 1 Insufficient memory.', victims: [] }],
  ])('reads back what it recorded: %s', (_name, preemption) => {
    expect(recordedPreemption(withConditions([preemptionRecord(preemption, 0)]), 'node-1')).toEqual(preemption);
  });

  it.each<[string, PodCondition[], string]>([
    ['none recorded', [{ type: 'PodScheduled', status: 'False' }], 'node-1'],
    ['recorded for another node', [preemptionRecord({ nominatedNode: 'node-2', reason: 'r', victims: [] }, 0)], 'node-1'],
    ['not True', [{ ...preemptionRecord({ nominatedNode: 'node-1', reason: 'r', victims: [] }, 0), status: 'False' }], 'node-1'],
    ['a message the scheduler does not write', [{ type: PREEMPTION_RECORD, status: 'True', message: 'nominated node node-1, preempting 2 pod(s): default/a (priority 0); reason: r' }], 'node-1'],
  ])('finds none when %s', (_name, conditions, node) => {
    expect(recordedPreemption(withConditions(conditions), node)).toBeUndefined();
  });
});
