/**
 * Resource accounting the fold uses to admit bindings: what a pod requests and what a
 * node can still give. Quantities are parsed once, into integers (millicores, bytes).
 */
import type { Node, Pod } from '../schemas/index.ts';
import { parseQuantity, QuantityScale } from './quantity.ts';

/** Millicores of a cpu quantity; the apiserver rejects malformed ones, so they count as 0 here. */
const cpuMillis = (quantity: string): number => {
  const parsed = parseQuantity(quantity, QuantityScale.Milli);
  return parsed.type === 'ok' ? parsed.value : 0;
};

/** Bytes (or units) of a quantity; malformed ones count as 0 (see `cpuMillis`). */
const quantityBytes = (quantity: string): number => {
  const parsed = parseQuantity(quantity, QuantityScale.Unit);
  return parsed.type === 'ok' ? parsed.value : 0;
};

/** Requested resources: cpu in millicores, memory in bytes, and a pod count. */
export interface NodeUsage {
  readonly cpuMilli: number;
  readonly memoryBytes: number;
  readonly pods: number;
}

type Requests = Readonly<Record<string, string>> | undefined;

const sumContainers = (containers: readonly { resources?: { requests?: Requests } }[] | undefined) =>
  (containers ?? []).reduce(
    (acc, c) => ({
      cpuMilli: acc.cpuMilli + cpuMillis(c.resources?.requests?.cpu ?? '0'),
      memoryBytes: acc.memoryBytes + quantityBytes(c.resources?.requests?.memory ?? '0'),
    }),
    { cpuMilli: 0, memoryBytes: 0 },
  );

/** A pod's effective request: the sum of its containers, or the largest init container if larger. */
export const podUsage = (pod: Pod): NodeUsage => {
  const main = sumContainers(pod.spec?.containers);
  const init = (pod.spec?.initContainers ?? []).map((c) => sumContainers([c]));
  return {
    cpuMilli: Math.max(main.cpuMilli, ...init.map((i) => i.cpuMilli)),
    memoryBytes: Math.max(main.memoryBytes, ...init.map((i) => i.memoryBytes)),
    pods: 1,
  };
};

/** What a node offers: status.allocatable, falling back to capacity. Missing values mean unlimited. */
export const nodeAllocatable = (node: Node): NodeUsage => {
  const source = node.status?.allocatable ?? node.status?.capacity ?? {};
  return {
    cpuMilli: source.cpu === undefined ? Number.POSITIVE_INFINITY : cpuMillis(source.cpu),
    memoryBytes: source.memory === undefined ? Number.POSITIVE_INFINITY : quantityBytes(source.memory),
    pods: source.pods === undefined ? 110 : Number(source.pods),
  };
};

export const addUsage = (a: NodeUsage, b: NodeUsage): NodeUsage => ({
  cpuMilli: a.cpuMilli + b.cpuMilli,
  memoryBytes: a.memoryBytes + b.memoryBytes,
  pods: a.pods + b.pods,
});

export const subtractUsage = (a: NodeUsage, b: NodeUsage): NodeUsage => ({
  cpuMilli: Math.max(0, a.cpuMilli - b.cpuMilli),
  memoryBytes: Math.max(0, a.memoryBytes - b.memoryBytes),
  pods: Math.max(0, a.pods - b.pods),
});

/** Undefined when `usage` fits in `allocatable`, else the kube-style reason ("Insufficient cpu"). */
export const usageFits = (usage: NodeUsage, allocatable: NodeUsage): string | undefined => {
  if (usage.cpuMilli > allocatable.cpuMilli) return 'Insufficient cpu';
  if (usage.memoryBytes > allocatable.memoryBytes) return 'Insufficient memory';
  if (usage.pods > allocatable.pods) return 'Too many pods';
  return undefined;
};
