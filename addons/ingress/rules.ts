/**
 * The routing table of the Ingress controller: which Ingresses are this controller's (by
 * IngressClass), and the pure matching of a request's host and path to a backend, as the
 * networking.k8s.io/v1 Ingress API defines it:
 *
 * - host: an exact host matches the Host header (port and a trailing dot removed, case
 *   ignored); `*.example.com` matches exactly one more leading label (`a.example.com`, not
 *   `example.com` nor `a.b.example.com`); a rule without host matches every host. The most
 *   specific host group that exists for a request is used (exact, then wildcard, then
 *   hostless), as ingress-nginx picks one server block per host;
 * - path: `Exact` matches the path as is; `Prefix` element-wise on `/`-separated elements
 *   (`/foo/bar` matches `/foo/bar/baz` but not `/foo/barbaz`; a trailing slash is
 *   ignored); `ImplementationSpecific` is treated as `Prefix`. The longest matching path
 *   wins, `Exact` before `Prefix` of the same length, then the older Ingress;
 * - a request no path matches goes to a `defaultBackend` (of the oldest owned Ingress that
 *   has one), else it is answered 404.
 */
import type { Ingress, IngressBackend, IngressClass } from '../../schemas/index.ts';

/** The `spec.controller` of IngressClasses this controller serves. */
export const INGRESS_CONTROLLER_NAME = 'logplane.dev/ingress';
/** The annotation that marks the IngressClass used for Ingresses without a class. */
export const DEFAULT_CLASS_ANNOTATION = 'ingressclass.kubernetes.io/is-default-class';
/** The pre-IngressClass annotation naming an Ingress's class; honoured when `spec.ingressClassName` is absent. */
export const LEGACY_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

/** How the backend Service's port is named in an Ingress. */
export type BackendPort = { readonly type: 'number'; readonly number: number } | { readonly type: 'name'; readonly name: string };

/** Where a matched request goes: a Service port in the Ingress's namespace. */
export interface BackendRef {
  readonly namespace: string;
  readonly service: string;
  readonly port: BackendPort;
  /** `namespace/name` of the Ingress the rule came from. */
  readonly ingress: string;
}

/** A backend that names no Service (a `resource` backend, or a service without a port): answered 503. */
export interface UnsupportedBackend {
  readonly type: 'unsupported';
  readonly ingress: string;
  readonly reason: string;
}

/** What a rule points at. */
export type RuleTarget = ({ readonly type: 'service' } & BackendRef) | UnsupportedBackend;

/** One path of one rule, ready for matching. */
export interface PathRule {
  readonly exact: boolean;
  /** The path as written, for `Exact`; for prefixes without the trailing slash. */
  readonly path: string;
  /** For prefixes: the non-empty path elements. */
  readonly elements: readonly string[];
  readonly target: RuleTarget;
}

/** The TLS section of an owned Ingress: a Secret of its namespace for some hosts. */
export interface TlsRule {
  readonly namespace: string;
  readonly secretName: string;
  /** Lower case; empty: the Ingress gave no hosts (the certificate serves any name). */
  readonly hosts: readonly string[];
}

/** Everything the proxy routes by. Maps, never plain objects: hosts are user keys. */
export interface RoutingTable {
  readonly exactHosts: ReadonlyMap<string, readonly PathRule[]>;
  /** Keyed by the suffix after `*.` (`example.com` for `*.example.com`). */
  readonly wildcardHosts: ReadonlyMap<string, readonly PathRule[]>;
  readonly anyHost: readonly PathRule[];
  readonly defaultBackend: RuleTarget | undefined;
  readonly tls: readonly TlsRule[];
  /** `namespace/name` of the Ingresses this controller serves, oldest first. */
  readonly ingresses: readonly string[];
}

/** The outcome of routing one request. */
export type RouteMatch = { readonly type: 'matched'; readonly target: RuleTarget } | { readonly type: 'none' };

const keyOf = (ingress: Ingress): string => `${ingress.metadata.namespace ?? 'default'}/${ingress.metadata.name}`;

