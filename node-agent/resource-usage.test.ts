import { describe, expect, it } from 'vitest';
import { cpuRate, hostUsageRate, podUsageRate } from './resource-usage.ts';
import type { PodUsage } from './kubelet/usage.ts';

const pod = (timeMs: number, cpuUsageNanoSeconds: number, extra: Partial<PodUsage> = {}, restartCount = 0): PodUsage => ({
  namespace: 'default',
  name: 'burn',
  uid: 'u1',
  containers: [{ name: 'main', restartCount, timeMs, cpuUsageNanoSeconds, memoryWorkingSetBytes: 100 * 1024 * 1024 }],
  ...extra,
});

describe('cpuRate', () => {
  it.each([
    // one core for 15 s: 15e9 ns of CPU → 1e9 nanocores
    { previous: { timeMs: 0, cpuUsageNanoSeconds: 0 }, current: { timeMs: 15_000, cpuUsageNanoSeconds: 15e9 }, nanocores: 1e9 },
    // a quarter core for 2 s
    { previous: { timeMs: 1_000, cpuUsageNanoSeconds: 5e9 }, current: { timeMs: 3_000, cpuUsageNanoSeconds: 5.5e9 }, nanocores: 2.5e8 },
    // idle
    { previous: { timeMs: 1_000, cpuUsageNanoSeconds: 7 }, current: { timeMs: 2_000, cpuUsageNanoSeconds: 7 }, nanocores: 0 },
    // two cores
    { previous: { timeMs: 0, cpuUsageNanoSeconds: 0 }, current: { timeMs: 500, cpuUsageNanoSeconds: 1e9 }, nanocores: 2e9 },
  ])('$current.cpuUsageNanoSeconds ns at $current.timeMs ms → $nanocores nanocores', ({ previous, current, nanocores }) => {
    expect(cpuRate(previous, current)).toBe(nanocores);
  });

  it.each([
    { why: 'the counter went back (a new process)', previous: { timeMs: 0, cpuUsageNanoSeconds: 9e9 }, current: { timeMs: 1_000, cpuUsageNanoSeconds: 1e9 } },
    { why: 'no time passed', previous: { timeMs: 1_000, cpuUsageNanoSeconds: 0 }, current: { timeMs: 1_000, cpuUsageNanoSeconds: 1e9 } },
    { why: 'the samples are out of order', previous: { timeMs: 2_000, cpuUsageNanoSeconds: 0 }, current: { timeMs: 1_000, cpuUsageNanoSeconds: 1e9 } },
  ])('has no rate when $why', ({ previous, current }) => {
    expect(cpuRate(previous, current)).toBeUndefined();
  });
});

describe('podUsageRate', () => {
  it('gives the rate over the window between the two samples and the latest working set', () => {
    expect(podUsageRate(pod(1_000, 1e9), pod(3_000, 2.6e9))).toEqual({
      namespace: 'default',
      name: 'burn',
      uid: 'u1',
      timeMs: 3_000,
      windowMs: 2_000,
      containers: [{ name: 'main', cpuNanoCores: 8e8, memoryWorkingSetBytes: 100 * 1024 * 1024 }],
    });
  });

  it('has no figures before a second sample, across a container restart, or for another pod of the same name', () => {
    expect(podUsageRate(undefined, pod(3_000, 1e9))).toBeUndefined();
    expect(podUsageRate(pod(1_000, 5e9, {}, 0), pod(3_000, 1e9, {}, 1))).toBeUndefined();
    expect(podUsageRate(pod(1_000, 1e9, { uid: 'old' }), pod(3_000, 2e9))).toBeUndefined();
  });
});

describe('hostUsageRate', () => {
  it('rates the host CPU and keeps the latest working set', () => {
    expect(hostUsageRate({ timeMs: 0, cpuUsageNanoSeconds: 0, memoryWorkingSetBytes: 1 }, { timeMs: 1_000, cpuUsageNanoSeconds: 3e9, memoryWorkingSetBytes: 2048 })).toEqual({
      timeMs: 1_000,
      windowMs: 1_000,
      cpuNanoCores: 3e9,
      memoryWorkingSetBytes: 2048,
    });
    expect(hostUsageRate(undefined, { timeMs: 1_000, cpuUsageNanoSeconds: 3e9, memoryWorkingSetBytes: 2048 })).toBeUndefined();
  });
});
