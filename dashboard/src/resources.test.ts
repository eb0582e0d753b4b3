import { describe, expect, it } from 'vitest';
import { resourceOfKindRef, resourceOfOwner, resourceOfRoute, routeNameOf, type Resource } from './resources.ts';

const resource = (group: string, plural: string, kind: string): Resource => ({ group, version: 'v1', plural, kind, namespaced: true });
const coreEvents = resource('', 'events', 'Event');
const eventsK8s = resource('events.k8s.io', 'events', 'Event');
const deployments = resource('apps', 'deployments', 'Deployment');
const jobs = resource('batch', 'jobs', 'Job');
const customPods = resource('x.example.com', 'pods', 'Pod');
const pods = resource('', 'pods', 'Pod');
// Discovery order: core first.
const served = [pods, coreEvents, deployments, jobs, eventsK8s, customPods];

describe('routeNameOf and resourceOfRoute', () => {
  it.each([
    [pods, 'pods'],
    [coreEvents, 'events'],
    [eventsK8s, 'events.events.k8s.io'],
    [deployments, 'deployments.apps'],
    [customPods, 'pods.x.example.com'],
  ])('%j is routed as %s and found again by it', (r, name) => {
    expect(routeNameOf(r)).toBe(name);
    expect(resourceOfRoute(served, name)).toBe(r);
  });

  it('finds a bare plural written by older links, core first', () => {
    expect(resourceOfRoute(served, 'deployments')).toBe(deployments);
    expect(resourceOfRoute(served, 'events')).toBe(coreEvents);
    expect(resourceOfRoute(served, 'widgets')).toBeUndefined();
    expect(resourceOfRoute(served, undefined)).toBeUndefined();
  });
});

describe('resourceOfKindRef', () => {
  it.each([
    ['Pod', pods],
    ['Deployment', deployments],
    ['Job.batch', jobs],
    ['Event', coreEvents],
    ['Event.events.k8s.io', eventsK8s],
    ['Pod.x.example.com', customPods],
  ])('%s names %j', (ref, r) => {
    expect(resourceOfKindRef(served, ref)).toBe(r);
  });

  it('does not take a bare kind for a grouped one', () => {
    expect(resourceOfKindRef(served, 'Job')).toBeUndefined();
  });
});

describe('resourceOfOwner', () => {
  it('reads the group from the apiVersion', () => {
    expect(resourceOfOwner(served, { apiVersion: 'apps/v1', kind: 'Deployment' })).toBe(deployments);
    expect(resourceOfOwner(served, { apiVersion: 'v1', kind: 'Pod' })).toBe(pods);
    expect(resourceOfOwner(served, { apiVersion: 'x.example.com/v1', kind: 'Pod' })).toBe(customPods);
    expect(resourceOfOwner(served, { apiVersion: 'other.io/v1', kind: 'Pod' })).toBeUndefined();
  });

  it('takes the first served resource of the kind without an apiVersion', () => {
    expect(resourceOfOwner(served, { kind: 'Pod' })).toBe(pods);
  });
});
