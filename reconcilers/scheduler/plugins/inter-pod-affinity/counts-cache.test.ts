import { describe, expect, it } from 'vitest';
import { assumePod, buildNodeInfos, createSchedulingContext, EMPTY_CLUSTER, type NodeInfo, removePod } from '../../framework.ts';
import type { Pod, PodAffinityTerm, WeightedPodAffinityTerm } from '../../../../schemas/index.ts';
import { makeNode, makePod } from '../../test-fixtures.ts';
import { cachedInterPodAffinityState, interPodAffinityState, type InterPodAffinityState, interPodAffinityVerdict } from './index.ts';
import { cachedInterPodAffinityTopologyScores, interPodAffinityTopologyScores } from './scoring.ts';
import type { TopologyCounts } from './topology.ts';

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

const APPS = ['a', 'b', 'c'];
const KEYS = ['zone', 'kubernetes.io/hostname', 'rack'];

const sorted = (counts: TopologyCounts): [string, [string, number][]][] =>
  [...counts].map(([key, values]): [string, [string, number][]] => [key, [...values].sort(([l], [r]) => (l < r ? -1 : l > r ? 1 : 0))]).sort(([l], [r]) => (l < r ? -1 : 1));

const comparable = (state: InterPodAffinityState) => ({
  affinity: sorted(state.affinityCounts),
  anti: sorted(state.antiAffinityCounts),
  existing: sorted(state.existingAntiAffinityCounts),
  matchesOwn: state.matchesOwnAffinity,
});

/** A pod with random labels and random required/preferred (anti-)affinity terms. */
function randomPod(next: () => number, name: string): Pod {
  const pick = <T,>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const term = (): PodAffinityTerm => ({
    labelSelector: next() < 0.1 ? { matchExpressions: [{ key: 'app', operator: 'In', values: [pick(APPS), pick(APPS)] }] } : { matchLabels: { app: pick(APPS) } },
    topologyKey: pick(KEYS),
    ...(next() < 0.1 ? { namespaces: ['other'] } : {}),
  });
  const terms = (chance: number): PodAffinityTerm[] => (next() < chance ? Array.from({ length: 1 + Math.floor(next() * 2) }, term) : []);
  const weighted = (chance: number): WeightedPodAffinityTerm[] =>
    next() < chance ? [{ weight: 1 + Math.floor(next() * 100), podAffinityTerm: term() }] : [];
  const requiredAffinity = terms(0.3);
  const requiredAnti = terms(0.3);
  const preferred = weighted(0.3);
  const preferredAnti = weighted(0.3);
  return makePod({
    name,
    namespace: next() < 0.15 ? 'other' : 'default',
    labels: { app: pick(APPS) },
    affinity: {
      podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: requiredAffinity, preferredDuringSchedulingIgnoredDuringExecution: preferred },
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: requiredAnti, preferredDuringSchedulingIgnoredDuringExecution: preferredAnti },
    },
  });
}

describe('InterPodAffinity tallies kept across cycles', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('give the uncached counts, verdicts and scores after random placements and removals (seed %i)', (seed) => {
    const next = random(seed);
    const nodes = Array.from({ length: 10 }, (_unused, index) => {
      const labels: Record<string, string> = {};
      if (next() < 0.85) labels.zone = `z${index % 3}`;
      if (next() < 0.5) labels.rack = `r${index % 2}`;
      return makeNode({ name: `node-${index}`, labels });
    });
    let infos: NodeInfo[] = buildNodeInfos(nodes, []);
    let changes: number[] = [];
    const templates = Array.from({ length: 6 }, (_unused, index) => randomPod(next, `template-${index}`));
    for (let step = 0; step < 120; step += 1) {
      const incoming = templates[Math.floor(next() * templates.length)] as Pod;
      // With the change log of this array, and (a copy) without any.
      const withLog = createSchedulingContext(incoming, infos, EMPTY_CLUSTER, changes);
      const copy = [...infos];
      const withoutLog = createSchedulingContext(incoming, copy, EMPTY_CLUSTER);
      const uncached = interPodAffinityState(incoming, infos, createSchedulingContext(incoming, infos, EMPTY_CLUSTER));
      const cachedWithLog = cachedInterPodAffinityState(incoming, infos, withLog);
      expect(comparable(cachedWithLog)).toEqual(comparable(uncached));
      for (const nodeInfo of infos) expect(interPodAffinityVerdict(cachedWithLog, nodeInfo.node)).toEqual(interPodAffinityVerdict(uncached, nodeInfo.node));
      expect(comparable(cachedInterPodAffinityState(incoming, copy, withoutLog))).toEqual(comparable(uncached));
      const uncachedScores = sorted(interPodAffinityTopologyScores(incoming, infos, createSchedulingContext(incoming, infos, EMPTY_CLUSTER)));
      expect(sorted(cachedInterPodAffinityTopologyScores(incoming, infos, createSchedulingContext(incoming, infos, EMPTY_CLUSTER, changes)))).toEqual(uncachedScores);
      expect(sorted(cachedInterPodAffinityTopologyScores(incoming, copy, createSchedulingContext(incoming, copy, EMPTY_CLUSTER)))).toEqual(uncachedScores);
      // A profile's InterPodAffinityArgs: the tally of another hard weight is its own.
      const weighted = { hardPodAffinityWeight: 3, ignorePreferredTermsOfExistingPods: step % 2 === 0 };
      const uncachedWeighted = sorted(interPodAffinityTopologyScores(incoming, infos, createSchedulingContext(incoming, infos, EMPTY_CLUSTER), weighted));
      expect(sorted(cachedInterPodAffinityTopologyScores(incoming, infos, createSchedulingContext(incoming, infos, EMPTY_CLUSTER, changes), weighted))).toEqual(uncachedWeighted);
      // Change the cluster: place a pod, remove one, or start a new round (a new array).
      const roll = next();
      const index = Math.floor(next() * infos.length);
      const nodeInfo = infos[index] as NodeInfo;
      if (roll < 0.7) {
        const placed = randomPod(next, `pod-${step}`);
        infos[index] = assumePod(nodeInfo, { ...placed, spec: { ...placed.spec, nodeName: nodeInfo.node.metadata.name } });
        changes.push(index);
      } else if (roll < 0.9 && nodeInfo.pods.length > 0) {
        infos[index] = removePod(nodeInfo, nodeInfo.pods[Math.floor(next() * nodeInfo.pods.length)] as Pod);
        changes.push(index);
      } else {
        infos = [...infos];
        changes = [];
      }
    }
  });
});
