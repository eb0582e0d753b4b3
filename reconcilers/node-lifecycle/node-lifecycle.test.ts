import { afterEach, describe, expect, it } from 'vitest';
import type { EventBody, Node, NodeCondition, ObjectDeleted, ObjectUpdated, Pod, Taint, Toleration } from '../../schemas/index.ts';
import { createTestCluster, nodeObject, podKey, runningPodStatus, type TestCluster } from '../testing.ts';
import { createNodeLifecycleController, decideNode, NOT_READY_TAINT, tolerationSeconds, UNREACHABLE_TAINT, type HeartbeatTracker } from './index.ts';

const clusters: TestCluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.close();
});

const T0 = Date.UTC(2030, 0, 1, 12);
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const SETTINGS = { gracePeriodMs: 50_000, defaultTolerationSeconds: 300 };
const NODE_KEY = 'Node//n1';

const unreachable = (timeAdded = T0): Taint => ({ key: UNREACHABLE_TAINT, effect: 'NoExecute', timeAdded: iso(timeAdded) });
const notReady = (timeAdded = T0): Taint => ({ key: NOT_READY_TAINT, effect: 'NoExecute', timeAdded: iso(timeAdded) });
const readyCondition = (status: 'True' | 'False' | 'Unknown', reason = status === 'Unknown' ? 'NodeStatusUnknown' : 'KubeletReady'): NodeCondition => ({
  type: 'Ready',
  status,
  reason,
});

/** A cluster with node n1 (Ready as given, with `taints`) and the given pods bound to it and running. */
const setup = (ready: NodeCondition, taints: Taint[], pods: { name: string; tolerations?: Toleration[] }[] = []): TestCluster => {
  const cluster = createTestCluster();
  clusters.push(cluster);
  const base = nodeObject('n1');
  cluster.create<Node>({ ...base, spec: { taints }, status: { ...base.status, conditions: [ready] } });
  for (const { name, tolerations } of pods) {
    cluster.create<Pod>({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: { containers: [{ name: 'main', image: 'logplane/echo:1' }], ...(tolerations ? { tolerations } : {}) },
    });
    cluster.apply({ type: 'PodBound', namespace: 'default', name, node: 'n1', expectedPodVersion: null, rationale: { filtered: [], scores: [], feasibleNodes: 1, totalNodes: 1 } });
    cluster.podStatus(name, runningPodStatus(true, T0 - 600_000));
  }
  return cluster;
};

const node = (cluster: TestCluster): Node => cluster.view().get(NODE_KEY) as Node;
const taintsIn = (commands: readonly EventBody[]): Taint[] | undefined =>
  (commands.find((c): c is ObjectUpdated => c.type === 'ObjectUpdated')?.object as Node | undefined)?.spec?.taints;
const readyIn = (commands: readonly EventBody[]): NodeCondition | undefined => {
  const change = commands.find((c) => c.type === 'NodeStatusChanged');
  return change?.type === 'NodeStatusChanged' ? change.status.conditions?.find((c) => c.type === 'Ready') : undefined;
};
const evicted = (commands: readonly EventBody[]): string[] =>
  commands.filter((c): c is ObjectDeleted => c.type === 'ObjectDeleted' && c.kind === 'Pod').map((c) => c.name).sort();

const toleration = (key: string | undefined, seconds?: number, extra: Partial<Toleration> = {}): Toleration => ({
  ...(key === undefined ? {} : { key }),
  operator: 'Exists',
  effect: 'NoExecute',
  ...(seconds === undefined ? {} : { tolerationSeconds: seconds }),
  ...extra,
});

describe('tolerationSeconds (kube taint manager getMinTolerationTime, DefaultTolerationSeconds admission)', () => {
  const pod = (tolerations?: Toleration[]): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default' },
    spec: { containers: [{ name: 'main', image: 'x' }], ...(tolerations ? { tolerations } : {}) },
  });
  it.each<{ name: string; tolerations?: Toleration[]; taint?: Taint; seconds: number }>([
    { name: 'no tolerations: the default (300 s)', seconds: 300 },
    { name: 'a matching toleration with seconds', tolerations: [toleration(UNREACHABLE_TAINT, 60)], seconds: 60 },
    { name: 'a matching toleration without seconds: forever', tolerations: [toleration(UNREACHABLE_TAINT)], seconds: Number.POSITIVE_INFINITY },
    {
      name: 'one matching toleration with seconds and one without: the seconds (nil does not lengthen it)',
      tolerations: [toleration(UNREACHABLE_TAINT), toleration(undefined, 60)],
      seconds: 60,
    },
    { name: 'two matching with seconds: the smaller', tolerations: [toleration(UNREACHABLE_TAINT, 60), toleration(undefined, 30)], seconds: 30 },
    { name: 'a toleration longer than the default is honoured', tolerations: [toleration(UNREACHABLE_TAINT, 3600)], seconds: 3600 },
    { name: 'zero seconds: not at all', tolerations: [toleration(UNREACHABLE_TAINT, 0)], seconds: 0 },
    { name: 'negative seconds count as zero', tolerations: [toleration(UNREACHABLE_TAINT, -5)], seconds: 0 },
    { name: 'a toleration of another key does not match: the default', tolerations: [toleration('example.com/other', 10)], seconds: 300 },
    { name: 'a NoSchedule toleration does not match a NoExecute taint', tolerations: [toleration(UNREACHABLE_TAINT, undefined, { effect: 'NoSchedule' })], seconds: 300 },
    { name: 'an empty key with Exists tolerates every taint, forever', tolerations: [{ operator: 'Exists' }], seconds: Number.POSITIVE_INFINITY },
    { name: 'the not-ready taint is matched by its own key', tolerations: [toleration(NOT_READY_TAINT, 20), toleration(UNREACHABLE_TAINT, 90)], taint: notReady(), seconds: 20 },
  ])('$name', ({ tolerations, taint, seconds }) => {
    expect(tolerationSeconds(pod(tolerations), taint ?? unreachable(), 300)).toBe(seconds);
  });
});

