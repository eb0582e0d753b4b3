/**
 * A container's `resources` as CRI cgroup settings, computed as kubelet does on cgroup v1:
 * memory limit in bytes, `cpu.shares` from the CPU request (2 per milli-CPU / 1024 per
 * CPU, at least 2), CFS quota from the CPU limit over a 100 ms period. Pure.
 */
import { KubeletConfigError } from '../errors.ts';
import type { LinuxContainerResources } from './client.ts';

const BINARY_SUFFIXES: Readonly<Record<string, number>> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** A Kubernetes quantity ("128Mi", "0.5", "250m", "1e3") as a number; a {@link KubeletConfigError} when it is not one. */
export function parseQuantity(quantity: string): number {
  const match = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$/.exec(quantity.trim());
  if (match === null) throw new KubeletConfigError(`"${quantity}" is not a quantity`, { quantity });
  const [, digits, exponent, suffix = ''] = match;
  const value = Number(digits);
  if (exponent !== undefined) return value * 10 ** Number(exponent.slice(1));
  return value * (BINARY_SUFFIXES[suffix] ?? DECIMAL_SUFFIXES[suffix]!);
}

/** CFS period kubelet uses, in µs. */
const CPU_PERIOD_US = 100_000;

/** CRI Linux resources of a container's requests and limits (only what is set). */
export function linuxResources(resources: { readonly requests?: Readonly<Record<string, string>>; readonly limits?: Readonly<Record<string, string>> } | undefined): LinuxContainerResources {
  const limits = resources?.limits ?? {};
  // As kube-apiserver defaults it: a request left out equals the limit.
  const requests = { ...limits, ...(resources?.requests ?? {}) };
  const memoryLimit = limits['memory'];
  const cpuRequest = requests['cpu'];
  const cpuLimit = limits['cpu'];
  return {
    ...(memoryLimit === undefined ? {} : { memoryLimitInBytes: Math.ceil(parseQuantity(memoryLimit)) }),
    ...(cpuRequest === undefined ? {} : { cpuShares: Math.max(2, Math.floor(parseQuantity(cpuRequest) * 1024)) }),
    ...(cpuLimit === undefined ? {} : { cpuPeriod: CPU_PERIOD_US, cpuQuota: Math.max(1000, Math.ceil(parseQuantity(cpuLimit) * CPU_PERIOD_US)) }),
  };
}
