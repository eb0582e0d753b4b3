import { describe, expect, it } from 'vitest';
import { buildNodeInfos, createNodeInfo, createSchedulingContext, type FilterResult } from '../../framework.ts';
import type { Node, Pod, Taint, Toleration } from '../../../../schemas/index.ts';
import { schedule } from '../../scheduler.ts';
import { createDefaultProfile } from '../index.ts';
import { makeNode, makePod, type NodeOptions } from '../../test-fixtures.ts';
import { createTaintToleration, effectiveTaints, tolerates, toleratesTaint } from './index.ts';

const gpu: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };

describe('toleratesTaint', () => {
  it.each<[string, Toleration, Taint, boolean]>([
    ['Equal with same key, value and effect', { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }, gpu, true],
    ['operator defaults to Equal', { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, gpu, true],
    ['Equal with another value', { key: 'dedicated', operator: 'Equal', value: 'cpu', effect: 'NoSchedule' }, gpu, false],
    ['Equal with no value vs a valued taint', { key: 'dedicated', operator: 'Equal' }, gpu, false],
    ['Equal with no value vs an unvalued taint', { key: 'k', operator: 'Equal' }, { key: 'k', effect: 'NoSchedule' }, true],
    ['Exists with same key', { key: 'dedicated', operator: 'Exists' }, gpu, true],
    ['Exists with another key', { key: 'other', operator: 'Exists' }, gpu, false],
    ['empty key with Exists tolerates all', { operator: 'Exists' }, gpu, true],
    ['empty key with Exists and another effect', { operator: 'Exists', effect: 'NoExecute' }, gpu, false],
    ['effect must match when set', { key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, gpu, false],
    ['empty effect matches any effect', { key: 'dedicated', operator: 'Exists', effect: '' }, gpu, true],
    ['unknown operator', { key: 'dedicated', operator: 'Gt', value: 'gpu' }, gpu, false],
  ])('%s', (_case, toleration, taint, expected) => {
    expect(toleratesTaint(toleration, taint)).toBe(expected);
  });

  it.each<[readonly Toleration[] | undefined, boolean]>([
    [undefined, false],
    [[], false],
    [[{ key: 'other', operator: 'Exists' }, { key: 'dedicated', operator: 'Exists' }], true],
  ])('tolerates(%j) → %s', (tolerations, expected) => {
    expect(tolerates(tolerations, gpu)).toBe(expected);
  });
});

describe('effectiveTaints', () => {
  it.each<[string, NodeOptions, Taint[]]>([
    ['ready node: its taints', { name: 'n', taints: [gpu] }, [gpu]],
    ['Ready=False adds not-ready', { name: 'n', ready: 'False' }, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]],
    ['no Ready condition adds not-ready', { name: 'n', ready: null }, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]],
    ['Ready=Unknown adds unreachable', { name: 'n', ready: 'Unknown' }, [{ key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' }]],
    [
      'an existing not-ready NoSchedule taint is not doubled',
      { name: 'n', ready: 'False', taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] },
      [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }],
    ],
  ])('%s', (_case, node, expected) => {
    expect(effectiveTaints(makeNode(node))).toEqual(expected);
  });
});

describe('TaintToleration filter', () => {
  const plugin = createTaintToleration();
  it.each<[string, NodeOptions, readonly Toleration[] | undefined, FilterResult]>([
    ['untainted node', { name: 'n' }, undefined, { type: 'fit' }],
    ['untolerated NoSchedule', { name: 'n', taints: [gpu] }, undefined, { type: 'unfit', reasons: ['node(s) had untolerated taint {dedicated: gpu}'], unresolvable: true }],
    ['tolerated NoSchedule', { name: 'n', taints: [gpu] }, [{ key: 'dedicated', operator: 'Exists' }], { type: 'fit' }],
    [
      'untolerated NoExecute without value',
      { name: 'n', taints: [{ key: 'evict', effect: 'NoExecute' }] },
      undefined,
      { type: 'unfit', reasons: ['node(s) had untolerated taint {evict: }'], unresolvable: true },
    ],
    ['PreferNoSchedule is only a preference', { name: 'n', taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] }, undefined, { type: 'fit' }],
    [
      'the first untolerated taint is reported',
      { name: 'n', taints: [{ key: 'a', value: '1', effect: 'NoSchedule' }, { key: 'b', value: '2', effect: 'NoSchedule' }] },
      [{ key: 'a', operator: 'Exists' }],
      { type: 'unfit', reasons: ['node(s) had untolerated taint {b: 2}'], unresolvable: true },
    ],
    [
      'not-ready node without the taint yet',
      { name: 'n', ready: 'False' },
      undefined,
      { type: 'unfit', reasons: ['node(s) had untolerated taint {node.kubernetes.io/not-ready: }'], unresolvable: true },
    ],
    [
      'unreachable node',
      { name: 'n', ready: 'Unknown' },
      undefined,
      { type: 'unfit', reasons: ['node(s) had untolerated taint {node.kubernetes.io/unreachable: }'], unresolvable: true },
    ],
    [
      'default NoExecute tolerations do not cover the NoSchedule not-ready taint',
      { name: 'n', ready: 'False' },
      [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      { type: 'unfit', reasons: ['node(s) had untolerated taint {node.kubernetes.io/not-ready: }'], unresolvable: true },
    ],
    ['a pod tolerating not-ready may land there', { name: 'n', ready: 'False' }, [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }], { type: 'fit' }],
  ])('%s', (_case, nodeOptions, tolerations, expected) => {
    const pod = makePod({ name: 'p', ...(tolerations === undefined ? {} : { tolerations }) });
    const nodeInfo = createNodeInfo(makeNode(nodeOptions), []);
    expect(plugin.filter(pod, nodeInfo, createSchedulingContext(pod, [nodeInfo]))).toEqual(expected);
  });
});

