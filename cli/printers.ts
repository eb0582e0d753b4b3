/**
 * Client-side printing, kubectl style: the `get` tables of each kind (with `-o wide`
 * columns, `-A`'s NAMESPACE, `kind/name` prefixes for several kinds), ages like
 * `duration.HumanDuration`, tab-aligned columns like kubectl's tabwriter, YAML/JSON with
 * sorted keys, and error messages like `cmdutil.CheckErr`.
 */
import { formatEndpoints, humanDuration, nodeStatus, podStatus } from '../apiserver/tables.ts';
import YAML from 'yaml';
import type {
  Deployment,
  Endpoints,
  KubeObject,
  LabelSelector,
  Node,
  Pod,
  ReplicaSet,
  Service,
} from '../schemas/index.ts';
import { assertNever } from '../schemas/assert-never.ts';
import { ApiError, ConnectionError } from './client.ts';

/** Pod and node STATUS, endpoints and ages are computed as the apiserver's Tables compute them. */
export { formatEndpoints, humanDuration, nodeStatus, podStatus };

/** The AGE cell of a timestamp: its distance to `now`, or `<unknown>`. */
export const age = (timestamp: string | undefined, now: number): string => {
  if (!timestamp) return '<unknown>';
  const time = Date.parse(timestamp);
  return Number.isNaN(time) ? '<unknown>' : humanDuration(now - time);
};

/**
 * Column widths as kubectl's tabwriter computes them (minimum 6, padding 3); the last
 * column is not padded. Widths only grow from `initial` (a watch keeps its first table's).
 */
export const columnWidths = (rows: readonly (readonly string[])[], initial: readonly number[] = []): number[] => {
  const widths: number[] = [...initial];
  for (const row of rows) {
    row.forEach((cell, i) => {
      if (i === row.length - 1) return;
      widths[i] = Math.max(widths[i] ?? 6, cell.length + 3);
    });
  }
  return widths;
};

/** One table line padded to `widths`. */
export const renderRow = (cells: readonly string[], widths: readonly number[]): string =>
  cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? cell.length + 3))).join('');

/** Aligned rows (the header first), one per line, with a trailing newline. */
export const renderTable = (rows: readonly (readonly string[])[]): string => {
  const widths = columnWidths(rows);
  return rows.map((row) => `${renderRow(row, widths)}\n`).join('');
};

