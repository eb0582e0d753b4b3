import { describe, expect, it } from 'vitest';
import { customKindRef, historyKindRef } from './kind-refs.ts';
import type { CustomResourceDefinition } from '../../schemas/index.ts';

describe('the kinds the history API takes', () => {
  it.each([
    ['Pod', 'Pod'],
    ['Deployment', 'Deployment'],
    ['Job', 'Job.batch'],
    ['Job.batch', 'Job.batch'],
    ['EndpointSlice.discovery.k8s.io', 'EndpointSlice.discovery.k8s.io'],
    // A kind served from another's storage names that storage.
    ['Event.events.k8s.io', 'Event'],
    // A custom resource's Kind.group, whether or not its CRD still exists.
    ['CronTab.stable.example.com', 'CronTab.stable.example.com'],
    ['My-Kind2.ops.example.com', 'My-Kind2.ops.example.com'],
  ])('%s → %s', (text, ref) => {
    expect(historyKindRef(text)).toBe(ref);
  });

  it.each([
    ['Nope'],
    ['CronTab'],
    ['CronTab.example'],
    ['CronTab.Stable.example.com'],
    ['Cron_Tab.stable.example.com'],
    ['.stable.example.com'],
    ['CronTab.stable..example.com'],
    ['__proto__.stable.example.com'],
    [''],
  ])('%j names no kind', (text) => {
    expect(historyKindRef(text)).toBeUndefined();
  });

  it("names a CRD's kind by its ref", () => {
    const crd = { spec: { group: 'stable.example.com', names: { kind: 'CronTab', plural: 'crontabs' } } } as unknown as CustomResourceDefinition;
    expect(customKindRef(crd)).toBe('CronTab.stable.example.com');
  });
});
