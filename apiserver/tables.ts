/**
 * Server-side printing: `meta.k8s.io/v1 Table` replies with the columns kubectl shows for
 * each kind (the ones of kube-apiserver's printers), so `kubectl get` prints READY,
 * STATUS, RESTARTS … and, with `-o wide`, the priority-1 columns.
 */
import { labelSelectorToRequirements, selectorToString } from '../projections/selectors.ts';
import { KINDS as KIND_LIST } from '../schemas/index.ts';
import { registryColumns, ROWS as ROWS_OF_KINDS } from './printers.ts';
import type { Deployment, Endpoints, Kind, KubeObject, Namespace, Node, ObjectMeta, ObjectOfKind, Pod, ReplicaSet, Service } from '../schemas/index.ts';

export interface TableColumnDefinition {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly format: string;
  readonly description: string;
  readonly priority: number;
}

export type TableCell = string | number;

export interface TableRow {
  readonly cells: readonly TableCell[];
  readonly object?: unknown;
}

export interface Table {
  readonly kind: 'Table';
  readonly apiVersion: string;
  readonly metadata: { readonly resourceVersion?: string; readonly continue?: string };
  readonly columnDefinitions: readonly TableColumnDefinition[];
  readonly rows: readonly TableRow[];
}

/** What each row carries besides its cells (`?includeObject=`; kubectl's default is Metadata). */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

export const parseIncludeObject = (value: string | null): IncludeObject =>
  value === 'None' || value === 'Object' ? value : 'Metadata';

const column = (name: string, description: string, options: Partial<TableColumnDefinition> = {}): TableColumnDefinition => ({
  name,
  type: 'string',
  format: '',
  description,
  priority: 0,
  ...options,
});

const NAME = column('Name', 'Name must be unique within a namespace.', { format: 'name' });
const AGE = column('Age', 'CreationTimestamp is a timestamp representing the server time when this object was created.');
const wide = (name: string, description: string): TableColumnDefinition => column(name, description, { priority: 1 });

/**
 * kube's `duration.HumanDuration`: "45s", "3m20s", "5h", "2d3h", "1y30d". Negative
 * durations beyond the clock-skew allowance read "<invalid>".
 */
export const humanDuration = (ms: number): string => {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  const years = Math.trunc(hours / 24 / 365);
  if (hours < 24 * 365 * 8) {
    const days = Math.trunc(hours / 24) % 365;
    return days === 0 ? `${years}y` : `${years}y${days}d`;
  }
  return `${years}y`;
};

export const age = (timestamp: string | undefined, now: number): string => {
  if (!timestamp) return '<unknown>';
  const time = Date.parse(timestamp);
  return Number.isNaN(time) ? '<unknown>' : humanDuration(now - time);
};

const orNone = (value: string | undefined): string => (value ? value : '<none>');

/** kubectl's pod STATUS and RESTARTS logic (kube 1.32 `printPod`, init containers and sidecars included). */
export const podStatus = (pod: Pod, now: number): { ready: string; status: string; restarts: string } => {
  const status = pod.status ?? {};
  let reason = status.reason || status.phase || 'Pending';
  if ((status.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.reason === 'SchedulingGated')) reason = 'SchedulingGated';
  const initSpecs = pod.spec.initContainers ?? [];
  const sidecars = new Set(initSpecs.filter((c) => c.restartPolicy === 'Always').map((c) => c.name));
  let restarts = 0;
  let readyContainers = 0;
  let lastRestart: number | undefined;
  /** The sidecars' restarts and latest restart: what RESTARTS shows once the pod is initialized. */
  let sidecarRestarts = 0;
  let lastSidecarRestart: number | undefined;
  const later = (current: number | undefined, finishedAt: string | undefined): number | undefined => {
    const time = finishedAt ? Date.parse(finishedAt) : Number.NaN;
    return !Number.isNaN(time) && (current === undefined || time > current) ? time : current;
  };
  let initializing = false;
  const initStatuses = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const container = initStatuses[i]!;
    restarts += container.restartCount ?? 0;
    lastRestart = later(lastRestart, container.lastState?.terminated?.finishedAt);
    const sidecar = sidecars.has(container.name);
    if (sidecar) {
      sidecarRestarts += container.restartCount ?? 0;
      lastSidecarRestart = later(lastSidecarRestart, container.lastState?.terminated?.finishedAt);
    }
    if (sidecar && container.started) {
      if (container.ready) readyContainers++;
      continue;
    }
    const state = container.state;
    if (state?.terminated && state.terminated.exitCode === 0) continue;
    if (state?.terminated) {
      reason = state.terminated.reason
        ? `Init:${state.terminated.reason}`
        : state.terminated.signal
          ? `Init:Signal:${state.terminated.signal}`
          : `Init:ExitCode:${state.terminated.exitCode}`;
    } else if (state?.waiting?.reason && state.waiting.reason !== 'PodInitializing') {
      reason = `Init:${state.waiting.reason}`;
    } else {
      reason = `Init:${i}/${initSpecs.length}`;
    }
    initializing = true;
    break;
  }
  const initialized = (status.conditions ?? []).some((c) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initialized) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const container = statuses[i]!;
      restarts += container.restartCount ?? 0;
      lastRestart = later(lastRestart, container.lastState?.terminated?.finishedAt);
      const state = container.state;
      if (state?.waiting?.reason) reason = state.waiting.reason;
      else if (state?.terminated?.reason) reason = state.terminated.reason;
      else if (state?.terminated) {
        reason = state.terminated.signal ? `Signal:${state.terminated.signal}` : `ExitCode:${state.terminated.exitCode}`;
      } else if (container.ready && state?.running) {
        hasRunning = true;
        readyContainers++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      reason = (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True') ? 'Running' : 'NotReady';
    }
  }
  const phase = status.phase;
  if (pod.metadata.deletionTimestamp && status.reason === 'NodeLost') reason = 'Unknown';
  else if (pod.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';
  return {
    ready: `${readyContainers}/${pod.spec.containers.length + sidecars.size}`,
    status: reason,
    restarts: restarts !== 0 && lastRestart !== undefined ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : String(restarts),
  };
};