describe('node lifecycle decide: condition and taints', () => {
  it.each<{
    name: string;
    ready: NodeCondition;
    taints: Taint[];
    /** Time since the last heartbeat at the decision. */
    silentMs: number;
    heardFrom?: boolean;
    wantReady?: string;
    wantTaints?: string[];
  }>([
    { name: 'a Ready node that heartbeats: nothing to do', ready: readyCondition('True'), taints: [], silentMs: 1000 },
    {
      name: 'silent past the grace period: Ready=Unknown and the unreachable taint',
      ready: readyCondition('True'),
      taints: [],
      silentMs: 50_001,
      wantReady: 'Unknown',
      wantTaints: [UNREACHABLE_TAINT],
    },
    { name: 'silent, but not past the grace period: nothing yet', ready: readyCondition('True'), taints: [], silentMs: 50_000 },
    {
      name: 'an agent that reports Ready=False: the not-ready taint',
      ready: readyCondition('False'),
      taints: [],
      silentMs: 1000,
      wantTaints: [NOT_READY_TAINT],
    },
    {
      name: 'a not-ready node that goes silent: the not-ready taint is swapped for unreachable',
      ready: readyCondition('False'),
      taints: [notReady()],
      silentMs: 60_000,
      wantReady: 'Unknown',
      wantTaints: [UNREACHABLE_TAINT],
    },
    {
      name: 'an unreachable node that heartbeats again: Ready=True and untainted',
      ready: readyCondition('Unknown'),
      taints: [unreachable()],
      silentMs: 1000,
      wantReady: 'True',
      wantTaints: [],
    },
    {
      name: 'a Ready node still carrying the not-ready taint: the taint goes, other taints stay',
      ready: readyCondition('True'),
      taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, notReady()],
      silentMs: 1000,
      wantTaints: ['dedicated'],
    },
    {
      name: 'a controller that has heard nothing yet keeps the unreachable node as it is',
      ready: readyCondition('Unknown'),
      taints: [unreachable()],
      silentMs: 1000,
      heardFrom: false,
    },
  ])('$name', ({ ready, taints, silentMs, heardFrom, wantReady, wantTaints }) => {
    const cluster = setup(ready, taints);
    const now = T0 + 120_000;
    const { commands } = decideNode(node(cluster), cluster.view(), now - silentMs, { now }, SETTINGS, heardFrom ?? true);
    expect(readyIn(commands)?.status).toBe(wantReady);
    expect(taintsIn(commands)?.map((t) => t.key)).toEqual(wantTaints);
    const added = taintsIn(commands)?.find((t) => t.key === UNREACHABLE_TAINT || t.key === NOT_READY_TAINT);
    if (added && !taints.some((t) => t.key === added.key)) expect(added).toEqual({ key: added.key, effect: 'NoExecute', timeAdded: iso(now) });
    for (const record of cluster.apply(...commands)) expect(record.verdict.type, JSON.stringify(record.verdict)).toBe('accepted');
    expect(evicted(commands)).toEqual([]);
  });
});

