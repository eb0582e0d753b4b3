import { describe, expect, it } from 'vitest';
import type { KubeObject } from './api.ts';
import { eventRow, eventRows, eventsSelector, isAbout } from './events-model.ts';

const event = (name: string, involved: Record<string, string>, extra: Record<string, unknown> = {}): KubeObject => ({
  kind: 'Event',
  metadata: { name, namespace: 'default', creationTimestamp: '2026-01-01T00:00:00Z' },
  involvedObject: involved,
  ...extra,
});

const deployment = { kind: 'Deployment', namespace: 'default', name: 'echo' };

describe('eventsSelector', () => {
  it("selects by the involved object's kind, name and (when namespaced) namespace", () => {
    expect(eventsSelector(deployment)).toBe('involvedObject.kind=Deployment,involvedObject.name=echo,involvedObject.namespace=default');
    expect(eventsSelector({ kind: 'Node', namespace: '', name: 'node-1' })).toBe('involvedObject.kind=Node,involvedObject.name=node-1');
  });
});

describe('isAbout', () => {
  it.each([
    [{ kind: 'Deployment', namespace: 'default', name: 'echo' }, true],
    [{ kind: 'ReplicaSet', namespace: 'default', name: 'echo' }, false],
    [{ kind: 'Deployment', namespace: 'other', name: 'echo' }, false],
    [{ kind: 'Deployment', namespace: 'default', name: 'echo-2' }, false],
  ])('%j → %s', (involved, expected) => {
    expect(isAbout(event('e', involved), deployment)).toBe(expected);
  });
});

describe('eventRow and eventRows', () => {
  it('takes the latest of its timestamps, the reporter, the count (a series counts too), Normal by default', () => {
    expect(
      eventRow(event('a', deployment, { reason: 'ScalingReplicaSet', message: 'Scaled up', source: { component: 'deployment-controller' }, count: 3, firstTimestamp: '2026-01-01T00:00:01Z', lastTimestamp: '2026-01-01T00:00:09Z' })),
    ).toEqual({ name: 'a', type: 'Normal', reason: 'ScalingReplicaSet', message: 'Scaled up', from: 'deployment-controller', count: 3, lastSeen: Date.parse('2026-01-01T00:00:09Z') });
    const series = eventRow(event('b', deployment, { type: 'Warning', reportingController: 'kubelet', eventTime: '2026-01-01T00:00:02Z', series: { count: 7, lastObservedTime: '2026-01-01T00:01:00Z' } }));
    expect(series).toMatchObject({ type: 'Warning', from: 'kubelet', count: 7, lastSeen: Date.parse('2026-01-01T00:01:00Z') });
    expect(eventRow(event('c', deployment)).lastSeen).toBe(Date.parse('2026-01-01T00:00:00Z'));
  });

  it("lists only the object's Events, newest first", () => {
    const rows = eventRows(
      [
        event('old', deployment, { lastTimestamp: '2026-01-01T00:00:05Z' }),
        event('other', { kind: 'Pod', namespace: 'default', name: 'echo' }, { lastTimestamp: '2026-01-01T00:00:09Z' }),
        event('new', deployment, { lastTimestamp: '2026-01-01T00:00:07Z' }),
      ],
      deployment,
    );
    expect(rows.map((r) => r.name)).toEqual(['new', 'old']);
  });
});
