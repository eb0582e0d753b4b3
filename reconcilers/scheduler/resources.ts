/**
 * Pod resource requests and node allocatable amounts as integers (cpu in millicores,
 * memory and ephemeral-storage in bytes, every other resource in units of its quantity),
 * computed the way kube-scheduler's `resourcehelper.PodRequests` and `NodeInfo` do.
 *
 * Like kube-scheduler's `framework.Resource`, cpu, memory and ephemeral-storage are fields
 * and every "scalar" resource (extended resources such as `nvidia.com/gpu` or
 * `example.com/foo`, `hugepages-<size>`, `kubernetes.io/…`-prefixed ones) is an entry of
 * `scalar`, a Map (resource names are user keys and never reach a prototype). Other names
 * (`storage`, `pods` in a container) are not scheduled on and are left out.
 */
import { parseQuantity, type QuantityParseError, type QuantityParseResult, QuantityScale, scaleForResource } from '../../projections/quantity.ts';
import type { Container, Node, Pod } from '../../schemas/index.ts';

/** cpu and memory: what scoring (LeastAllocated, BalancedAllocation) looks at. */
export interface CpuMemory {
  readonly cpuMilli: number;
  readonly memoryBytes: number;
}

/** Every resource a pod may ask for. */
export interface PodResources extends CpuMemory {
  readonly ephemeralStorageBytes: number;
  /** Scalar resources by name; absent means 0. Shared and never mutated once built. */
  readonly scalar: ReadonlyMap<string, number>;
}

/** Every resource, plus pod slots, as requested on or offered by a node. */
export interface ResourceAmounts extends PodResources {
  readonly pods: number;
}

/** A pod's requests: as written (`requested`, for fit) and with defaults for unset cpu/memory (`nonZeroRequested`, for scoring). */
export interface PodRequests {
  readonly requested: PodResources;
  /** cpu and memory as `requested`, but a container without a cpu/memory request counts as {@link DEFAULT_NON_ZERO_REQUEST}. */
  readonly nonZeroRequested: CpuMemory;
}

/** What kube-scheduler assumes a container without a request uses, so empty pods still spread (100m, 200Mi). */
export const DEFAULT_NON_ZERO_REQUEST = { cpuMilli: 100, memoryBytes: 200 * 1024 * 1024 } as const satisfies CpuMemory;

/** The outcome of {@link computePodRequests}: the requests, or the quantity that could not be read. */
export type PodRequestsResult =
  | { readonly type: 'ok'; readonly requests: PodRequests }
  | { readonly type: 'invalid'; readonly error: QuantityParseError };

const NO_SCALAR: ReadonlyMap<string, number> = new Map();

/** No resources at all (shared). */
export const ZERO_RESOURCES: PodResources = { cpuMilli: 0, memoryBytes: 0, ephemeralStorageBytes: 0, scalar: NO_SCALAR };

const CPU = 'cpu';
const MEMORY = 'memory';
const EPHEMERAL_STORAGE = 'ephemeral-storage';
const HUGEPAGES_PREFIX = 'hugepages-';

/**
 * Whether kube-scheduler counts `name` as a scalar resource (`v1helper.IsScalarResourceName`):
 * an extended resource (a qualified name with a domain outside `kubernetes.io`, e.g.
 * `nvidia.com/gpu`), a `hugepages-<size>`, a `kubernetes.io/`-prefixed native resource, or
 * an `attachable-volumes-` count.
 */
export function isScalarResourceName(name: string): boolean {
  return name.startsWith(HUGEPAGES_PREFIX) || name.startsWith('attachable-volumes-') || (name.includes('/') && !name.startsWith('requests.'));
}

/** Mutable sums, turned into {@link PodResources} once. */
interface Accumulator {
  cpuMilli: number;
  memoryBytes: number;
  ephemeralStorageBytes: number;
  scalar: Map<string, number> | undefined;
}

const accumulator = (): Accumulator => ({ cpuMilli: 0, memoryBytes: 0, ephemeralStorageBytes: 0, scalar: undefined });

type Combine = (left: number, right: number) => number;
const sum: Combine = (left, right) => left + right;

function combineInto(target: Accumulator, source: Accumulator, combine: Combine): void {
  target.cpuMilli = combine(target.cpuMilli, source.cpuMilli);
  target.memoryBytes = combine(target.memoryBytes, source.memoryBytes);
  target.ephemeralStorageBytes = combine(target.ephemeralStorageBytes, source.ephemeralStorageBytes);
  if (source.scalar === undefined) return;
  target.scalar ??= new Map();
  for (const [name, value] of source.scalar) target.scalar.set(name, combine(target.scalar.get(name) ?? 0, value));
}

const copyOf = (source: Accumulator): Accumulator => {
  const copy = accumulator();
  combineInto(copy, source, sum);
  return copy;
};

