/**
 * Pod resource requests and node allocatable amounts as integers (cpu in millicores,
 * memory in bytes), computed the way kube-scheduler's `resourcehelper.PodRequests` and
 * `NodeInfo` do.
 */
import { parseQuantity, type QuantityParseError, type QuantityParseResult, QuantityScale, scaleForResource } from '../../projections/quantity.ts';
import type { Container, Node, Pod } from '../../schemas/index.ts';

/** The cpu and memory a pod asks for. */
export interface PodResources {
  readonly cpuMilli: number;
  readonly memoryBytes: number;
}

/** cpu, memory and pod slots, as requested on or offered by a node. */
export interface ResourceAmounts extends PodResources {
  readonly pods: number;
}

/** A pod's requests: as written (`requested`, for fit) and with defaults for unset ones (`nonZeroRequested`, for scoring). */
export interface PodRequests {
  readonly requested: PodResources;
  /** Like `requested`, but a container without a cpu/memory request counts as {@link DEFAULT_NON_ZERO_REQUEST}. */
  readonly nonZeroRequested: PodResources;
}

/** What kube-scheduler assumes a container without a request uses, so empty pods still spread (100m, 200Mi). */
export const DEFAULT_NON_ZERO_REQUEST = { cpuMilli: 100, memoryBytes: 200 * 1024 * 1024 } as const satisfies PodResources;

/** The outcome of {@link computePodRequests}: the requests, or the quantity that could not be read. */
export type PodRequestsResult =
  | { readonly type: 'ok'; readonly requests: PodRequests }
  | { readonly type: 'invalid'; readonly error: QuantityParseError };

const ZERO: PodResources = { cpuMilli: 0, memoryBytes: 0 };

/**
 * Sums the containers' requests and takes the maximum with each init container (which run
 * one at a time before them), per resource. A container with a limit but no request
 * requests its limit, as the apiserver's defaulting would have written it.
 */
export function computePodRequests(pod: Pod): PodRequestsResult {
  let requested = ZERO;
  let nonZeroRequested = ZERO;
  for (const container of pod.spec.containers) {
    const request = containerRequest(container);
    if (request.type === 'invalid') return request;
    requested = add(requested, request.requested);
    nonZeroRequested = add(nonZeroRequested, request.nonZeroRequested);
  }
  for (const container of pod.spec.initContainers ?? []) {
    const request = containerRequest(container);
    if (request.type === 'invalid') return request;
    requested = max(requested, request.requested);
    nonZeroRequested = max(nonZeroRequested, request.nonZeroRequested);
  }
  return { type: 'ok', requests: { requested, nonZeroRequested } };
}

function containerRequest(
  container: Container,
): { type: 'ok'; requested: PodResources; nonZeroRequested: PodResources } | { type: 'invalid'; error: QuantityParseError } {
  const cpu = requestOf(container, 'cpu');
  if (cpu.type === 'invalid') return cpu;
  const memory = requestOf(container, 'memory');
  if (memory.type === 'invalid') return memory;
  return {
    type: 'ok',
    requested: { cpuMilli: cpu.value ?? 0, memoryBytes: memory.value ?? 0 },
    nonZeroRequested: {
      cpuMilli: cpu.value ?? DEFAULT_NON_ZERO_REQUEST.cpuMilli,
      memoryBytes: memory.value ?? DEFAULT_NON_ZERO_REQUEST.memoryBytes,
    },
  };
}

/** The container's request for `resource` (its limit when only that is set); undefined when neither is set. */
function requestOf(
  container: Container,
  resource: 'cpu' | 'memory',
): { type: 'ok'; value: number | undefined } | { type: 'invalid'; error: QuantityParseError } {
  const text = container.resources?.requests?.[resource] ?? container.resources?.limits?.[resource];
  if (text === undefined || text === null) return { type: 'ok', value: undefined };
  return parseQuantityCached(text, scaleForResource(resource));
}

/**
 * What the node offers pods: `status.allocatable`, falling back per resource to
 * `status.capacity`. A resource that is missing or unreadable offers nothing (0), so the
 * node fails the fit check instead of being overcommitted.
 */
export function nodeAllocatable(node: Node): ResourceAmounts {
  const allocatable = node.status?.allocatable ?? {};
  const capacity = node.status?.capacity ?? {};
  return {
    cpuMilli: amountOf('cpu', allocatable, capacity),
    memoryBytes: amountOf('memory', allocatable, capacity),
    pods: amountOf('pods', allocatable, capacity),
  };
}

function amountOf(resource: string, allocatable: Readonly<Record<string, string>>, capacity: Readonly<Record<string, string>>): number {
  const text = allocatable[resource] ?? capacity[resource];
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

/** `left + right`, per resource. */
export function add(left: PodResources, right: PodResources): PodResources {
  return { cpuMilli: left.cpuMilli + right.cpuMilli, memoryBytes: left.memoryBytes + right.memoryBytes };
}

function max(left: PodResources, right: PodResources): PodResources {
  return {
    cpuMilli: Math.max(left.cpuMilli, right.cpuMilli),
    memoryBytes: Math.max(left.memoryBytes, right.memoryBytes),
  };
}
