/**
 * ImageLocality (kube-scheduler 1.32): prefers nodes that already have the pod's images
 * (`node.status.images`, as the kubelet reports them). Each container's image present on the
 * node adds its size scaled by the share of nodes that have it (so an image every node has
 * counts fully, a rare one little: kube's guard against piling pods onto one node); the sum,
 * clamped to 23 MiB .. 1000 MiB × containers, maps linearly onto 0..100. A container image
 * without a tag is looked up as `:latest`.
 */
import { defineCycleValue, MAX_NODE_SCORE, type NodeInfo, type ScorePlugin } from '../../framework.ts';
import type { Node, Pod } from '../../../../schemas/index.ts';

/** This plugin's registry name (kube-scheduler's). */
export const IMAGE_LOCALITY = 'ImageLocality';

const MB = 1024 * 1024;
/** kube's thresholds: below 23 MiB an image is not worth it; 1000 MiB per container is the top. */
export const MIN_THRESHOLD = 23 * MB;
export const MAX_CONTAINER_THRESHOLD = 1000 * MB;

/** kube's `normalizedImageName`: adds `:latest` when the name has no tag. */
export function normalizedImageName(name: string): string {
  return name.lastIndexOf(':') <= name.lastIndexOf('/') ? `${name}:latest` : name;
}

const imagesOfNode = new WeakMap<Node, ReadonlyMap<string, number>>();
const NO_IMAGES: ReadonlyMap<string, number> = new Map();

/** The node's images, name → size in bytes (every name an image is reported under). */
export function nodeImages(node: Node): ReadonlyMap<string, number> {
  const known = imagesOfNode.get(node);
  if (known !== undefined) return known;
  const reported = node.status?.images ?? [];
  let images: Map<string, number> | undefined;
  for (const image of reported) {
    for (const name of image.names ?? []) (images ??= new Map()).set(name, image.sizeBytes ?? 0);
  }
  const result = images ?? NO_IMAGES;
  imagesOfNode.set(node, result);
  return result;
}

/** How many nodes have each image, kept per NodeInfo array and updated for the nodes whose Node object changed. */
interface ImageIndex {
  readonly snapshot: (Node | undefined)[];
  readonly numNodes: Map<string, number>;
}
const indexes = new WeakMap<readonly NodeInfo[], ImageIndex>();

function addNode(numNodes: Map<string, number>, node: Node, sign: number): void {
  for (const name of nodeImages(node).keys()) {
    const count = (numNodes.get(name) ?? 0) + sign;
    if (count === 0) numNodes.delete(name);
    else numNodes.set(name, count);
  }
}

/** Image name → nodes that have it, over `nodeInfos` (kube's ImageStateSummary.NumNodes). */
export function imageNodeCounts(nodeInfos: readonly NodeInfo[]): ReadonlyMap<string, number> {
  let index = indexes.get(nodeInfos);
  if (index === undefined || index.snapshot.length !== nodeInfos.length) {
    index = { snapshot: new Array<Node | undefined>(nodeInfos.length).fill(undefined), numNodes: new Map() };
    indexes.set(nodeInfos, index);
  }
  const { snapshot, numNodes } = index;
  for (let position = 0; position < nodeInfos.length; position += 1) {
    const node = (nodeInfos[position] as NodeInfo).node;
    const before = snapshot[position];
    if (before === node) continue;
    if (before !== undefined) addNode(numNodes, before, -1);
    addNode(numNodes, node, 1);
    snapshot[position] = node;
  }
  return numNodes;
}

/** The pod's images, normalized, one entry per container (init containers included), and whether any node has one. */
const podImagesOfCycle = defineCycleValue('ImageLocality/images', (pod: Pod, nodeInfos) => {
  const images = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].map((container) => normalizedImageName(container.image ?? ''));
  const counts = imageNodeCounts(nodeInfos);
  return { images, counts, anywhere: images.some((image) => counts.has(image)) };
});

/** kube's `calculatePriority`: the clamped sum mapped onto 0..100 (integer division). */
export function imageLocalityPriority(sum: number, containers: number): number {
  const maxThreshold = MAX_CONTAINER_THRESHOLD * containers;
  const clamped = Math.min(Math.max(sum, MIN_THRESHOLD), maxThreshold);
  if (maxThreshold <= MIN_THRESHOLD) return 0;
  return Math.trunc((MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) / (maxThreshold - MIN_THRESHOLD));
}

/** Creates the ImageLocality score. */
export function createImageLocality(): ScorePlugin {
  return {
    name: IMAGE_LOCALITY,
    // Scores 0 everywhere while no node has any of the pod's images (sim nodes report none).
    nodeLocal: (ctx) => !ctx.get(podImagesOfCycle).anywhere,
    preScoreSkip: (ctx) => !ctx.get(podImagesOfCycle).anywhere,
    score(_pod, nodeInfo, ctx) {
      const { images, counts, anywhere } = ctx.get(podImagesOfCycle);
      if (!anywhere) return 0;
      const total = ctx.nodeInfos.length;
      const onNode = nodeImages(nodeInfo.node);
      let sum = 0;
      for (const image of images) {
        const size = onNode.get(image);
        if (size !== undefined) sum += Math.trunc(size * ((counts.get(image) ?? 0) / total));
      }
      return imageLocalityPriority(sum, images.length);
    },
  };
}
