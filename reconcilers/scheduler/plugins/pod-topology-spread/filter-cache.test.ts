import { describe, expect, it } from 'vitest';
import { assumePod, buildNodeInfos, createSchedulingContext, EMPTY_CLUSTER, type NodeInfo, removePod } from '../../framework.ts';
import type { Pod, TopologySpreadConstraint } from '../../../../schemas/index.ts';
import { makeNode, makePod } from '../../test-fixtures.ts';
import { cachedSpreadFilterState, type SpreadFilterState, spreadFilterState, spreadVerdict } from './index.ts';

const ZONE = 'topology.kubernetes.io/zone';
const HOSTNAME = 'kubernetes.io/hostname';

/** A small deterministic PRNG (mulberry32), so a failing seed can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The state as plain data: per constraint, the count of every value any node has. */
const comparable = (state: SpreadFilterState, values: readonly string[]) => ({
  counts: state.counts.map((counts) => values.map((value) => counts.get(value) ?? 0)),
  minimums: state.minimums,
  selfMatch: state.selfMatch,
});

describe('PodTopologySpread filter from the spreading cache', () => {
  it.each([1, 2, 3, 4, 5, 6])('gives the uncached counts, minimums and verdicts after random placements and removals (seed %i)', (seed) => {
    const next = random(seed);
    const pick = <T,>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
    const nodes = Array.from({ length: 9 }, (_unused, index) => {
      const labels: Record<string, string> = {};
      if (next() < 0.85) labels[ZONE] = `z${index % 3}`;
      if (next() < 0.5) labels.disk = 'ssd';
      return makeNode({ name: `node-${index}`, labels, ...(next() < 0.2 ? { taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] } : {}) });
    });
    const values = [...new Set(nodes.flatMap((node) => [node.metadata.labels?.[ZONE], node.metadata.labels?.[HOSTNAME]]).filter((value) => value !== undefined))];
    const constraint = (): TopologySpreadConstraint => ({
      maxSkew: 1 + Math.floor(next() * 2),
      topologyKey: pick([ZONE, HOSTNAME]),
      whenUnsatisfiable: 'DoNotSchedule',
      labelSelector: { matchLabels: { app: pick(['a', 'b']) } },
      ...(next() < 0.3 ? { minDomains: 1 + Math.floor(next() * 4) } : {}),
      ...(next() < 0.3 ? { nodeTaintsPolicy: 'Honor' } : {}),
      ...(next() < 0.2 ? { nodeAffinityPolicy: 'Ignore' } : {}),
    });
    const templates = Array.from({ length: 5 }, (_unused, index) =>
      makePod({
        name: `template-${index}`,
        labels: { app: pick(['a', 'b']) },
        topologySpreadConstraints: Array.from({ length: 1 + Math.floor(next() * 2) }, constraint),
        ...(next() < 0.3 ? { nodeSelector: { disk: 'ssd' } } : {}),
      }),
    );
    let infos: NodeInfo[] = buildNodeInfos(nodes, []);
    let changes: number[] = [];
    for (let step = 0; step < 100; step += 1) {
      const incoming = pick(templates);
      const uncached = spreadFilterState(incoming, infos, createSchedulingContext(incoming, infos, EMPTY_CLUSTER));
      const cached = cachedSpreadFilterState(incoming, infos, createSchedulingContext(incoming, infos, EMPTY_CLUSTER, changes));
      expect(comparable(cached, values)).toEqual(comparable(uncached, values));
      for (const nodeInfo of infos) expect(spreadVerdict(cached, nodeInfo)).toEqual(spreadVerdict(uncached, nodeInfo));
      const copy = [...infos];
      expect(comparable(cachedSpreadFilterState(incoming, copy, createSchedulingContext(incoming, copy, EMPTY_CLUSTER)), values)).toEqual(comparable(uncached, values));
      const roll = next();
      const index = Math.floor(next() * infos.length);
      const nodeInfo = infos[index] as NodeInfo;
      if (roll < 0.7) {
        const placed: Pod = makePod({ name: `pod-${step}`, labels: { app: pick(['a', 'b', 'c']) }, nodeName: nodeInfo.node.metadata.name });
        infos[index] = assumePod(nodeInfo, placed);
        changes.push(index);
      } else if (roll < 0.9 && nodeInfo.pods.length > 0) {
        infos[index] = removePod(nodeInfo, pick(nodeInfo.pods));
        changes.push(index);
      } else {
        infos = [...infos];
        changes = [];
      }
    }
  });
});
