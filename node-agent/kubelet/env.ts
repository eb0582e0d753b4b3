/**
 * A container's environment as kubelet 1.32 makes it (`makeEnvironmentVariables` in
 * `pkg/kubelet/kubelet_pods.go`, `pkg/kubelet/envvars`, `third_party/forked/golang/expansion`):
 *
 * 1. `envFrom` sources in order (`prefix` prepended; keys that are not valid environment
 *    variable names skipped; a missing source that is not `optional` is an error);
 * 2. `env` in order, each `value` expanded (`$(VAR)`) against the variables so far and the
 *    Service variables; `valueFrom` resolved (configMapKeyRef, secretKeyRef, fieldRef,
 *    resourceFieldRef); an `env` entry overrides an `envFrom` one;
 * 3. the Service variables (`<SVC>_SERVICE_HOST`, `_PORT`, docker-link `_PORT_<p>_TCP…`) of
 *    the Services of the pod's namespace that have a ClusterIP (with `enableServiceLinks`, the
 *    default) and of `default/kubernetes` (always), where a name is not already set.
 *
 * Errors carry kubelet's message: the container waits with `CreateContainerConfigError`.
 * Pure functions of the pod, its objects and its addresses.
 */
import type { Container, Pod, Service } from '../../schemas/index.ts';
import { parseQuantity, quantityMilliValue, quantityValue } from '../../schemas/quantity.ts';
import type { PodObjectSource } from './pod-objects.ts';

/** A variable lookup for {@link expand}: the value, or undefined when unknown. */
export type VariableLookup = (name: string) => string | undefined;

/**
 * kubelet's `$(VAR)` expansion: `$(NAME)` becomes the value of NAME (left as written when
 * unknown), `$$` becomes `$`, a `$` before anything else and an unclosed `$(` stay as they are.
 */
export function expand(input: string, lookup: VariableLookup): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const next = input[cursor + 1];
    let advance = 1;
    if (next === '$') {
      out += '$';
    } else if (next === '(') {
      const close = input.indexOf(')', cursor + 2);
      if (close === -1) {
        out += '$(';
      } else {
        const name = input.slice(cursor + 2, close);
        out += lookup(name) ?? `$(${name})`;
        advance = close - cursor;
      }
    } else {
      out += `$${next}`;
    }
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

/** A lookup over maps, the first that has the name winning (kubelet's `MappingFuncFor`). */
export function lookupIn(...maps: readonly ReadonlyMap<string, string>[]): VariableLookup {
  return (name) => {
    for (const map of maps) {
      const value = map.get(name);
      if (value !== undefined) return value;
    }
    return undefined;
  };
}

/** `IsEnvVarName`: what kubelet accepts as a variable name from `envFrom`. */
export const isEnvVarName = (name: string): boolean => /^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(name);

/** Service name → variable name prefix (`my-svc` → `MY_SVC`). */
const envName = (name: string): string => name.replaceAll('-', '_').toUpperCase();

const hasClusterIP = (service: Service): boolean => {
  const ip = service.spec?.clusterIP;
  return ip !== undefined && ip !== '' && ip !== 'None';
};

/** `envvars.FromServices`: the variables of each Service, in order. */
export function serviceVariables(services: readonly Service[]): [string, string][] {
  const out: [string, string][] = [];
  for (const service of services) {
    const ports = service.spec?.ports ?? [];
    if (!hasClusterIP(service) || ports.length === 0) continue;
    const ip = service.spec?.clusterIP ?? '';
    const prefix = envName(service.metadata.name);
    out.push([`${prefix}_SERVICE_HOST`, ip], [`${prefix}_SERVICE_PORT`, String(ports[0]?.port)]);
    for (const port of ports) if (port.name !== undefined && port.name !== '') out.push([`${prefix}_SERVICE_PORT_${envName(port.name)}`, String(port.port)]);
    const hostPort = (port: number) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);
    ports.forEach((port, index) => {
      const protocol = port.protocol ?? 'TCP';
      const url = `${protocol.toLowerCase()}://${hostPort(port.port)}`;
      if (index === 0) out.push([`${prefix}_PORT`, url]);
      const portPrefix = `${prefix}_PORT_${port.port}_${protocol.toUpperCase()}`;
      out.push([portPrefix, url], [`${portPrefix}_PROTO`, protocol.toLowerCase()], [`${portPrefix}_PORT`, String(port.port)], [`${portPrefix}_ADDR`, ip]);
    });
  }
  return out;
}

