import { describe, expect, it } from 'vitest';
import type { View } from '../projections/index.ts';
import type { Node } from '../schemas/index.ts';
import { decideNode, UNREACHABLE_TAINT } from './node-lifecycle/index.ts';

const emptyView = { podsOnNode: () => [] } as unknown as View;
const settings = { gracePeriodMs: 50_000, defaultTolerationSeconds: 300 };

describe('node-lifecycle review', () => {
  it('a node that heartbeats again after being marked unreachable becomes Ready again, not only untainted', () => {
    const now = Date.UTC(2026, 0, 1, 12);
    const node: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', resourceVersion: '5.7' },
      spec: { taints: [{ key: UNREACHABLE_TAINT, effect: 'NoExecute', timeAdded: '2026-01-01T11:58:00Z' }] },
      status: {
        conditions: [
          { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' },
        ],
      },
    };
    const decision = decideNode(node, emptyView, now - 1000, { now }, settings);
    const statusChange = decision.commands.find((c) => c.type === 'NodeStatusChanged');
    expect(statusChange).toMatchObject({ type: 'NodeStatusChanged', name: 'n1' });
    const ready = statusChange?.type === 'NodeStatusChanged' ? statusChange.status.conditions?.find((c) => c.type === 'Ready') : undefined;
    expect(ready?.status).toBe('True');
    expect(decision.commands.some((c) => c.type === 'ObjectUpdated')).toBe(true);
    // A controller that just started and has heard nothing yet does not vouch for the node.
    const unheard = decideNode(node, emptyView, now - 1000, { now }, settings, false);
    expect(unheard.commands.some((c) => c.type === 'NodeStatusChanged')).toBe(false);
  });
});
