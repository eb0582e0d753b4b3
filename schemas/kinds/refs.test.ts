import { describe, expect, it } from 'vitest';
import { kindRefOf, kindRefOfKey, splitKindRef } from './refs.ts';

describe('kind refs', () => {
  it.each([
    ['', 'Pod', 'Pod'],
    ['', 'Event', 'Event'],
    ['apps', 'Deployment', 'Deployment'],
    ['apps', 'StatefulSet', 'StatefulSet'],
    ['batch', 'Job', 'Job.batch'],
    ['events.k8s.io', 'Event', 'Event.events.k8s.io'],
    ['rbac.authorization.k8s.io', 'ClusterRole', 'ClusterRole.rbac.authorization.k8s.io'],
    ['stable.example.com', 'CronTab', 'CronTab.stable.example.com'],
  ])('group %j kind %s is %s in keys, and splits back', (group, kind, ref) => {
    expect(kindRefOf(group, kind)).toBe(ref);
    expect(splitKindRef(ref)).toEqual({ kind, group: ref.includes('.') ? group : null });
  });

  it('reads the kind ref of an object key, cluster-scoped or namespaced', () => {
    expect(kindRefOfKey('Pod/default/web')).toBe('Pod');
    expect(kindRefOfKey('Node//n1')).toBe('Node');
    expect(kindRefOfKey('Event.events.k8s.io/ns/a.b.c')).toBe('Event.events.k8s.io');
    expect(kindRefOfKey('no-slash')).toBe('no-slash');
  });
});