/** `Ready`, `NotReady`, `Unknown`, plus `,SchedulingDisabled` when cordoned. */
export const nodeStatus = (node: Node): string => {
  const ready = (node.status?.conditions ?? []).find((c) => c.type === 'Ready');
  const states = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (node.spec?.unschedulable) states.push('SchedulingDisabled');
  return states.join(',');
};

const podRow = (pod: Pod, now: number): TableCell[] => {
  const status = pod.status ?? {};
  const summary = podStatus(pod, now);
  return [
    pod.metadata.name,
    summary.ready,
    summary.status,
    summary.restarts,
    age(pod.metadata.creationTimestamp, now),
    orNone(status.podIPs?.[0]?.ip ?? status.podIP),
    orNone(pod.spec.nodeName),
    orNone(status.nominatedNodeName),
    '<none>',
  ];
};

const nodeRow = (node: Node, now: number): TableCell[] => {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(node.metadata.labels ?? {})) {
    if (key.startsWith('node-role.kubernetes.io/')) {
      const role = key.slice('node-role.kubernetes.io/'.length);
      if (role) roles.add(role);
    } else if (key === 'kubernetes.io/role' && value) {
      roles.add(value);
    }
  }
  const address = (type: string): string => orNone(node.status?.addresses?.find((a) => a.type === type)?.address);
  const info = node.status?.nodeInfo;
  return [
    node.metadata.name,
    nodeStatus(node),
    roles.size > 0 ? [...roles].sort().join(',') : '<none>',
    age(node.metadata.creationTimestamp, now),
    info?.kubeletVersion ?? '',
    address('InternalIP'),
    address('ExternalIP'),
    info?.osImage || '<unknown>',
    info?.kernelVersion || '<unknown>',
    info?.containerRuntimeVersion || '<unknown>',
  ];
};