describe('node lifecycle decide: evictions honour each pod\'s tolerationSeconds', () => {
  const pods = [
    { name: 'default' },
    { name: 'sixty', tolerations: [toleration(UNREACHABLE_TAINT, 60), toleration(NOT_READY_TAINT, 60)] },
    { name: 'hour', tolerations: [toleration(UNREACHABLE_TAINT, 3600)] },
    { name: 'forever', tolerations: [toleration(UNREACHABLE_TAINT)] },
    { name: 'zero', tolerations: [toleration(UNREACHABLE_TAINT, 0)] },
  ];
  it.each<{ name: string; taint: Taint; ready: NodeCondition; afterS: number; evicted: string[]; nextCheckMs?: number; defaultSeconds?: number }>([
    { name: 'just tainted: only the pod that does not tolerate it', taint: unreachable(), ready: readyCondition('Unknown'), afterS: 0, evicted: ['zero'], nextCheckMs: 60_000 },
    { name: 'at 59 s: none more, the next check when 60 s run out', taint: unreachable(), ready: readyCondition('Unknown'), afterS: 59, evicted: ['zero'], nextCheckMs: 1000 },
    { name: 'at 60 s: the 60 s pod', taint: unreachable(), ready: readyCondition('Unknown'), afterS: 60, evicted: ['sixty', 'zero'], nextCheckMs: 240_000 },
    { name: 'at 299 s: not yet the default', taint: unreachable(), ready: readyCondition('Unknown'), afterS: 299, evicted: ['sixty', 'zero'], nextCheckMs: 1000 },
    { name: 'at 300 s: the pod on the default', taint: unreachable(), ready: readyCondition('Unknown'), afterS: 300, evicted: ['default', 'sixty', 'zero'], nextCheckMs: 3_300_000 },
    { name: 'at 3600 s: all but the one that tolerates forever', taint: unreachable(), ready: readyCondition('Unknown'), afterS: 3600, evicted: ['default', 'hour', 'sixty', 'zero'] },
    {
      name: 'a custom default toleration (5 s)',
      taint: unreachable(),
      ready: readyCondition('Unknown'),
      afterS: 5,
      evicted: ['default', 'zero'],
      nextCheckMs: 55_000,
      defaultSeconds: 5,
    },
    {
      // Only sixty tolerates not-ready explicitly; the others get the default (forever/hour/zero tolerate unreachable only).
      name: 'the not-ready taint at 60 s: the pod tolerating not-ready for 60 s',
      taint: notReady(),
      ready: readyCondition('False'),
      afterS: 60,
      evicted: ['sixty'],
      nextCheckMs: 240_000,
    },
  ])('$name', ({ taint, ready, afterS, evicted: wanted, nextCheckMs, defaultSeconds }) => {
    const cluster = setup(ready, [taint], pods);
    const now = T0 + afterS * 1000;
    const lastHeartbeat = ready.status === 'Unknown' ? T0 - 60_000 : now;
    const decision = decideNode(node(cluster), cluster.view(), lastHeartbeat, { now }, { ...SETTINGS, defaultTolerationSeconds: defaultSeconds ?? 300 });
    expect(evicted(decision.commands)).toEqual(wanted);
    // Evictions are immediate deletions with the pod's uid, the node unchanged.
    for (const c of decision.commands.filter((c): c is ObjectDeleted => c.type === 'ObjectDeleted')) {
      expect(c).toMatchObject({ kind: 'Pod', namespace: 'default', gracePeriodSeconds: 0, uid: cluster.view().get(podKey(c.name))?.metadata.uid });
    }
    expect(decision.commands.filter((c) => c.type !== 'ObjectDeleted')).toEqual([]);
    if (ready.status === 'Unknown') expect(decision.requeueAfterMs).toBe(nextCheckMs);
    else expect(decision.requeueAfterMs).toBe(Math.min(nextCheckMs ?? Infinity, SETTINGS.gracePeriodMs + 1));
    cluster.apply(...decision.commands);
    for (const name of wanted) expect(cluster.view().get(podKey(name))).toBeUndefined();
  });
});

describe('the node lifecycle controller', () => {
  it('drives a silent node from Ready to tainted to its pods evicted, on its heartbeat tracker and options', () => {
    const cluster = setup(readyCondition('True'), [], [{ name: 'a' }, { name: 'b', tolerations: [toleration(UNREACHABLE_TAINT, 30)] }]);
    const heartbeats: HeartbeatTracker = { lastSeen: (name) => (name === 'n1' ? T0 : undefined), since: T0 - 1000, horizon: T0 - 101_000, close: () => undefined };
    const controller = createNodeLifecycleController({ heartbeats, gracePeriodMs: 10_000, defaultTolerationSeconds: 20 });
    expect(controller.initialKeys(cluster.view())).toEqual([NODE_KEY]);
    const step = (now: number): EventBody[] => {
      const { commands } = controller.decide(NODE_KEY, cluster.view(), { now });
      cluster.apply(...commands);
      return [...commands];
    };
    expect(step(T0 + 10_000)).toEqual([]);
    // timeAdded has whole seconds (RFC 3339, as kube's): taint on a second boundary.
    const tainted = step(T0 + 11_000);
    expect(readyIn(tainted)?.status).toBe('Unknown');
    expect(taintsIn(tainted)).toEqual([unreachable(T0 + 11_000)]);
    expect(evicted(step(T0 + 11_000 + 19_999))).toEqual([]);
    expect(evicted(step(T0 + 11_000 + 20_000))).toEqual(['a']);
    expect(evicted(step(T0 + 11_000 + 29_999))).toEqual([]);
    expect(evicted(step(T0 + 11_000 + 30_000))).toEqual(['b']);
    expect(cluster.view().podsOnNode('n1')).toEqual([]);
    expect(controller.decide('Node//gone', cluster.view(), { now: T0 }).commands).toEqual([]);
  });
});
