import { describe, expect, it } from 'vitest';
import { createNodeInfo, createSchedulingContext, type FilterResult } from '../../framework.ts';
import type { Toleration } from '../../../../schemas/index.ts';
import { makeNode, makePod } from '../../test-fixtures.ts';
import { admitsDespiteCordon, createNodeUnschedulable } from './index.ts';

describe('NodeUnschedulable', () => {
  const plugin = createNodeUnschedulable();
  const unschedulable: FilterResult = { type: 'unfit', reasons: ['node(s) were unschedulable'], unresolvable: true };
  it.each<[string, boolean | undefined, readonly Toleration[] | undefined, FilterResult]>([
    ['schedulable node', undefined, undefined, { type: 'fit' }],
    ['unschedulable: false', false, undefined, { type: 'fit' }],
    ['cordoned node', true, undefined, unschedulable],
    ['cordoned node, pod tolerates the unschedulable taint', true, [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }], { type: 'fit' }],
    ['cordoned node, pod tolerates everything', true, [{ operator: 'Exists' }], { type: 'fit' }],
    ['cordoned node, NoExecute toleration only', true, [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoExecute' }], unschedulable],
  ])('%s', (_case, cordoned, tolerations, expected) => {
    const node = makeNode({ name: 'n', ...(cordoned === undefined ? {} : { unschedulable: cordoned }) });
    const pod = makePod({ name: 'p', ...(tolerations === undefined ? {} : { tolerations }) });
    const nodeInfo = createNodeInfo(node, []);
    expect(admitsDespiteCordon(pod, node)).toBe(expected.type === 'fit');
    expect(plugin.filter(pod, nodeInfo, createSchedulingContext(pod, [nodeInfo]))).toEqual(expected);
  });
});
