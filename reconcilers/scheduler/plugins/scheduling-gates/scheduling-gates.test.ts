import { describe, expect, it } from 'vitest';
import { buildNodeInfos } from '../../framework.ts';
import { makeNode, makePod } from '../../test-fixtures.ts';
import { createDefaultProfile } from '../index.ts';
import { preEnqueue, schedule } from '../../scheduler.ts';
import { createSchedulingGates, isSchedulingGated } from './index.ts';

describe('SchedulingGates', () => {
  const plugin = createSchedulingGates();
  it.each<[string, string[] | undefined, boolean]>([
    ['no gates field', undefined, false],
    ['an empty list', [], false],
    ['one gate', ['example.com/wait'], true],
    ['two gates', ['a', 'b'], true],
  ])('%s', (_case, gates, expected) => {
    const pod = makePod({ name: 'p', ...(gates === undefined ? {} : { schedulingGates: gates }) });
    expect(isSchedulingGated(pod)).toBe(expected);
    expect(plugin.preEnqueue(pod)).toEqual(
      expected
        ? { type: 'gated', reason: 'SchedulingGated', message: 'Scheduling is blocked due to non-empty scheduling gates' }
        : { type: 'ready' },
    );
  });

  it('is the default profile PreEnqueue step', () => {
    const profile = createDefaultProfile();
    expect(preEnqueue(makePod({ name: 'p', schedulingGates: ['x'] }), profile).type).toBe('gated');
    expect(preEnqueue(makePod({ name: 'p' }), profile).type).toBe('ready');
    // The filters alone would place it: the gate is what holds it back.
    expect(schedule(makePod({ name: 'p', schedulingGates: ['x'] }), buildNodeInfos([makeNode({ name: 'n' })], []), profile).type).toBe('bound');
  });
});
