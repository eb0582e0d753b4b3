/**
 * The chaos checker's double-binding check on a real (embedded LMDB) log: a PodBound the fold
 * refused is no double binding; a pod that ran on two nodes, ran on a node no binding names,
 * or that projections hold bound to different nodes is one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../../log/embedded/index.ts';
import { appendBodies } from '../../projections/writer.ts';
import { pod, podStatus } from '../../schemas/fixtures/samples.ts';
import type { EventBody, Pod } from '../../schemas/index.ts';
import { indexObserved, judgeBindings } from './binding.ts';
import { readLogIndex } from './checker.ts';

const root = mkdtempSync(join(tmpdir(), 'logplane-chaos-binding-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const UID = 'b1d1e2f3-0000-4000-8000-000000000001';
const { nodeName: _sampleNode, ...unboundSpec } = pod.spec;
const unbound: Pod = { ...pod, metadata: { ...pod.metadata, uid: UID, name: 'web-1', namespace: 'shop' }, spec: unboundSpec };
const bound = (node: string): EventBody => ({
  type: 'PodBound', namespace: 'shop', name: 'web-1', node, expectedPodVersion: '1', rationale: { filtered: [], scores: [], feasibleNodes: 3, totalNodes: 3 },
});
const ranOn = (node: string) => ({ node, body: { type: 'PodStatusChanged', namespace: 'shop', name: 'web-1', uid: UID, status: podStatus } as EventBody });

describe('the chaos double-binding check', () => {
  it.each([
    { name: 'a second PodBound the fold refused', reports: ['node-1'], held: ['node-1', 'node-1'], doubles: 0 },
    { name: 'the pod ran on two nodes', reports: ['node-1', 'node-2'], held: ['node-1', 'node-1'], doubles: 1 },
    { name: 'the pod ran on a node no binding names', reports: ['node-3'], held: ['node-1'], doubles: 1 },
    { name: 'two projections hold it on different nodes', reports: ['node-1'], held: ['node-1', 'node-2'], doubles: 1 },
    { name: 'a projection holds it on a node no binding names', reports: ['node-1'], held: ['node-3'], doubles: 1 },
    { name: 'a failed-over controller re-created the name with another uid', reports: ['node-1'], held: ['node-1'], doubles: 0, recreated: true },
  ])('$name: $doubles double binding(s)', async ({ name, reports, held, doubles, recreated }) => {
    const cluster = name.replace(/\W+/g, '-');
    const log = await createEmbeddedLog({ dir: join(root, cluster), cluster, partitions: 3 });
    try {
      await appendBodies(log, [{ type: 'ObjectCreated', object: unbound }], { actor: { type: 'controller', name: 'replicaset-controller' } });
      // Pod names are deterministic: the next owner of the ReplicaSet creates the same name with
      // another uid, which the fold refuses; the binding is decided on version 1, the first create.
      if (recreated) {
        const again: Pod = { ...unbound, metadata: { ...unbound.metadata, uid: 'b1d1e2f3-0000-4000-8000-000000000002' } };
        await appendBodies(log, [{ type: 'ObjectCreated', object: again }], { actor: { type: 'controller', name: 'replicaset-controller' } });
      }
      // Two schedulers of a failing-over group both bind it: the log holds both.
      await appendBodies(log, [bound('node-1')], { actor: { type: 'controller', name: 'scheduler' } });
      await appendBodies(log, [bound('node-2')], { actor: { type: 'controller', name: 'scheduler' } });
      for (const report of reports.map(ranOn)) await appendBodies(log, [report.body], { actor: { type: 'node', name: report.node } });

      const index = await readLogIndex(log);
      await indexObserved(index.bindings, log, index.end.observed);
      const verdict = judgeBindings(index.bindings, new Map(held.map((node, i) => [`projection-${i}`, new Map([[UID, node]])])));
      expect(verdict.podBounds).toBe(2);
      expect(verdict.contested).toBe(1);
      expect(verdict.doubleBindings, verdict.doubleBindings.join('; ')).toHaveLength(doubles);
    } finally {
      await log.close();
    }
  });
});
