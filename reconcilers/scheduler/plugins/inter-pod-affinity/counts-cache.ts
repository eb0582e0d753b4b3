/**
 * Per-topology-domain tallies kept across scheduling cycles and rounds, for InterPodAffinity's
 * PreFilter and PreScore: each node contributes some amounts to its domains (e.g. "2 pods
 * here match the term"), derived from its NodeInfo alone; a tally remembers every node's
 * contribution and the sums, and when brought up to date with a NodeInfo array it recomputes
 * only the entries whose NodeInfo object changed (NodeInfos are replaced, never mutated), found
 * from the caller's change log when it keeps one, else by comparing every entry.
 *
 * The sums are exactly the {@link TopologyCounts} the uncached computation builds by calling
 * `countDomain` once per contribution: a domain (and a topology key) is present while at least
 * one contribution counts in it, even when the amounts add up to 0.
 */
import type { NodeInfo } from '../../framework.ts';
import { type TopologyCounts, topologyValue } from './topology.ts';

/** A contribution of a node: `calls` calls of `countDomain` on the node's `topologyKey` domain, adding `amount` in all. */
export interface Contribution {
  readonly topologyKey: string;
  readonly amount: number;
  readonly calls: number;
}

/** What one node contributes (see `contributionsOf`), with the domain values resolved. */
interface Applied {
  readonly topologyKey: string;
  readonly value: string;
  readonly amount: number;
  readonly calls: number;
}

const NOTHING: readonly Applied[] = [];

export interface DomainTally {
  /**
   * Brings the tally up to date with `nodeInfos` (`changes`: the caller's log of replaced
   * entries of this array, when it keeps one) and returns the sums, which the caller must not
   * change and may read only until the tally is next brought up to date.
   */
  sync(nodeInfos: readonly NodeInfo[], changes: readonly number[] | undefined, contributionsOf: ContributionsOf): TopologyCounts;
}

/** What a node contributes: a pure function of its NodeInfo, the same for every sync of one tally. */
export type ContributionsOf = (nodeInfo: NodeInfo) => readonly Contribution[];

/** An empty tally. */
export function createDomainTally(): DomainTally {
  let snapshot: (NodeInfo | undefined)[] = [];
  let applied: (readonly Applied[])[] = [];
  const sums: TopologyCounts = new Map();
  const calls: TopologyCounts = new Map();
  /** The array last synced and the length of its change log then (the log is append-only per array). */
  let lastArray: readonly NodeInfo[] | undefined;
  let seen: number | undefined;

  const add = (entry: Applied, sign: number): void => {
    let values = sums.get(entry.topologyKey);
    let valueCalls = calls.get(entry.topologyKey);
    if (values === undefined || valueCalls === undefined) {
      values = new Map();
      valueCalls = new Map();
      sums.set(entry.topologyKey, values);
      calls.set(entry.topologyKey, valueCalls);
    }
    const callCount = (valueCalls.get(entry.value) ?? 0) + sign * entry.calls;
    if (callCount === 0) {
      values.delete(entry.value);
      valueCalls.delete(entry.value);
      if (values.size === 0) {
        sums.delete(entry.topologyKey);
        calls.delete(entry.topologyKey);
      }
      return;
    }
    valueCalls.set(entry.value, callCount);
    values.set(entry.value, (values.get(entry.value) ?? 0) + sign * entry.amount);
  };

  const visit = (index: number, nodeInfo: NodeInfo, contributionsOf: ContributionsOf): void => {
    if (snapshot[index] === nodeInfo) return;
    for (const entry of applied[index] as readonly Applied[]) add(entry, -1);
    let resolved: Applied[] | undefined;
    for (const contribution of contributionsOf(nodeInfo)) {
      if (contribution.calls === 0) continue;
      const value = topologyValue(nodeInfo.node, contribution.topologyKey);
      if (value === undefined) continue;
      const entry = { topologyKey: contribution.topologyKey, value, amount: contribution.amount, calls: contribution.calls };
      add(entry, 1);
      (resolved ??= []).push(entry);
    }
    snapshot[index] = nodeInfo;
    applied[index] = resolved ?? NOTHING;
  };

  return {
    sync(nodeInfos, changes, contributionsOf) {
      if (snapshot.length !== nodeInfos.length) {
        snapshot = new Array<NodeInfo | undefined>(nodeInfos.length).fill(undefined);
        applied = new Array<readonly Applied[]>(nodeInfos.length).fill(NOTHING);
        sums.clear();
        calls.clear();
        lastArray = undefined;
      }
      const from = changes !== undefined && lastArray === nodeInfos && seen !== undefined && seen <= changes.length ? seen : undefined;
      if (from === undefined) {
        for (let index = 0; index < nodeInfos.length; index += 1) visit(index, nodeInfos[index] as NodeInfo, contributionsOf);
      } else {
        const log = changes as readonly number[];
        for (let at = from; at < log.length; at += 1) {
          const index = log[at] as number;
          visit(index, nodeInfos[index] as NodeInfo, contributionsOf);
        }
      }
      lastArray = nodeInfos;
      seen = changes?.length;
      return sums;
    },
  };
}

/** Tallies kept per key (what the contributions are a function of); past this many it starts over. */
const TALLIES_KEPT = 256;

/** A store of tallies by key, e.g. one per term set of an incoming pod. */
export function createTallyStore(): (key: string) => DomainTally {
  const tallies = new Map<string, DomainTally>();
  return (key) => {
    let tally = tallies.get(key);
    if (tally === undefined) {
      if (tallies.size >= TALLIES_KEPT) tallies.clear();
      tally = createDomainTally();
      tallies.set(key, tally);
    }
    return tally;
  };
}