const mapSelector = (selector: Readonly<Record<string, string>> | undefined): string => {
  const entries = Object.entries(selector ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? '<none>' : entries.map(([k, v]) => `${k}=${v}`).join(',');
};

const serviceRow = (service: Service, now: number): TableCell[] => {
  const spec = service.spec;
  const type = spec.type ?? 'ClusterIP';
  // kube's getServiceExternalIP: the external IPs (after a load balancer's), the ExternalName's name.
  const externalIPs = spec.externalIPs ?? [];
  let externalIp = externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
  if (type === 'LoadBalancer') {
    const ingress = (service.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? i.hostname ?? '').filter((s) => s !== '');
    const all = [...ingress, ...externalIPs];
    externalIp = all.length > 0 ? all.join(',') : '<pending>';
  } else if (type === 'ExternalName') {
    externalIp = spec.externalName ?? '';
  }
  const ports = (spec.ports ?? []).map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol ?? 'TCP'}` : `${p.port}/${p.protocol ?? 'TCP'}`));
  return [
    service.metadata.name,
    type,
    orNone(spec.clusterIP),
    externalIp,
    ports.length > 0 ? ports.join(',') : '<none>',
    age(service.metadata.creationTimestamp, now),
    mapSelector(spec.selector),
  ];
};

export const labelSelectorText = (selector: Parameters<typeof labelSelectorToRequirements>[0] | undefined): string => {
  if (!selector) return '<none>';
  const parsed = labelSelectorToRequirements(selector);
  if (parsed.type === 'invalid') return '<error>';
  return parsed.requirements.length === 0 ? '<none>' : selectorToString(parsed.requirements);
};

const templateColumns = (workload: Deployment | ReplicaSet): TableCell[] => {
  const containers = workload.spec.template?.spec.containers ?? [];
  return [
    containers.map((c) => c.name).join(','),
    containers.map((c) => c.image ?? '').join(','),
    labelSelectorText(workload.spec.selector),
  ];
};

const deploymentRow = (deployment: Deployment, now: number): TableCell[] => {
  const status = deployment.status ?? {};
  return [
    deployment.metadata.name,
    `${status.readyReplicas ?? 0}/${deployment.spec.replicas ?? 1}`,
    status.updatedReplicas ?? 0,
    status.availableReplicas ?? 0,
    age(deployment.metadata.creationTimestamp, now),
    ...templateColumns(deployment),
  ];
};

const replicaSetRow = (replicaSet: ReplicaSet, now: number): TableCell[] => [
  replicaSet.metadata.name,
  replicaSet.spec.replicas ?? 1,
  replicaSet.status?.replicas ?? 0,
  replicaSet.status?.readyReplicas ?? 0,
  age(replicaSet.metadata.creationTimestamp, now),
  ...templateColumns(replicaSet),
];

/** kube's `formatEndpoints`: up to three `ip:port`, then "+ N more...". */
export const formatEndpoints = (endpoints: Endpoints): string => {
  const max = 3;
  const list: string[] = [];
  let count = 0;
  for (const subset of endpoints.subsets ?? []) {
    const addresses = subset.addresses ?? [];
    const ports = subset.ports ?? [];
    if (ports.length === 0) {
      count += addresses.length;
      for (const address of addresses) if (list.length < max) list.push(address.ip);
    } else {
      for (const port of ports) {
        count += addresses.length;
        for (const address of addresses) {
          if (list.length < max) list.push(address.ip.includes(':') ? `[${address.ip}]:${port.port}` : `${address.ip}:${port.port}`);
        }
      }
    }
  }
  if (list.length === 0) return '<none>';
  return count > max ? `${list.join(',')} + ${count - max} more...` : list.join(',');
};

const endpointsRow = (endpoints: Endpoints, now: number): TableCell[] => [
  endpoints.metadata.name,
  formatEndpoints(endpoints),
  age(endpoints.metadata.creationTimestamp, now),
];

const namespaceRow = (namespace: Namespace, now: number): TableCell[] => [
  namespace.metadata.name,
  namespace.metadata.deletionTimestamp ? 'Terminating' : (namespace.status?.phase ?? 'Active'),
  age(namespace.metadata.creationTimestamp, now),
];

/** How a kind prints as a Table: its columns and the cells of one object's row. */
interface TablePrinter<K extends Kind> {
  readonly columns: readonly TableColumnDefinition[];
  readonly row: (object: ObjectOfKind<K>, now: number) => TableCell[];
}

const printer = <K extends Kind>(columns: readonly TableColumnDefinition[], row: (object: ObjectOfKind<K>, now: number) => TableCell[]): TablePrinter<K> => ({ columns, row });

/**
 * kube-apiserver's default table for a kind without printers of its own (as for a custom
 * resource without additionalPrinterColumns): the name and the age.
 */
const DEFAULT_PRINTER: TablePrinter<Kind> = printer([NAME, AGE], (object, now) => [object.metadata.name, age(object.metadata.creationTimestamp, now)]);

const ROWS = {
  Pod: podRow,
  Node: nodeRow,
  Service: serviceRow,
  Endpoints: endpointsRow,
  Deployment: deploymentRow,
  ReplicaSet: replicaSetRow,
  Namespace: namespaceRow,
};

const COLUMNS = {
  Pod: [
    NAME,
    column('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
    column('Status', 'The aggregate status of the containers in this pod.'),
    column('Restarts', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
    AGE,
    wide('IP', 'IP address allocated to the pod. Routable at least within the cluster.'),
    wide('Node', 'NodeName indicates in which node this pod is scheduled.'),
    wide('Nominated Node', 'nominatedNodeName is set only when this pod preempts other pods on the node.'),
    wide('Readiness Gates', 'If specified, all readiness gates will be evaluated for pod readiness.'),
  ],
  Node: [
    NAME,
    column('Status', 'The status of the node'),
    column('Roles', 'The roles of the node'),
    AGE,
    column('Version', 'Kubelet Version reported by the node.'),
    wide('Internal-IP', 'List of addresses reachable to the node.'),
    wide('External-IP', 'List of addresses reachable to the node.'),
    wide('OS-Image', 'OS Image reported by the node from /etc/os-release.'),
    wide('Kernel-Version', 'Kernel Version reported by the node.'),
    wide('Container-Runtime', 'ContainerRuntime Version reported by the node.'),
  ],
  Service: [
    NAME,
    column('Type', 'type determines how the Service is exposed.'),
    column('Cluster-IP', 'clusterIP is the IP address of the service.'),
    column('External-IP', 'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.'),
    column('Port(s)', 'The list of ports that are exposed by this service.'),
    AGE,
    wide('Selector', 'Route service traffic to pods with label keys and values matching this selector.'),
  ],
  Endpoints: [NAME, column('Endpoints', 'Endpoints of the service'), AGE],
  Deployment: [
    NAME,
    column('Ready', 'Number of the pod with ready state'),
    column('Up-to-date', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.', { type: 'integer' }),
    column('Available', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.', { type: 'integer' }),
    AGE,
    wide('Containers', 'Names of each container in the template.'),
    wide('Images', 'Images referenced by each container in the template.'),
    wide('Selector', 'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.'),
  ],
  ReplicaSet: [
    NAME,
    column('Desired', 'Replicas is the number of desired replicas.', { type: 'integer' }),
    column('Current', 'Replicas is the most recently observed number of replicas.', { type: 'integer' }),
    column('Ready', 'readyReplicas is the number of pods targeted by this ReplicaSet with a Ready Condition.', { type: 'integer' }),
    AGE,
    wide('Containers', 'Names of each container in the template.'),
    wide('Images', 'Images referenced by each container in the template.'),
    wide('Selector', 'Selector is a label query over pods that should match the replica count.'),
  ],
  Namespace: [NAME, column('Status', 'The status of the namespace'), AGE],
};

/** Every kind's Table printer: its own where written, else {@link DEFAULT_PRINTER}. */
const PRINTERS: { readonly [K in Kind]: TablePrinter<K> } = {
  ...(Object.fromEntries(KIND_LIST.map((kind) => [kind, DEFAULT_PRINTER])) as { [K in Kind]: TablePrinter<K> }),
  Pod: printer(COLUMNS.Pod, ROWS.Pod),
  Node: printer(COLUMNS.Node, ROWS.Node),
  Service: printer(COLUMNS.Service, ROWS.Service),
  Endpoints: printer(COLUMNS.Endpoints, ROWS.Endpoints),
  Deployment: printer(COLUMNS.Deployment, ROWS.Deployment),
  ReplicaSet: printer(COLUMNS.ReplicaSet, ROWS.ReplicaSet),
  Namespace: printer(COLUMNS.Namespace, ROWS.Namespace),
};

const resolved = new Map<Kind, TablePrinter<Kind>>();
/**
 * A kind's printer: its own here, else its rows in printers.ts with the registry's columns,
 * else the default. Resolved on first use (printers.ts imports this module's helpers).
 */
const printerOf = (kind: Kind): TablePrinter<Kind> => {
  let found = resolved.get(kind);
  if (!found) {
    const own = PRINTERS[kind] as TablePrinter<Kind>;
    const row = ROWS_OF_KINDS[kind] as TablePrinter<Kind>['row'] | undefined;
    found = own !== DEFAULT_PRINTER || row === undefined ? own : printer(registryColumns(kind), row);
    resolved.set(kind, found);
  }
  return found;
};

/** The cells of one object's row. */
export const rowCells = (object: KubeObject, now: number): TableCell[] => printerOf(object.kind).row(object, now);

/** The columns of a kind's Table. */
export const tableColumns = (kind: Kind): readonly TableColumnDefinition[] => printerOf(kind).columns;

/** `PartialObjectMetadata` of an object: what `-A` and `--show-labels` read from a row. */
export const partialMetadata = (object: { readonly metadata: ObjectMeta }, version: string): unknown => ({
  kind: 'PartialObjectMetadata',
  apiVersion: `meta.k8s.io/${version}`,
  metadata: object.metadata,
});

export interface TableOptions {
  readonly kind: KubeObject['kind'];
  readonly includeObject: IncludeObject;
  readonly version: 'v1' | 'v1beta1';
  readonly resourceVersion?: string;
  readonly continueToken?: string;
  readonly now?: number;
}

/** Prints objects (all of `options.kind`) as a Table. */
export const toTable = (objects: readonly KubeObject[], options: TableOptions): Table => {
  const now = options.now ?? Date.now();
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${options.version}`,
    metadata: {
      ...(options.resourceVersion !== undefined ? { resourceVersion: options.resourceVersion } : {}),
      ...(options.continueToken ? { continue: options.continueToken } : {}),
    },
    columnDefinitions: tableColumns(options.kind),
    rows: objects.map((object) => ({
      cells: rowCells(object, now),
      ...(options.includeObject === 'None'
        ? {}
        : { object: options.includeObject === 'Object' ? object : partialMetadata(object, options.version) }),
    })),
  };
};