/**
 * `getServiceEnvVarMap`: the Services a pod of `namespace` sees as variables: those of its
 * namespace when `enableServiceLinks`, and `default/kubernetes` always (the namespace's own
 * Service of the same name wins, as in kubelet's map).
 */
export function serviceEnvironment(services: readonly Service[], namespace: string, enableServiceLinks: boolean): Map<string, string> {
  const byName = new Map<string, Service>();
  for (const service of services) {
    if (!hasClusterIP(service)) continue;
    const name = service.metadata.name;
    if ((service.metadata.namespace ?? 'default') === 'default' && name === 'kubernetes') {
      if (!byName.has(name)) byName.set(name, service);
    } else if ((service.metadata.namespace ?? 'default') === namespace && enableServiceLinks) {
      byName.set(name, service);
    }
  }
  const sorted = [...byName.keys()].sort().map((name) => byName.get(name) as Service);
  return new Map(serviceVariables(sorted));
}

/** A value, or kubelet's error message. */
export type Resolved<T> = { readonly type: 'ok'; readonly value: T } | { readonly type: 'error'; readonly message: string };

const ok = <T>(value: T): Resolved<T> => ({ type: 'ok', value });
const error = <T>(message: string): Resolved<T> => ({ type: 'error', message });

/** Go's `%q` of a string, close enough for label values (JSON escapes). */
const goQuote = (text: string): string => JSON.stringify(text);

/** `fieldpath.FormatMap`: `key="value"` lines, keys sorted. */
export const formatMap = (map: Readonly<Record<string, string>> | undefined): string =>
  Object.keys(map ?? {})
    .sort()
    .map((key) => `${key}=${goQuote((map as Record<string, string>)[key] as string)}`)
    .join('\n');

const SUBSCRIPT = /^metadata\.(labels|annotations)\['(.*)'\]$/;

