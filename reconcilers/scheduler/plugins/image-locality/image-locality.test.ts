import { describe, expect, it } from 'vitest';
import { buildNodeInfos, createSchedulingContext } from '../../framework.ts';
import type { Node, Pod } from '../../../../schemas/index.ts';
import { schedule } from '../../scheduler.ts';
import { makeNode, makePod } from '../../test-fixtures.ts';
import { createDefaultProfile } from '../index.ts';
import { createImageLocality, imageLocalityPriority, MAX_CONTAINER_THRESHOLD, MIN_THRESHOLD, normalizedImageName } from './index.ts';

const MB = 1024 * 1024;
const withImages = (name: string, images: { names: string[]; sizeBytes: number }[]): Node => {
  const node = makeNode({ name });
  return { ...node, status: { ...node.status, images } };
};
const running = (image: string, initImage?: string): Pod => {
  const pod = makePod({ name: 'p' });
  return {
    ...pod,
    spec: {
      ...pod.spec,
      containers: pod.spec.containers.map((container) => ({ ...container, image })),
      ...(initImage === undefined ? {} : { initContainers: [{ name: 'init', image: initImage }] }),
    },
  };
};

describe('ImageLocality', () => {
  it.each<[string, string]>([
    ['nginx', 'nginx:latest'],
    ['nginx:1.27', 'nginx:1.27'],
    ['registry:5000/team/app', 'registry:5000/team/app:latest'],
    ['registry:5000/team/app:v2', 'registry:5000/team/app:v2'],
  ])('normalizes %s as %s', (name, expected) => {
    expect(normalizedImageName(name)).toBe(expected);
  });

  it.each<[string, number, number, number]>([
    ['below the minimum threshold', 10 * MB, 1, 0],
    ['at the maximum', MAX_CONTAINER_THRESHOLD, 1, 100],
    ['above the maximum', 5000 * MB, 1, 100],
    ['half way', MIN_THRESHOLD + (MAX_CONTAINER_THRESHOLD - MIN_THRESHOLD) / 2, 1, 50],
    ['two containers double the maximum', MAX_CONTAINER_THRESHOLD, 2, 49],
  ])('priority %s', (_case, sum, containers, expected) => {
    expect(imageLocalityPriority(sum, containers)).toBe(expected);
  });

  it('scores the image size scaled by how many nodes have it', () => {
    const nodes = [
      withImages('node-a', [{ names: ['big:v1'], sizeBytes: 800 * MB }]),
      withImages('node-b', [{ names: ['big:v1', 'big:alias'], sizeBytes: 800 * MB }, { names: ['tool:latest'], sizeBytes: 300 * MB }]),
      makeNode({ name: 'node-c' }),
      makeNode({ name: 'node-d' }),
    ];
    const nodeInfos = buildNodeInfos(nodes, []);
    const plugin = createImageLocality();
    const scores = (pod: Pod) => nodeInfos.map((nodeInfo) => plugin.score(pod, nodeInfo, createSchedulingContext(pod, nodeInfos)));
    // big:v1 on 2 of 4 nodes: 800 MiB × 0.5 = 400 MiB → (400 - 23) / (1000 - 23) × 100 = 38.
    expect(scores(running('big:v1'))).toEqual([38, 38, 0, 0]);
    // Init containers count too: + tool (1 of 4 nodes: 75 MiB), over 2 containers' range.
    expect(scores(running('big:v1', 'tool'))).toEqual([19, 22, 0, 0]);
    expect(scores(running('absent:v1'))).toEqual([0, 0, 0, 0]);
    expect(plugin.nodeLocal !== true && plugin.nodeLocal?.(createSchedulingContext(running('absent:v1'), nodeInfos))).toBe(true);
  });

  it('the default profile prefers the node that has the image when all else ties', () => {
    const nodes = [makeNode({ name: 'node-a' }), withImages('node-b', [{ names: ['app:v1'], sizeBytes: 900 * MB }])];
    const result = schedule(running('app:v1'), buildNodeInfos(nodes, []), createDefaultProfile());
    expect(result.type === 'bound' && result.node).toBe('node-b');
  });
});