const frozen = (source: Accumulator): PodResources => ({
  cpuMilli: source.cpuMilli,
  memoryBytes: source.memoryBytes,
  ephemeralStorageBytes: source.ephemeralStorageBytes,
  scalar: source.scalar === undefined || source.scalar.size === 0 ? NO_SCALAR : source.scalar,
});

/** One container's requests; `cpuSet`/`memorySet` say whether they were written (for the non-zero defaults). */
interface ContainerRequest {
  readonly requests: Accumulator;
  readonly cpuSet: boolean;
  readonly memorySet: boolean;
}

/**
 * The pod's requests as kube-scheduler computes them (`resourcehelper.PodRequests`):
 * - the regular containers are summed;
 * - a restartable init container (`restartPolicy: Always`, a sidecar) runs beside them, so
 *   it is added to the sum, and to every later init container's use;
 * - each other init container runs alone with the sidecars started before it; the pod
 *   requests the maximum of that use and the sum, per resource;
 * - `spec.overhead` is added on top.
 * A container with a limit but no request requests its limit, as the apiserver's
 * defaulting would have written it. `nonZeroRequested` applies the defaults to each
 * container (init containers included) that sets no cpu / memory request.
 */
export function computePodRequests(pod: Pod): PodRequestsResult {
  const requested = accumulator();
  const nonZero = accumulator();
  for (const container of pod.spec.containers) {
    const request = containerRequest(container);
    if (request.type === 'invalid') return request;
    combineInto(requested, request.value.requests, sum);
    combineInto(nonZero, nonZeroOf(request.value), sum);
  }
  const initContainers = pod.spec.initContainers ?? [];
  if (initContainers.length > 0) {
    const sidecars = accumulator();
    const sidecarsNonZero = accumulator();
    const initMax = accumulator();
    const initMaxNonZero = accumulator();
    for (const container of initContainers) {
      const request = containerRequest(container);
      if (request.type === 'invalid') return request;
      const own = request.value.requests;
      const ownNonZero = nonZeroOf(request.value);
      if (container.restartPolicy === 'Always') {
        combineInto(requested, own, sum);
        combineInto(nonZero, ownNonZero, sum);
        combineInto(sidecars, own, sum);
        combineInto(sidecarsNonZero, ownNonZero, sum);
        combineInto(initMax, sidecars, Math.max);
        combineInto(initMaxNonZero, sidecarsNonZero, Math.max);
      } else {
        const use = copyOf(own);
        combineInto(use, sidecars, sum);
        const useNonZero = copyOf(ownNonZero);
        combineInto(useNonZero, sidecarsNonZero, sum);
        combineInto(initMax, use, Math.max);
        combineInto(initMaxNonZero, useNonZero, Math.max);
      }
    }
    combineInto(requested, initMax, Math.max);
    combineInto(nonZero, initMaxNonZero, Math.max);
  }
  const overhead = pod.spec.overhead;
  if (overhead !== undefined && overhead !== null) {
    const parsed = resourceList(overhead);
    if (parsed.type === 'invalid') return parsed;
    combineInto(requested, parsed.value.requests, sum);
    combineInto(nonZero, parsed.value.requests, sum);
  }
  return {
    type: 'ok',
    requests: { requested: frozen(requested), nonZeroRequested: { cpuMilli: nonZero.cpuMilli, memoryBytes: nonZero.memoryBytes } },
  };
}

function nonZeroOf(request: ContainerRequest): Accumulator {
  const { requests } = request;
  return {
    cpuMilli: request.cpuSet ? requests.cpuMilli : DEFAULT_NON_ZERO_REQUEST.cpuMilli,
    memoryBytes: request.memorySet ? requests.memoryBytes : DEFAULT_NON_ZERO_REQUEST.memoryBytes,
    ephemeralStorageBytes: 0,
    scalar: undefined,
  };
}

type Parsed<T> = { type: 'ok'; value: T } | { type: 'invalid'; error: QuantityParseError };

/** The container's requests, each resource's limit standing in for a missing request. */
function containerRequest(container: Container): Parsed<ContainerRequest> {
  const requests = container.resources?.requests ?? undefined;
  const limits = container.resources?.limits ?? undefined;
  if (limits === undefined || limits === null) return resourceList(requests ?? {});
  if (requests === undefined || requests === null) return resourceList(limits);
  return resourceList({ ...limits, ...requests });
}