describe('TaintToleration score (PreferNoSchedule)', () => {
  const prefer = (key: string): Taint => ({ key, value: 'x', effect: 'PreferNoSchedule' });
  const scoresOf = (pod: Pod, nodes: Node[]): number[] => {
    const nodeInfos = buildNodeInfos(nodes, []);
    const ctx = createSchedulingContext(pod, nodeInfos);
    const plugin = createTaintToleration();
    const raw = nodeInfos.map((nodeInfo) => plugin.score(pod, nodeInfo, ctx));
    plugin.normalize?.(raw, nodeInfos, ctx);
    return raw;
  };
  const nodes = [makeNode({ name: 'a' }), makeNode({ name: 'b', taints: [prefer('k1')] }), makeNode({ name: 'c', taints: [prefer('k1'), prefer('k2'), { key: 'k3', effect: 'NoSchedule' }] })];
  it.each<[string, Pod, number[]]>([
    ['fewer intolerable PreferNoSchedule taints score higher (reversed, scaled to the worst)', makePod({ name: 'p' }), [100, 50, 0]],
    ['a tolerated taint does not count', makePod({ name: 'p', tolerations: [{ key: 'k1', operator: 'Exists', effect: 'PreferNoSchedule' }] }), [100, 100, 0]],
    ['an effect-less toleration counts too', makePod({ name: 'p', tolerations: [{ key: 'k2', operator: 'Exists' }] }), [100, 0, 0]],
    ['a NoSchedule toleration does not tolerate PreferNoSchedule', makePod({ name: 'p', tolerations: [{ key: 'k1', operator: 'Exists', effect: 'NoSchedule' }] }), [100, 50, 0]],
  ])('%s', (_case, pod, expected) => {
    expect(scoresOf(pod, nodes)).toEqual(expected);
  });

  it('every node scores 100 when none has an intolerable PreferNoSchedule taint', () => {
    expect(scoresOf(makePod({ name: 'p' }), [makeNode({ name: 'a' }), makeNode({ name: 'b', taints: [{ key: 'k', effect: 'NoSchedule' }] })])).toEqual([100, 100]);
  });

  it('the default profile avoids a PreferNoSchedule node when another fits', () => {
    const result = schedule(makePod({ name: 'p' }), buildNodeInfos([makeNode({ name: 'a', taints: [prefer('k')] }), makeNode({ name: 'b' })], []), createDefaultProfile());
    expect(result.type === 'bound' && result.node).toBe('b');
  });
});