/** A table: uppercase headers and string cells. */
export interface Table {
  readonly headers: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

export interface TableOptions {
  /** `-o wide`: add the kind's extra columns. */
  readonly wide?: boolean;
  /** `-A`: add a NAMESPACE column (namespaced kinds only). */
  readonly withNamespace?: boolean;
  /** Print names as `kind/name` (several kinds in one `get`). */
  readonly namePrefix?: string;
  /** The moment ages are measured to (default: now). */
  readonly now?: number;
}

const orNone = (value: string | undefined): string => (value ? value : '<none>');

/** `a=b,c=d` for a map, sorted by key; `<none>` when empty. */
export const formatLabels = (labels: Readonly<Record<string, string>> | undefined): string => {
  const entries = Object.entries(labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? '<none>' : entries.map(([k, v]) => `${k}=${v}`).join(',');
};

/** A LabelSelector as a selector string (`app=web,tier in (a,b)`); `<none>` when it selects everything. */
export const formatLabelSelector = (selector: LabelSelector | undefined): string => {
  if (!selector) return '<none>';
  const parts = Object.entries(selector.matchLabels ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`);
  for (const expression of selector.matchExpressions ?? []) {
    const values = [...(expression.values ?? [])].sort().join(',');
    switch (expression.operator) {
      case 'In':
        parts.push(`${expression.key} in (${values})`);
        break;
      case 'NotIn':
        parts.push(`${expression.key} notin (${values})`);
        break;
      case 'Exists':
        parts.push(expression.key);
        break;
      case 'DoesNotExist':
        parts.push(`!${expression.key}`);
        break;
      default:
        parts.push(`${expression.key} ${expression.operator} (${values})`);
    }
  }
  return parts.length === 0 ? '<none>' : parts.join(',');
};


/** The roles from `node-role.kubernetes.io/ROLE` and `kubernetes.io/role` labels. */
export const nodeRoles = (node: Node): string => {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(node.metadata.labels ?? {})) {
    if (key.startsWith('node-role.kubernetes.io/')) {
      const role = key.slice('node-role.kubernetes.io/'.length);
      if (role) roles.add(role);
    } else if (key === 'kubernetes.io/role' && value) roles.add(value);
  }
  return roles.size > 0 ? [...roles].sort().join(',') : '<none>';
};

/** `80/TCP,443:30443/TCP`. */
export const formatServicePorts = (service: Service): string => {
  const ports = (service.spec.ports ?? []).map((p) =>
    p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol ?? 'TCP'}` : `${p.port}/${p.protocol ?? 'TCP'}`,
  );
  return ports.length > 0 ? ports.join(',') : '<none>';
};

/** The EXTERNAL-IP cell: ingress addresses of a LoadBalancer (or `<pending>`), else `<none>`. */
export const serviceExternalIp = (service: Service): string => {
  if ((service.spec.type ?? 'ClusterIP') !== 'LoadBalancer') return '<none>';
  const ingress = (service.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? i.hostname ?? '').filter((s) => s !== '');
  return ingress.length > 0 ? ingress.join(',') : '<pending>';
};

const templateCells = (workload: Deployment | ReplicaSet): string[] => {
  const containers = workload.spec.template?.spec.containers ?? [];
  return [
    containers.map((c) => c.name).join(','),
    containers.map((c) => c.image ?? '').join(','),
    formatLabelSelector(workload.spec.selector),
  ];
};

interface KindColumns {
  readonly headers: readonly string[];
  readonly wideHeaders: readonly string[];
}

const COLUMNS: Readonly<Record<KubeObject['kind'], KindColumns>> = {
  Pod: { headers: ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'], wideHeaders: ['IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES'] },
  Node: { headers: ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION'], wideHeaders: ['INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE', 'KERNEL-VERSION', 'CONTAINER-RUNTIME'] },
  Service: { headers: ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE'], wideHeaders: ['SELECTOR'] },
  Endpoints: { headers: ['NAME', 'ENDPOINTS', 'AGE'], wideHeaders: [] },
  Deployment: { headers: ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE'], wideHeaders: ['CONTAINERS', 'IMAGES', 'SELECTOR'] },
  ReplicaSet: { headers: ['NAME', 'DESIRED', 'CURRENT', 'READY', 'AGE'], wideHeaders: ['CONTAINERS', 'IMAGES', 'SELECTOR'] },
  Namespace: { headers: ['NAME', 'STATUS', 'AGE'], wideHeaders: [] },
};

/** The normal and the wide cells of one object's row (the name first). */
const rowCells = (object: KubeObject, now: number): { cells: string[]; wide: string[] } => {
  const created = object.metadata.creationTimestamp;
  switch (object.kind) {
    case 'Pod': {
      const { ready, status, restarts } = podStatus(object, now);
      const ip = object.status?.podIPs?.[0]?.ip ?? object.status?.podIP;
      return {
        cells: [object.metadata.name, ready, status, restarts, age(created, now)],
        wide: [orNone(ip), orNone(object.spec.nodeName), orNone(object.status?.nominatedNodeName), '<none>'],
      };
    }
    case 'Node': {
      const address = (type: string): string => orNone(object.status?.addresses?.find((a) => a.type === type)?.address);
      const info = object.status?.nodeInfo;
      return {
        cells: [object.metadata.name, nodeStatus(object), nodeRoles(object), age(created, now), info?.kubeletVersion ?? ''],
        wide: [address('InternalIP'), address('ExternalIP'), info?.osImage || '<unknown>', info?.kernelVersion || '<unknown>', info?.containerRuntimeVersion || '<unknown>'],
      };
    }
    case 'Service':
      return {
        cells: [
          object.metadata.name,
          object.spec.type ?? 'ClusterIP',
          orNone(object.spec.clusterIP),
          serviceExternalIp(object),
          formatServicePorts(object),
          age(created, now),
        ],
        wide: [formatLabels(object.spec.selector)],
      };
    case 'Endpoints':
      return { cells: [object.metadata.name, formatEndpoints(object), age(created, now)], wide: [] };
    case 'Deployment': {
      const status = object.status ?? {};
      return {
        cells: [
          object.metadata.name,
          `${status.readyReplicas ?? 0}/${object.spec.replicas ?? 1}`,
          String(status.updatedReplicas ?? 0),
          String(status.availableReplicas ?? 0),
          age(created, now),
        ],
        wide: templateCells(object),
      };
    }
    case 'ReplicaSet':
      return {
        cells: [
          object.metadata.name,
          String(object.spec.replicas ?? 1),
          String(object.status?.replicas ?? 0),
          String(object.status?.readyReplicas ?? 0),
          age(created, now),
        ],
        wide: templateCells(object),
      };
    case 'Namespace':
      return {
        cells: [object.metadata.name, object.metadata.deletionTimestamp ? 'Terminating' : (object.status?.phase ?? 'Active'), age(created, now)],
        wide: [],
      };
    default:
      return assertNever(object, 'kind');
  }
};

const isNamespaced = (kind: KubeObject['kind']): boolean => kind !== 'Node' && kind !== 'Namespace';

/** The headers of a kind's table. */
export const tableHeaders = (kind: KubeObject['kind'], options: TableOptions = {}): string[] => {
  const columns = COLUMNS[kind];
  return [
    ...(options.withNamespace && isNamespaced(kind) ? ['NAMESPACE'] : []),
    ...columns.headers,
    ...(options.wide ? columns.wideHeaders : []),
  ];
};

/** The cells of one object's row, matching {@link tableHeaders}. */
export const tableRow = (object: KubeObject, options: TableOptions = {}): string[] => {
  const { cells, wide } = rowCells(object, options.now ?? Date.now());
  const [name = '', ...rest] = cells;
  return [
    ...(options.withNamespace && isNamespaced(object.kind) ? [object.metadata.namespace ?? ''] : []),
    options.namePrefix ? `${options.namePrefix}/${name}` : name,
    ...rest,
    ...(options.wide ? wide : []),
  ];
};

/** The `get` table of objects that all have `kind`. */
export const objectTable = (kind: KubeObject['kind'], objects: readonly KubeObject[], options: TableOptions = {}): Table => ({
  headers: tableHeaders(kind, options),
  rows: objects.map((o) => tableRow(o, options)),
});

const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
};

/** YAML like kubectl's: keys sorted, sequences not indented, no line folding. */
export const toYaml = (value: unknown): string => YAML.stringify(sortKeys(value), { indentSeq: false, lineWidth: 0 });

/** JSON like kubectl's: keys sorted, four-space indent, trailing newline. */
export const toJson = (value: unknown): string => `${JSON.stringify(sortKeys(value), null, 4)}\n`;

/** A `v1 List` of objects, as kubectl prints several objects with `-o yaml|json`. */
export const asList = (items: readonly unknown[], resourceVersion = ''): unknown => ({
  apiVersion: 'v1',
  items,
  kind: 'List',
  metadata: { resourceVersion },
});

/**
 * What kubectl prints for an error (`cmdutil.CheckErr`): `Error from server (NotFound): …`,
 * `The Deployment "web" is invalid: spec.replicas: …`, `error: You must be logged in to the
 * server (…)`, connection failures, and `error: …` for everything else.
 */
export const formatError = (error: unknown): string => {
  if (error instanceof ApiError) {
    const status = error.status;
    const message = status.message ?? error.message;
    if (error.reason === 'Invalid') {
      const details = status.details;
      const subject = details && (details.kind || details.name) ? `The ${details.kind ?? ''} "${details.name ?? ''}" is invalid` : 'The request is invalid';
      const causes = (details?.causes ?? []).map((c) => (c.field ? `${c.field}: ${c.message ?? ''}` : (c.message ?? '')));
      if (causes.length === 0) return details ? subject : `Error from server (Invalid): ${message}`;
      if (causes.length === 1) return `${subject}: ${causes[0]}`;
      return `${subject}: \n${causes.map((c) => `* ${c}`).join('\n')}`;
    }
    if (error.reason === 'Unauthorized') return `error: You must be logged in to the server (${message})`;
    if (error.reason) return `Error from server (${error.reason}): ${message}`;
    return `Error from server: ${message}`;
  }
  if (error instanceof ConnectionError) return error.message;
  if (error instanceof Error) return `error: ${error.message}`;
  return `error: ${String(error)}`;
};