const byAge = <T extends { metadata: { creationTimestamp?: string; name: string; namespace?: string } }>(a: T, b: T): number =>
  (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
  `${a.metadata.namespace ?? ''}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace ?? ''}/${b.metadata.name}`);

/**
 * The default IngressClass among `classes`: the one annotated `is-default-class: "true"`;
 * of several, the newest, as kube's DefaultIngressClass admission picks it since 1.28.
 */
export const defaultClassOf = (classes: readonly IngressClass[]): IngressClass | undefined =>
  [...classes].filter((c) => c.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true').sort(byAge).at(-1);

/** The Ingresses of `ingresses` this controller serves: their class (or the default class, when they name none) is ours. */
export const ownedIngresses = (ingresses: readonly Ingress[], classes: readonly IngressClass[]): Ingress[] => {
  const ours = new Set(classes.filter((c) => c.spec?.controller === INGRESS_CONTROLLER_NAME).map((c) => c.metadata.name));
  const fallback = defaultClassOf(classes);
  return ingresses
    .filter((ingress) => {
      if (ingress.metadata.deletionTimestamp) return false;
      const named = ingress.spec?.ingressClassName ?? ingress.metadata.annotations?.[LEGACY_CLASS_ANNOTATION];
      if (named !== undefined && named !== '') return ours.has(named);
      return fallback !== undefined && ours.has(fallback.metadata.name);
    })
    .sort(byAge);
};

/** Path elements of `path`: `/a//b/` → `['a', 'b']`. */
export const pathElements = (path: string): string[] => path.split('/').filter((element) => element !== '');

const targetOf = (backend: IngressBackend, namespace: string, ingress: string): RuleTarget => {
  const service = backend.service;
  if (!service) return { type: 'unsupported', ingress, reason: 'the backend is a resource, not a Service; this controller forwards only to Services' };
  const port: BackendPort | undefined =
    service.port?.number !== undefined && service.port.number !== null
      ? { type: 'number', number: service.port.number }
      : service.port?.name
        ? { type: 'name', name: service.port.name }
        : undefined;
  if (!port) return { type: 'unsupported', ingress, reason: `the backend Service ${service.name} names no port` };
  return { type: 'service', namespace, service: service.name, port, ingress };
};

/** Longest path first; `Exact` before a prefix of the same length; otherwise the order given (older Ingress first). */
const comparePaths = (a: PathRule, b: PathRule): number => b.path.length - a.path.length || Number(b.exact) - Number(a.exact);

const normalizedHost = (host: string): string => host.toLowerCase().replace(/\.$/, '');

/** Builds the routing table of the Ingresses this controller serves. */
export const buildRoutingTable = (ingresses: readonly Ingress[], classes: readonly IngressClass[]): RoutingTable => {
  const exactHosts = new Map<string, PathRule[]>();
  const wildcardHosts = new Map<string, PathRule[]>();
  const anyHost: PathRule[] = [];
  const tls: TlsRule[] = [];
  let defaultBackend: RuleTarget | undefined;
  const owned = ownedIngresses(ingresses, classes);
  for (const ingress of owned) {
    const namespace = ingress.metadata.namespace ?? 'default';
    const key = keyOf(ingress);
    const spec = ingress.spec ?? {};
    if (spec.defaultBackend && !defaultBackend) defaultBackend = targetOf(spec.defaultBackend, namespace, key);
    for (const rule of spec.rules ?? []) {
      const host = rule.host ? normalizedHost(rule.host) : '';
      const group = host === '' ? anyHost : host.startsWith('*.') ? upsert(wildcardHosts, host.slice(2)) : upsert(exactHosts, host);
      for (const path of rule.http?.paths ?? []) {
        const written = path.path && path.path !== '' ? path.path : '/';
        const exact = path.pathType === 'Exact';
        const elements = pathElements(written);
        group.push({ exact, path: exact ? written : `/${elements.join('/')}`, elements, target: targetOf(path.backend, namespace, key) });
      }
    }
    for (const entry of spec.tls ?? []) {
      if (!entry.secretName) continue;
      tls.push({ namespace, secretName: entry.secretName, hosts: (entry.hosts ?? []).map(normalizedHost) });
    }
  }
  // A stable sort keeps the older Ingress first among equal paths.
  for (const rules of [...exactHosts.values(), ...wildcardHosts.values(), anyHost]) rules.sort(comparePaths);
  return { exactHosts, wildcardHosts, anyHost, defaultBackend, tls, ingresses: owned.map(keyOf) };
};

const upsert = (map: Map<string, PathRule[]>, key: string): PathRule[] => {
  const existing = map.get(key);
  if (existing) return existing;
  const created: PathRule[] = [];
  map.set(key, created);
  return created;
};

/** The host a request names: the Host header without its port or trailing dot, lower case. */
export const requestHost = (header: string | undefined): string => {
  const value = (header ?? '').trim();
  const bracketed = /^\[([^\]]*)\]/.exec(value);
  const host = bracketed ? bracketed[1]! : value.replace(/:\d*$/, '');
  return normalizedHost(host);
};