/** `fieldpath.ExtractFieldPathAsString` (the metadata fields: what a downwardAPI volume may show). */
export function metadataFieldValue(pod: Pod, fieldPath: string): Resolved<string> {
  const subscript = SUBSCRIPT.exec(fieldPath);
  if (subscript !== null) {
    const map = subscript[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations;
    const key = subscript[2] as string;
    return ok(map !== undefined && Object.hasOwn(map, key) ? (map[key] as string) : '');
  }
  switch (fieldPath) {
    case 'metadata.annotations':
      return ok(formatMap(pod.metadata.annotations));
    case 'metadata.labels':
      return ok(formatMap(pod.metadata.labels));
    case 'metadata.name':
      return ok(pod.metadata.name);
    case 'metadata.namespace':
      return ok(pod.metadata.namespace ?? 'default');
    case 'metadata.uid':
      return ok(pod.metadata.uid ?? '');
    default:
      return error(`unsupported fieldPath: ${fieldPath}`);
  }
}

/** The addresses a pod's fieldRefs can read. */
export interface PodAddresses {
  readonly podIPs: readonly string[];
  readonly hostIP: string;
}

/** `podFieldSelectorRuntimeValue`: a fieldRef of an env var. */
export function podFieldValue(pod: Pod, fieldPath: string, addresses: PodAddresses): Resolved<string> {
  switch (fieldPath) {
    case 'spec.nodeName':
      return ok(pod.spec.nodeName ?? '');
    case 'spec.serviceAccountName':
      return ok(pod.spec.serviceAccountName ?? '');
    case 'status.hostIP':
      return ok(addresses.hostIP);
    case 'status.hostIPs':
      return ok(addresses.hostIP);
    case 'status.podIP':
      return ok(addresses.podIPs[0] ?? '');
    case 'status.podIPs':
      return ok(addresses.podIPs.join(','));
    default:
      return metadataFieldValue(pod, fieldPath);
  }
}

/** A pod's resource figures after `defaultPodLimitsForDownwardAPI`: limits not set are the node's allocatable. */
export type NodeAllocatable = Readonly<Record<string, string>>;

const ceilDiv = (a: bigint, b: bigint): bigint => (a <= 0n ? -(-a / b) : (a + b - 1n) / b);

/** `ExtractContainerResourceValue`: a resourceFieldRef's value for `container`, limits defaulted to `allocatable`. */
export function containerResourceValue(resource: string, divisorText: string | undefined, container: Container, allocatable: NodeAllocatable): Resolved<string> {
  const divisor = divisorText === undefined || divisorText === '' || divisorText === '0' ? parseQuantity('1') : parseQuantity(divisorText);
  const [kind, name] = resource.split('.', 2) as [string, string | undefined];
  if ((kind !== 'limits' && kind !== 'requests') || name === undefined) return error(`unsupported container resource : ${resource}`);
  if (name !== 'cpu' && name !== 'memory' && name !== 'ephemeral-storage' && !name.startsWith('hugepages-')) return error(`unsupported container resource : ${resource}`);
  const set = kind === 'limits' ? container.resources?.limits : container.resources?.requests;
  const text = set !== undefined && Object.hasOwn(set, name) ? set[name] : kind === 'limits' ? allocatable[name] : undefined;
  const amount = parseQuantity(text ?? '0');
  if (name === 'cpu') {
    const divisorMilli = quantityMilliValue(divisor);
    if (divisorMilli === 0n) return error(`invalid divisor ${divisorText ?? ''}`);
    return ok(ceilDiv(quantityMilliValue(amount), divisorMilli).toString());
  }
  const divisorValue = quantityValue(divisor);
  if (divisorValue === 0n) return error(`invalid divisor ${divisorText ?? ''}`);
  return ok(ceilDiv(quantityValue(amount), divisorValue).toString());
}

/** Data of a Secret as text (its `data` is base64). */
export const secretText = (base64: string): string => Buffer.from(base64, 'base64').toString('utf8');

/** What {@link containerEnvironment} needs. */
export interface EnvInput {
  readonly pod: Pod;
  readonly container: Container;
  readonly addresses: PodAddresses;
  readonly objects: PodObjectSource;
  /** Variables the runtime sets before the container's own (the process runtime's pod identity): `$(VAR)` references to them expand, at the lowest priority. */
  readonly base?: ReadonlyMap<string, string>;
}

/**
 * The container's variables in kubelet's order (envFrom, env, then Service variables not
 * already set), or kubelet's message for why the container cannot be configured
 * (`configmap "x" not found`, `couldn't find key k in Secret ns/x` …).
 */
export function containerEnvironment(input: EnvInput): Resolved<[string, string][]> {
  const { pod, container, addresses, objects } = input;
  const namespace = pod.metadata.namespace ?? 'default';
  const services = serviceEnvironment(objects.services(), namespace, pod.spec.enableServiceLinks ?? true);
  const env = new Map<string, string>();
  const configMaps = new Map<string, Readonly<Record<string, string>>>();
  const secrets = new Map<string, Readonly<Record<string, string>>>();

  const configMapData = (name: string): Readonly<Record<string, string>> | undefined => {
    if (!configMaps.has(name)) {
      const found = objects.configMap(namespace, name);
      if (found === undefined) return undefined;
      configMaps.set(name, found.data ?? {});
    }
    return configMaps.get(name);
  };
  const secretData = (name: string): Readonly<Record<string, string>> | undefined => {
    if (!secrets.has(name)) {
      const found = objects.secret(namespace, name);
      if (found === undefined) return undefined;
      const data: Record<string, string> = Object.create(null) as Record<string, string>;
      for (const [key, value] of Object.entries(found.data ?? {})) data[key] = secretText(value);
      secrets.set(name, data);
    }
    return secrets.get(name);
  };

  for (const source of container.envFrom ?? []) {
    const prefix = source.prefix ?? '';
    let data: Readonly<Record<string, string>> | undefined;
    if (source.configMapRef !== undefined) {
      const name = source.configMapRef.name ?? '';
      data = configMapData(name);
      if (data === undefined) {
        if (source.configMapRef.optional === true) continue;
        return error(`configmap "${name}" not found`);
      }
    } else if (source.secretRef !== undefined) {
      const name = source.secretRef.name ?? '';
      data = secretData(name);
      if (data === undefined) {
        if (source.secretRef.optional === true) continue;
        return error(`secret "${name}" not found`);
      }
    } else {
      continue;
    }
    for (const [key, value] of Object.entries(data)) {
      const name = prefix + key;
      if (isEnvVarName(name)) env.set(name, value);
    }
  }

  const lookup = lookupIn(env, services, input.base ?? new Map());
  for (const variable of container.env ?? []) {
    let value = variable.value ?? '';
    const from = variable.valueFrom;
    if (value !== '') {
      value = expand(value, lookup);
    } else if (from !== undefined) {
      if (from.fieldRef !== undefined) {
        const resolved = podFieldValue(pod, from.fieldRef.fieldPath, addresses);
        if (resolved.type === 'error') return resolved;
        value = resolved.value;
      } else if (from.resourceFieldRef !== undefined) {
        const ref = from.resourceFieldRef;
        const target = ref.containerName === undefined || ref.containerName === '' ? container : [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].find((c) => c.name === ref.containerName);
        if (target === undefined) return error(`container ${ref.containerName ?? ''} not found`);
        const resolved = containerResourceValue(ref.resource, ref.divisor, target, objects.node(pod.spec.nodeName ?? '')?.status?.allocatable ?? {});
        if (resolved.type === 'error') return resolved;
        value = resolved.value;
      } else if (from.configMapKeyRef !== undefined) {
        const ref = from.configMapKeyRef;
        const name = ref.name ?? '';
        const data = configMapData(name);
        if (data === undefined) {
          if (ref.optional === true) continue;
          return error(`configmap "${name}" not found`);
        }
        if (!Object.hasOwn(data, ref.key)) {
          if (ref.optional === true) continue;
          return error(`couldn't find key ${ref.key} in ConfigMap ${namespace}/${name}`);
        }
        value = data[ref.key] as string;
      } else if (from.secretKeyRef !== undefined) {
        const ref = from.secretKeyRef;
        const name = ref.name ?? '';
        const data = secretData(name);
        if (data === undefined) {
          if (ref.optional === true) continue;
          return error(`secret "${name}" not found`);
        }
        if (!Object.hasOwn(data, ref.key)) {
          if (ref.optional === true) continue;
          return error(`couldn't find key ${ref.key} in Secret ${namespace}/${name}`);
        }
        value = data[ref.key] as string;
      }
    }
    env.set(variable.name, value);
  }

  const result: [string, string][] = [...env];
  for (const [name, value] of services) if (!env.has(name)) result.push([name, value]);
  return ok(result);
}

/** `ExpandContainerCommandAndArgs`: `command` and `args` expanded against the container's final environment. */
export function expandCommand(container: Container, env: ReadonlyMap<string, string>): { command: string[]; args: string[] } {
  const lookup = lookupIn(env);
  return { command: (container.command ?? []).map((part) => expand(part, lookup)), args: (container.args ?? []).map((arg) => expand(arg, lookup)) };
}
