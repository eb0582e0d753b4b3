/**
 * The fold's verdicts on `ClusterConfigured`: set once (the same again is a no-op, another
 * is rejected), validated, only on its key and the desired topic; Services are allocated
 * from what the log says, and a log without the event folds with the legacy defaults.
 */
import { describe, expect, it } from 'vitest';
import { CLUSTER_CONFIGURATION_KEY } from '../schemas/kinds/domains.ts';
import type { EventBody } from '../schemas/index.ts';
import { CONFIGURATION_ALLOCATION, foldEvent, foldSettingsOf, LEGACY_FOLD_SETTINGS } from './fold.ts';
import { makeEvent, memoryFoldState } from './testing.ts';

const configured = (serviceCIDR: string, nodePortLow = 30000, nodePortHigh = 32767): EventBody => ({ type: 'ClusterConfigured', serviceCIDR, nodePortLow, nodePortHigh });

const namespace = (name: string): EventBody => ({ type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, status: { phase: 'Active' } } });
const service = (name: string): EventBody => ({
  type: 'ObjectCreated',
  object: { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { ports: [{ port: 80 }], type: 'NodePort' } },
});

/** Folds `events` on the desired topic in order and returns the state and each verdict. */
const fold = (events: [string, EventBody][]) => {
  const state = memoryFoldState();
  const verdicts = events.map(([key, body], offset) => foldEvent(state, makeEvent(key, body), 'desired', offset).verdict);
  return { state, verdicts };
};

describe('ClusterConfigured in the fold', () => {
  it('records the configuration once, and Services get their ClusterIP and NodePort from it', () => {
    const { state, verdicts } = fold([
      [CLUSTER_CONFIGURATION_KEY, configured('10.7.0.0/28', 31000, 31001)],
      ['Namespace//default', namespace('default')],
      ['Service/default/web', service('web')],
    ]);
    expect(verdicts.map((v) => v.type)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(foldSettingsOf(state.getAllocation)).toEqual({ serviceCIDR: '10.7.0.0/28', nodePortRange: [31000, 31001] });
    const web = state.getDesired('Service/default/web')?.object as { spec: { clusterIP: string; ports: { nodePort: number }[] } };
    expect(web.spec.clusterIP).toBe('10.7.0.1');
    expect(web.spec.ports[0]!.nodePort).toBe(31000);
  });

  it('folds a log without the event with the legacy defaults', () => {
    const { state } = fold([
      ['Namespace//default', namespace('default')],
      ['Service/default/web', service('web')],
    ]);
    expect(state.getAllocation(CONFIGURATION_ALLOCATION)).toBeUndefined();
    expect(foldSettingsOf(state.getAllocation)).toEqual(LEGACY_FOLD_SETTINGS);
    expect((state.getDesired('Service/default/web')?.object as { spec: { clusterIP: string } }).spec.clusterIP).toBe('127.96.0.1');
  });

  it.each([
    ['the same configuration again: accepted, nothing changes', configured('10.7.0.0/28'), { type: 'accepted' }],
    [
      'another service CIDR: Conflict',
      configured('10.8.0.0/28'),
      { type: 'rejected', reason: 'Conflict', message: 'the cluster is configured with service CIDR 10.7.0.0/28 and NodePorts 30000-32767; they cannot change to 10.8.0.0/28 and 30000-32767' },
    ],
    ['another NodePort range: Conflict', configured('10.7.0.0/28', 30000, 30010), { type: 'rejected', reason: 'Conflict' }],
  ])('%s', (_title, second, verdict) => {
    const { state, verdicts } = fold([
      [CLUSTER_CONFIGURATION_KEY, configured('10.7.0.0/28')],
      [CLUSTER_CONFIGURATION_KEY, second],
    ]);
    expect(verdicts[1]).toMatchObject(verdict);
    expect(foldSettingsOf(state.getAllocation).serviceCIDR).toBe('10.7.0.0/28');
  });

  it.each([
    ['not a CIDR', configured('10.7.0.0'), 'serviceCIDR: Invalid value: "10.7.0.0": not an IPv4 CIDR'],
    ['an octet past 255', configured('10.300.0.0/16'), 'not an IPv4 CIDR'],
    ['a prefix too long', configured('10.7.0.0/31'), 'between /8 and /30'],
    ['host bits set', configured('10.7.0.1/24'), 'bits set beyond the prefix length'],
    ['an empty NodePort range', configured('10.7.0.0/24', 32000, 31000), 'nodePortRange: Invalid value: "32000-31000"'],
    ['a NodePort past 65535', configured('10.7.0.0/24', 30000, 70000), 'within 1-65535'],
  ])('rejects %s as Invalid and records nothing', (_title, body, message) => {
    const { state, verdicts } = fold([[CLUSTER_CONFIGURATION_KEY, body]]);
    expect(verdicts[0]).toMatchObject({ type: 'rejected', reason: 'Invalid', message: expect.stringContaining(message) });
    expect(state.getAllocation(CONFIGURATION_ALLOCATION)).toBeUndefined();
  });

  it('rejects the event on another key, and on the observed topic', () => {
    const { state, verdicts } = fold([['Service/default/web', configured('10.7.0.0/24')]]);
    expect(verdicts[0]).toMatchObject({ type: 'rejected', reason: 'Invalid', message: expect.stringContaining(CLUSTER_CONFIGURATION_KEY) });
    const observed = foldEvent(state, makeEvent(CLUSTER_CONFIGURATION_KEY, configured('10.7.0.0/24')), 'observed', 0).verdict;
    expect(observed).toMatchObject({ type: 'rejected', reason: 'Invalid', message: 'ClusterConfigured belongs on the desired topic, not observed' });
    expect(state.getAllocation(CONFIGURATION_ALLOCATION)).toBeUndefined();
  });
});
