import { describe, expect, it } from 'vitest';
import { createNodeInfo, createSchedulingContext, type FilterResult } from '../../framework.ts';
import { makeNode, makePod } from '../../test-fixtures.ts';
import { createNodeName, matchesNodeName } from './index.ts';

describe('NodeName', () => {
  const plugin = createNodeName();
  it.each<[string, string | undefined, FilterResult]>([
    ['no node requested', undefined, { type: 'fit' }],
    ['empty node name', '', { type: 'fit' }],
    ['this node requested', 'node-a', { type: 'fit' }],
    ['another node requested', 'node-b', { type: 'unfit', reasons: ["node(s) didn't match the requested node name"], unresolvable: true }],
  ])('%s', (_case, nodeName, expected) => {
    const node = makeNode({ name: 'node-a' });
    const pod = makePod({ name: 'p', ...(nodeName === undefined ? {} : { nodeName }) });
    const nodeInfo = createNodeInfo(node, []);
    expect(matchesNodeName(pod, node)).toBe(expected.type === 'fit');
    expect(plugin.filter(pod, nodeInfo, createSchedulingContext(pod, [nodeInfo]))).toEqual(expected);
  });
});