const URL_BASE = 'http://ingress.invalid';

/**
 * The path a request routes by: its request target's path (of an absolute-form target too),
 * without query or fragment, with `.` and `..` segments resolved (also percent-encoded ones),
 * as nginx normalizes a URI before it matches locations, so `/api/../admin` is not routed as `/api`.
 */
export const requestPath = (target: string | undefined): string => {
  const raw = target ?? '/';
  try {
    return new URL(raw.startsWith('/') ? raw.replace(/^\/+/, '/') : raw, URL_BASE).pathname;
  } catch {
    const end = raw.search(/[?#]/);
    return end === -1 ? raw : raw.slice(0, end);
  }
};

/** The suffix a wildcard rule needs for `host` (`example.com` for `a.example.com`), if it has one more label. */
const wildcardSuffix = (host: string): string | undefined => {
  const dot = host.indexOf('.');
  return dot > 0 ? host.slice(dot + 1) : undefined;
};

/** Whether `rule` matches the request path `path` (no query). */
export const pathMatches = (rule: PathRule, path: string): boolean => {
  if (rule.exact) return path === rule.path;
  const requested = pathElements(path);
  return rule.elements.length <= requested.length && rule.elements.every((element, i) => requested[i] === element);
};

/** The host group of `host`: exact, else wildcard, else hostless rules. */
const hostRules = (table: RoutingTable, host: string): readonly PathRule[] => {
  const exact = table.exactHosts.get(host);
  if (exact) return exact;
  const suffix = wildcardSuffix(host);
  const wildcard = suffix !== undefined ? table.wildcardHosts.get(suffix) : undefined;
  return wildcard ?? table.anyHost;
};

/** Routes a request (its Host header value and path without query) through `table`. */
export const matchRoute = (table: RoutingTable, host: string, path: string): RouteMatch => {
  const rule = hostRules(table, requestHost(host)).find((candidate) => pathMatches(candidate, path));
  if (rule) return { type: 'matched', target: rule.target };
  return table.defaultBackend ? { type: 'matched', target: table.defaultBackend } : { type: 'none' };
};

/** The TLS rule serving the SNI name `servername`: one listing it, then one listing a matching wildcard, then one without hosts. */
export const tlsRuleFor = (table: RoutingTable, servername: string | undefined): TlsRule | undefined => {
  const name = servername ? normalizedHost(servername) : '';
  if (name !== '') {
    const exact = table.tls.find((rule) => rule.hosts.includes(name));
    if (exact) return exact;
    const suffix = wildcardSuffix(name);
    const wildcard = suffix !== undefined ? table.tls.find((rule) => rule.hosts.includes(`*.${suffix}`)) : undefined;
    if (wildcard) return wildcard;
  }
  return table.tls.find((rule) => rule.hosts.length === 0);
};