/** Reads a ResourceList into an accumulator (names that are not scheduled on are skipped). */
function resourceList(list: Readonly<Record<string, string | null | undefined>>): Parsed<ContainerRequest> {
  const requests = accumulator();
  let cpuSet = false;
  let memorySet = false;
  for (const name of Object.keys(list)) {
    const text = list[name];
    if (text === undefined || text === null) continue;
    const isScalar = name !== CPU && name !== MEMORY && name !== EPHEMERAL_STORAGE && isScalarResourceName(name);
    if (name !== CPU && name !== MEMORY && name !== EPHEMERAL_STORAGE && !isScalar) continue;
    const parsed = parseQuantityCached(text, scaleForResource(name));
    if (parsed.type === 'invalid') return parsed;
    const value = parsed.value;
    if (name === CPU) {
      requests.cpuMilli = value;
      cpuSet = true;
    } else if (name === MEMORY) {
      requests.memoryBytes = value;
      memorySet = true;
    } else if (name === EPHEMERAL_STORAGE) {
      requests.ephemeralStorageBytes = value;
    } else {
      requests.scalar ??= new Map();
      requests.scalar.set(name, value);
    }
  }
  return { type: 'ok', value: { requests, cpuSet, memorySet } };
}

/**
 * What the node offers pods: `status.allocatable`, falling back per resource to
 * `status.capacity`. A resource that is missing or unreadable offers nothing (0), so the
 * node fails the fit check instead of being overcommitted.
 */
export function nodeAllocatable(node: Node): ResourceAmounts {
  const allocatable = node.status?.allocatable ?? {};
  const capacity = node.status?.capacity ?? {};
  let scalar: Map<string, number> | undefined;
  for (const name of new Set([...Object.keys(allocatable), ...Object.keys(capacity)])) {
    if (name === CPU || name === MEMORY || name === EPHEMERAL_STORAGE || !isScalarResourceName(name)) continue;
    const amount = amountOf(name, allocatable, capacity);
    if (amount === 0) continue;
    scalar ??= new Map();
    scalar.set(name, amount);
  }
  return {
    cpuMilli: amountOf(CPU, allocatable, capacity),
    memoryBytes: amountOf(MEMORY, allocatable, capacity),
    ephemeralStorageBytes: amountOf(EPHEMERAL_STORAGE, allocatable, capacity),
    scalar: scalar ?? NO_SCALAR,
    pods: amountOf('pods', allocatable, capacity),
  };
}

function amountOf(resource: string, allocatable: Readonly<Record<string, string>>, capacity: Readonly<Record<string, string>>): number {
  const text = Object.hasOwn(allocatable, resource) ? allocatable[resource] : Object.hasOwn(capacity, resource) ? capacity[resource] : undefined;
  if (text === undefined) return 0;
  const parsed = parseQuantityCached(text, scaleForResource(resource));
  return parsed.type === 'ok' ? Math.max(parsed.value, 0) : 0;
}

/** Quantities read so far, per scale: a Deployment's pods all request the same few strings. */
const parsedQuantities: Record<QuantityScale, Map<string, QuantityParseResult>> = {
  [QuantityScale.Milli]: new Map(),
  [QuantityScale.Unit]: new Map(),
};
/** Distinct strings kept per scale; past that the cache starts over (bounded memory). */
const PARSED_QUANTITIES_KEPT = 1_024;

/**
 * `parseQuantity`, remembering readable quantities (results are immutable): the scheduler
 * reads each pod's requests once per pod version it caches and once per pod it places,
 * which parsed the same "100m" and "64Mi" (BigInt arithmetic) several times per pod.
 */
function parseQuantityCached(text: string, scale: QuantityScale): QuantityParseResult {
  const cache = parsedQuantities[scale];
  const known = cache.get(text);
  if (known !== undefined) return known;
  const parsed = parseQuantity(text, scale);
  if (parsed.type === 'ok') {
    if (cache.size >= PARSED_QUANTITIES_KEPT) cache.clear();
    cache.set(text, parsed);
  }
  return parsed;
}

/** `left + right`, per resource (a new value; the scalar map is shared when one side has none). */
export function addResources(left: PodResources, right: PodResources): PodResources {
  return {
    cpuMilli: left.cpuMilli + right.cpuMilli,
    memoryBytes: left.memoryBytes + right.memoryBytes,
    ephemeralStorageBytes: left.ephemeralStorageBytes + right.ephemeralStorageBytes,
    scalar: addScalar(left.scalar, right.scalar),
  };
}

/** `left + right` of scalar resources, sharing a side when the other is empty. */
export function addScalar(left: ReadonlyMap<string, number>, right: ReadonlyMap<string, number>): ReadonlyMap<string, number> {
  if (right.size === 0) return left;
  if (left.size === 0) return right;
  const total = new Map(left);
  for (const [name, value] of right) total.set(name, (total.get(name) ?? 0) + value);
  return total;
}

/** `left + right` of cpu and memory. */
export function addCpuMemory(left: CpuMemory, right: CpuMemory): CpuMemory {
  return { cpuMilli: left.cpuMilli + right.cpuMilli, memoryBytes: left.memoryBytes + right.memoryBytes };
}
