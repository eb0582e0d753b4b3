/**
 * kubelet's status merge (`mergePodStatus` of its status manager): a report replaces what
 * kubelet owns and keeps what others wrote.
 */
import { describe, expect, it } from 'vitest';
import type { PodStatus } from '../../schemas/index.ts';
import { mergePodStatus } from './status.ts';

const reported: PodStatus = {
  phase: 'Running',
  conditions: [
    { type: 'Initialized', status: 'True' },
    { type: 'Ready', status: 'True' },
    { type: 'ContainersReady', status: 'True' },
    { type: 'PodScheduled', status: 'True' },
  ],
};

describe('mergePodStatus', () => {
  it('keeps the conditions kubelet does not own, ahead of its own, and drops its own stale ones', () => {
    const current: PodStatus = {
      phase: 'Pending',
      conditions: [
        { type: 'PodScheduled', status: 'False', reason: 'Unschedulable' },
        { type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler' },
        { type: 'example.com/gate', status: 'True' },
      ],
    };
    const merged = mergePodStatus(current, reported);
    expect(merged.phase).toBe('Running');
    expect(merged.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      'DisruptionTarget=True',
      'example.com/gate=True',
      'Initialized=True',
      'Ready=True',
      'ContainersReady=True',
      'PodScheduled=True',
    ]);
  });

  it("keeps the scheduler's nominatedNodeName, and adds none where there was none", () => {
    expect(mergePodStatus({ nominatedNodeName: 'node-2' }, reported).nominatedNodeName).toBe('node-2');
    expect(mergePodStatus({}, reported)).not.toHaveProperty('nominatedNodeName');
    expect(mergePodStatus(undefined, reported)).toEqual(reported);
  });

  it('does not change the report it is given', () => {
    const copy = structuredClone(reported);
    mergePodStatus({ conditions: [{ type: 'DisruptionTarget', status: 'True' }], nominatedNodeName: 'n' }, reported);
    expect(reported).toEqual(copy);
  });
});
