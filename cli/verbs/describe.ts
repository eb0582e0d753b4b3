/**
 * `logplane describe KIND NAME | KIND/NAME | KIND [-l SELECTOR]`: kubectl's describe
 * layout (aligned `Field:  value` blocks, nested sections, condition tables). The pure
 * {@link describeObject} formats one object with what was fetched about it (a Deployment's
 * ReplicaSets, a Service's Endpoints, a Node's Pods). logplane has no Event objects, so
 * `Events:` reads `<none>`.
 */
import type { Command } from 'commander';
import type {
  Container,
  ContainerState,
  Deployment,
  Endpoints,
  KubeObject,
  Namespace,
  Node,
  ObjectMeta,
  Pod,
  PodStatus,
  PodTemplateSpec,
  Probe,
  LabelSelector,
  ReplicaSet,
  Service,
} from '../../schemas/index.ts';
import { assertNever } from '../../schemas/assert-never.ts';
import { ApiError, type Client } from '../client.ts';
import { formatEndpoints, humanDuration, podStatus } from '../../apiserver/tables.ts';
import { LAST_APPLIED_ANNOTATION } from './apply.ts';
import { action, connect, optionsOf, out, printError, ReportedError, withConnectionOptions, withNamespaceOption } from './common.ts';
import { collectionPath, objectPath, withTypeMeta, type Resources, type ResourceType } from './kinds.ts';
import { describeGeneric } from './describe-generic.ts';
import { selectorFromLabels } from './selector.ts';
import { splitReplicaSets } from './workloads.ts';

/** The AGE cell of a timestamp: its distance to `now`, or `<unknown>`. */
export const age = (timestamp: string | undefined, now: number): string => {
  if (!timestamp) return '<unknown>';
  const time = Date.parse(timestamp);
  return Number.isNaN(time) ? '<unknown>' : humanDuration(now - time);
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

/** What describe shows besides the object itself. */
export interface Related {
  /** A Deployment's ReplicaSets (all it controls). */
  readonly replicaSets?: readonly ReplicaSet[];
  /** A ReplicaSet's or Node's Pods. */
  readonly pods?: readonly Pod[];
  /** A Service's Endpoints. */
  readonly endpoints?: Endpoints;
}

const pad2 = (n: number): string => String(n).padStart(2, '0');
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Go's RFC1123Z in local time (`Mon, 02 Jan 2006 15:04:05 -0700`), as kubectl describe prints times. */
export const formatDescribeTime = (timestamp: string | undefined): string => {
  if (!timestamp) return '<unset>';
  const date = new Date(timestamp);
  if (Number.isNaN(date.getTime())) return timestamp;
  const offset = -date.getTimezoneOffset();
  const sign = offset < 0 ? '-' : '+';
  const zone = `${sign}${pad2(Math.trunc(Math.abs(offset) / 60))}${pad2(Math.abs(offset) % 60)}`;
  return `${DAYS[date.getDay()]}, ${pad2(date.getDate())} ${MONTHS[date.getMonth()]} ${date.getFullYear()} ${pad2(date.getHours())}:${pad2(
    date.getMinutes(),
  )}:${pad2(date.getSeconds())} ${zone}`;
};

/**
 * Aligns lines like kubectl's describe tabwriter (padding 2): runs of consecutive lines
 * that contain tabs form a block whose cells are padded to the block's column widths.
 */
export const alignBlocks = (lines: readonly string[]): string => {
  const result: string[] = [];
  let block: string[][] = [];
  const flush = (): void => {
    const widths: number[] = [];
    for (const cells of block) cells.forEach((cell, i) => i < cells.length - 1 && (widths[i] = Math.max(widths[i] ?? 0, cell.length + 2)));
    for (const cells of block) result.push(cells.map((cell, i) => (i < cells.length - 1 ? cell.padEnd(widths[i]!) : cell)).join('').trimEnd());
    block = [];
  };
  for (const line of lines) {
    if (line.includes('\t')) block.push(line.split('\t'));
    else {
      flush();
      result.push(line);
    }
  }
  flush();
  return `${result.join('\n')}\n`;
};

/** Lines under construction, with kubectl's indentation levels (2 spaces each). */
interface Lines {
  readonly lines: string[];
  add(level: number, text: string): void;
  /** `Key:\tvalue` with one line per entry (`<none>` when empty). */
  multiline(level: number, title: string, entries: readonly string[]): void;
}

const createLines = (): Lines => {
  const lines: string[] = [];
  const add = (level: number, text: string): void => {
    lines.push(`${'  '.repeat(level)}${text}`);
  };
  return {
    lines,
    add,
    multiline: (level, title, entries) => {
      if (entries.length === 0) add(level, `${title}:\t<none>`);
      else entries.forEach((entry, i) => add(level, i === 0 ? `${title}:\t${entry}` : `\t${entry}`));
    },
  };
};

const sortedEntries = (map: Readonly<Record<string, string>> | undefined): [string, string][] =>
  Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

const labelLines = (labels: Readonly<Record<string, string>> | undefined): string[] => sortedEntries(labels).map(([k, v]) => `${k}=${v}`);

const annotationLines = (annotations: Readonly<Record<string, string>> | undefined): string[] =>
  sortedEntries(annotations)
    .filter(([k]) => k !== LAST_APPLIED_ANNOTATION)
    .map(([k, v]) => `${k}: ${v}`);

const metaLines = (w: Lines, metadata: ObjectMeta, namespaced: boolean): void => {
  w.add(0, `Name:\t${metadata.name}`);
  if (namespaced) w.add(0, `Namespace:\t${metadata.namespace ?? ''}`);
};

const controllerOf = (metadata: ObjectMeta): string | undefined => {
  const owner = (metadata.ownerReferences ?? []).find((o) => o.controller);
  return owner ? `${owner.kind}/${owner.name}` : undefined;
};

const stateLines = (w: Lines, level: number, title: string, state: ContainerState | undefined): void => {
  if (state?.running) {
    w.add(level, `${title}:\tRunning`);
    if (state.running.startedAt) w.add(level + 1, `Started:\t${formatDescribeTime(state.running.startedAt)}`);
  } else if (state?.waiting) {
    w.add(level, `${title}:\tWaiting`);
    if (state.waiting.reason) w.add(level + 1, `Reason:\t${state.waiting.reason}`);
    if (state.waiting.message) w.add(level + 1, `Message:\t${state.waiting.message}`);
  } else if (state?.terminated) {
    const t = state.terminated;
    w.add(level, `${title}:\tTerminated`);
    if (t.reason) w.add(level + 1, `Reason:\t${t.reason}`);
    if (t.message) w.add(level + 1, `Message:\t${t.message}`);
    w.add(level + 1, `Exit Code:\t${t.exitCode}`);
    if (t.signal) w.add(level + 1, `Signal:\t${t.signal}`);
    w.add(level + 1, `Started:\t${formatDescribeTime(t.startedAt)}`);
    w.add(level + 1, `Finished:\t${formatDescribeTime(t.finishedAt)}`);
  } else if (title === 'State') {
    w.add(level, `${title}:\tWaiting`);
  }
};

const probeText = (probe: Probe): string => {
  let what = 'unknown';
  if (probe.httpGet) {
    const get = probe.httpGet;
    what = `http-get ${(get.scheme ?? 'HTTP').toLowerCase()}://${get.host ?? ''}:${get.port}${get.path ?? '/'}`;
  } else if (probe.tcpSocket) what = `tcp-socket ${probe.tcpSocket.host ?? ''}:${probe.tcpSocket.port}`;
  else if (probe.exec) what = `exec [${(probe.exec.command ?? []).join(' ')}]`;
  return `${what} delay=${probe.initialDelaySeconds ?? 0}s timeout=${probe.timeoutSeconds ?? 1}s period=${probe.periodSeconds ?? 10}s #success=${
    probe.successThreshold ?? 1
  } #failure=${probe.failureThreshold ?? 3}`;
};

const containerLines = (w: Lines, level: number, container: Container, status: PodStatus | undefined, inPod: boolean): void => {
  const containerStatus = inPod ? status?.containerStatuses?.find((c) => c.name === container.name) : undefined;
  w.add(level, `${container.name}:`);
  const l = level + 1;
  if (inPod) w.add(l, `Container ID:\t${containerStatus?.containerID ?? ''}`);
  w.add(l, `Image:\t${container.image ?? ''}`);
  if (inPod) w.add(l, `Image ID:\t${containerStatus?.imageID ?? ''}`);
  const ports = container.ports ?? [];
  if (ports.length === 0) {
    w.add(l, 'Port:\t<none>');
    w.add(l, 'Host Port:\t<none>');
  } else {
    const list = ports.map((p) => `${p.containerPort}/${p.protocol ?? 'TCP'}${p.name ? ` (${p.name})` : ''}`);
    w.add(l, `${ports.length === 1 ? 'Port' : 'Ports'}:\t${list.join(', ')}`);
    w.add(l, `Host ${ports.length === 1 ? 'Port' : 'Ports'}:\t${ports.map((p) => `${p.hostPort ?? 0}/${p.protocol ?? 'TCP'}`).join(', ')}`);
  }
  if (container.command?.length) {
    w.add(l, 'Command:');
    for (const part of container.command) w.add(l + 1, part);
  }
  if (container.args?.length) {
    w.add(l, 'Args:');
    for (const part of container.args) w.add(l + 1, part);
  }
  if (inPod && containerStatus) {
    stateLines(w, l, 'State', containerStatus.state);
    if (containerStatus.lastState?.terminated) stateLines(w, l, 'Last State', containerStatus.lastState);
    w.add(l, `Ready:\t${containerStatus.ready ? 'True' : 'False'}`);
    w.add(l, `Restart Count:\t${containerStatus.restartCount}`);
  }
  const resources = container.resources;
  for (const [title, values] of [['Limits', resources?.limits], ['Requests', resources?.requests]] as const) {
    const entries = sortedEntries(values);
    if (entries.length === 0) continue;
    w.add(l, `${title}:`);
    for (const [k, v] of entries) w.add(l + 1, `${k}:\t${v}`);
  }
  if (container.livenessProbe) w.add(l, `Liveness:\t${probeText(container.livenessProbe)}`);
  if (container.readinessProbe) w.add(l, `Readiness:\t${probeText(container.readinessProbe)}`);
  if (container.startupProbe) w.add(l, `Startup:\t${probeText(container.startupProbe)}`);
  const env = container.env ?? [];
  if (env.length === 0) w.add(l, 'Environment:\t<none>');
  else {
    w.add(l, 'Environment:');
    for (const variable of env) w.add(l + 1, `${variable.name}:\t${variable.value ?? ''}`);
  }
  w.add(l, 'Mounts:\t<none>');
};

const templateLines = (w: Lines, template: PodTemplateSpec | undefined): void => {
  w.add(0, 'Pod Template:');
  w.multiline(1, 'Labels', labelLines(template?.metadata?.labels));
  const annotations = annotationLines(template?.metadata?.annotations);
  if (annotations.length > 0) w.multiline(1, 'Annotations', annotations);
  w.add(1, 'Containers:');
  for (const container of template?.spec.containers ?? []) containerLines(w, 2, container, undefined, false);
  w.add(1, 'Volumes:\t<none>');
  const nodeSelector = labelLines(template?.spec.nodeSelector);
  if (nodeSelector.length > 0) w.multiline(1, 'Node-Selectors', nodeSelector);
};

const conditionTable = (
  w: Lines,
  conditions: readonly { type: string; status: string; reason?: string }[] | undefined,
  withReason: boolean,
): void => {
  if (!conditions || conditions.length === 0) {
    w.add(0, 'Conditions:\t<none>');
    return;
  }
  w.add(0, 'Conditions:');
  if (withReason) {
    w.add(1, 'Type\tStatus\tReason');
    w.add(1, '----\t------\t------');
    for (const c of conditions) w.add(1, `${c.type}\t${c.status}\t${c.reason ?? ''}`);
  } else {
    w.add(1, 'Type\tStatus');
    for (const c of conditions) w.add(1, `${c.type}\t${c.status}`);
  }
};

const describePod = (pod: Pod, w: Lines): void => {
  metaLines(w, pod.metadata, true);
  w.add(0, `Priority:\t${pod.spec.priority ?? 0}`);
  w.add(0, `Node:\t${pod.spec.nodeName ? `${pod.spec.nodeName}${pod.status?.hostIP ? `/${pod.status.hostIP}` : ''}` : '<none>'}`);
  if (pod.status?.startTime) w.add(0, `Start Time:\t${formatDescribeTime(pod.status.startTime)}`);
  w.multiline(0, 'Labels', labelLines(pod.metadata.labels));
  w.multiline(0, 'Annotations', annotationLines(pod.metadata.annotations));
  if (pod.metadata.deletionTimestamp) {
    w.add(0, `Status:\tTerminating (lasts ${formatDescribeTime(pod.metadata.deletionTimestamp)})`);
    if (pod.metadata.deletionGracePeriodSeconds !== undefined) w.add(0, `Termination Grace Period:\t${pod.metadata.deletionGracePeriodSeconds}s`);
  } else w.add(0, `Status:\t${pod.status?.phase ?? 'Pending'}`);
  if (pod.status?.reason) w.add(0, `Reason:\t${pod.status.reason}`);
  if (pod.status?.message) w.add(0, `Message:\t${pod.status.message}`);
  w.add(0, `IP:\t${pod.status?.podIP ?? ''}`);
  const ips = pod.status?.podIPs ?? [];
  if (ips.length === 0) w.add(0, 'IPs:\t<none>');
  else {
    w.add(0, 'IPs:');
    for (const ip of ips) w.add(1, `IP:\t${ip.ip}`);
  }
  const controller = controllerOf(pod.metadata);
  if (controller) w.add(0, `Controlled By:\t${controller}`);
  w.add(0, 'Containers:');
  for (const container of pod.spec.containers) containerLines(w, 1, container, pod.status, true);
  conditionTable(w, pod.status?.conditions, false);
  w.add(0, 'Volumes:\t<none>');
  w.multiline(0, 'Node-Selectors', labelLines(pod.spec.nodeSelector));
  const tolerations = (pod.spec.tolerations ?? []).map((t) => {
    let text = t.key ?? '';
    if (t.value) text += `=${t.value}`;
    if (t.effect) text += `:${t.effect}`;
    if (t.operator === 'Exists' && !t.value) text += text ? ' op=Exists' : 'op=Exists';
    if (t.tolerationSeconds !== undefined) text += ` for ${t.tolerationSeconds}s`;
    return text;
  });
  w.multiline(0, 'Tolerations', tolerations);
};

const replicaSetSummary = (rs: ReplicaSet): string => `${rs.metadata.name} (${rs.status?.replicas ?? 0}/${rs.spec.replicas ?? 1} replicas created)`;

const describeDeployment = (deployment: Deployment, related: Related, w: Lines): void => {
  metaLines(w, deployment.metadata, true);
  w.add(0, `CreationTimestamp:\t${formatDescribeTime(deployment.metadata.creationTimestamp)}`);
  w.multiline(0, 'Labels', labelLines(deployment.metadata.labels));
  w.multiline(0, 'Annotations', annotationLines(deployment.metadata.annotations));
  w.add(0, `Selector:\t${formatLabelSelector(deployment.spec.selector)}`);
  const s = deployment.status ?? {};
  w.add(
    0,
    `Replicas:\t${deployment.spec.replicas ?? 1} desired | ${s.updatedReplicas ?? 0} updated | ${s.replicas ?? 0} total | ${s.availableReplicas ?? 0} available | ${
      s.unavailableReplicas ?? 0
    } unavailable`,
  );
  const strategy = deployment.spec.strategy?.type ?? 'RollingUpdate';
  w.add(0, `StrategyType:\t${strategy}`);
  w.add(0, `MinReadySeconds:\t${deployment.spec.minReadySeconds ?? 0}`);
  if (strategy === 'RollingUpdate') {
    const rolling = deployment.spec.strategy?.rollingUpdate;
    w.add(0, `RollingUpdateStrategy:\t${rolling?.maxUnavailable ?? '25%'} max unavailable, ${rolling?.maxSurge ?? '25%'} max surge`);
  }
  if (deployment.spec.paused) w.add(0, 'Paused:\ttrue');
  templateLines(w, deployment.spec.template);
  conditionTable(w, s.conditions, true);
  if (related.replicaSets) {
    const { current, old } = splitReplicaSets(deployment, related.replicaSets);
    w.add(0, `OldReplicaSets:\t${old.length > 0 ? old.map(replicaSetSummary).join(', ') : '<none>'}`);
    w.add(0, `NewReplicaSet:\t${current ? replicaSetSummary(current) : '<none>'}`);
  }
};

const podPhaseCounts = (pods: readonly Pod[]): string => {
  const count = (phase: string): number => pods.filter((p) => (p.status?.phase ?? 'Pending') === phase).length;
  return `${count('Running')} Running / ${count('Pending')} Waiting / ${count('Succeeded')} Succeeded / ${count('Failed')} Failed`;
};

const describeReplicaSet = (rs: ReplicaSet, related: Related, w: Lines): void => {
  metaLines(w, rs.metadata, true);
  w.add(0, `Selector:\t${formatLabelSelector(rs.spec.selector)}`);
  w.multiline(0, 'Labels', labelLines(rs.metadata.labels));
  w.multiline(0, 'Annotations', annotationLines(rs.metadata.annotations));
  const controller = controllerOf(rs.metadata);
  if (controller) w.add(0, `Controlled By:\t${controller}`);
  w.add(0, `Replicas:\t${rs.status?.replicas ?? 0} current / ${rs.spec.replicas ?? 1} desired`);
  if (related.pods) w.add(0, `Pods Status:\t${podPhaseCounts(related.pods)}`);
  templateLines(w, rs.spec.template);
  if (rs.status?.conditions?.length) conditionTable(w, rs.status.conditions, true);
};

const describeService = (service: Service, related: Related, w: Lines): void => {
  metaLines(w, service.metadata, true);
  w.multiline(0, 'Labels', labelLines(service.metadata.labels));
  w.multiline(0, 'Annotations', annotationLines(service.metadata.annotations));
  w.add(0, `Selector:\t${labelLines(service.spec.selector).join(',') || '<none>'}`);
  w.add(0, `Type:\t${service.spec.type ?? 'ClusterIP'}`);
  w.add(0, `IP:\t${service.spec.clusterIP ?? '<none>'}`);
  w.add(0, `IPs:\t${(service.spec.clusterIPs ?? (service.spec.clusterIP ? [service.spec.clusterIP] : [])).join(',') || '<none>'}`);
  for (const port of service.spec.ports ?? []) {
    const name = port.name || '<unset>';
    w.add(0, `Port:\t${name}\t${port.port}/${port.protocol ?? 'TCP'}`);
    w.add(0, `TargetPort:\t${port.targetPort ?? port.port}/${port.protocol ?? 'TCP'}`);
    if (port.nodePort) w.add(0, `NodePort:\t${name}\t${port.nodePort}/${port.protocol ?? 'TCP'}`);
    {
      const addresses = (related.endpoints?.subsets ?? []).flatMap((subset) =>
        (subset.ports ?? []).filter((p) => (p.name ?? '') === (port.name ?? '') || (subset.ports ?? []).length === 1).flatMap((p) => (subset.addresses ?? []).map((a) => `${a.ip}:${p.port}`)),
      );
      w.add(0, `Endpoints:\t${addresses.join(',') || '<none>'}`);
    }
  }
  if ((service.spec.ports ?? []).length === 0) w.add(0, `Port:\t<none>`);
  w.add(0, `Session Affinity:\t${service.spec.sessionAffinity ?? 'None'}`);
};

const describeNode = (node: Node, related: Related, w: Lines): void => {
  w.add(0, `Name:\t${node.metadata.name}`);
  w.add(0, `Roles:\t${nodeRoles(node)}`);
  w.multiline(0, 'Labels', labelLines(node.metadata.labels));
  w.multiline(0, 'Annotations', annotationLines(node.metadata.annotations));
  w.add(0, `CreationTimestamp:\t${formatDescribeTime(node.metadata.creationTimestamp)}`);
  w.multiline(0, 'Taints', (node.spec?.taints ?? []).map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`));
  w.add(0, `Unschedulable:\t${node.spec?.unschedulable ? 'true' : 'false'}`);
  const conditions = node.status?.conditions ?? [];
  if (conditions.length === 0) w.add(0, 'Conditions:\t<none>');
  else {
    w.add(0, 'Conditions:');
    w.add(1, 'Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage');
    w.add(1, '----\t------\t-----------------\t------------------\t------\t-------');
    for (const c of conditions) {
      w.add(1, `${c.type}\t${c.status}\t${formatDescribeTime(c.lastHeartbeatTime)}\t${formatDescribeTime(c.lastTransitionTime)}\t${c.reason ?? ''}\t${c.message ?? ''}`);
    }
  }
  w.add(0, 'Addresses:');
  for (const address of node.status?.addresses ?? []) w.add(1, `${address.type}:\t${address.address}`);
  for (const [title, values] of [['Capacity', node.status?.capacity], ['Allocatable', node.status?.allocatable]] as const) {
    w.add(0, `${title}:`);
    for (const [k, v] of sortedEntries(values)) w.add(1, `${k}:\t${v}`);
  }
  const info = node.status?.nodeInfo;
  w.add(0, 'System Info:');
  const infoRows: [string, string | undefined][] = [
    ['Machine ID', info?.machineID],
    ['System UUID', info?.systemUUID],
    ['Boot ID', info?.bootID],
    ['Kernel Version', info?.kernelVersion],
    ['OS Image', info?.osImage],
    ['Operating System', info?.operatingSystem],
    ['Architecture', info?.architecture],
    ['Container Runtime Version', info?.containerRuntimeVersion],
    ['Kubelet Version', info?.kubeletVersion],
    ['Kube-Proxy Version', info?.kubeProxyVersion],
  ];
  for (const [title, value] of infoRows) w.add(1, `${title}:\t${value ?? ''}`);
  if (node.spec?.podCIDR) w.add(0, `PodCIDR:\t${node.spec.podCIDR}`);
  if (related.pods) {
    const running = related.pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
    w.add(0, `Non-terminated Pods:\t(${running.length} in total)`);
    if (running.length > 0) {
      w.add(1, 'Namespace\tName\tStatus\tAge');
      w.add(1, '---------\t----\t------\t---');
      for (const pod of running) {
        w.add(1, `${pod.metadata.namespace ?? ''}\t${pod.metadata.name}\t${podStatus(pod, Date.now()).status}\t${age(pod.metadata.creationTimestamp, Date.now())}`);
      }
    }
  }
};

const describeNamespace = (namespace: Namespace, w: Lines): void => {
  w.add(0, `Name:\t${namespace.metadata.name}`);
  w.multiline(0, 'Labels', labelLines(namespace.metadata.labels));
  w.multiline(0, 'Annotations', annotationLines(namespace.metadata.annotations));
  w.add(0, `Status:\t${namespace.metadata.deletionTimestamp ? 'Terminating' : (namespace.status?.phase ?? 'Active')}`);
  w.add(0, '');
  w.add(0, 'No resource quota.');
  w.add(0, '');
  w.add(0, 'No LimitRange resource.');
};

const describeEndpoints = (endpoints: Endpoints, w: Lines): void => {
  metaLines(w, endpoints.metadata, true);
  w.multiline(0, 'Labels', labelLines(endpoints.metadata.labels));
  w.multiline(0, 'Annotations', annotationLines(endpoints.metadata.annotations));
  w.add(0, 'Subsets:');
  for (const subset of endpoints.subsets ?? []) {
    w.add(1, `Addresses:\t${(subset.addresses ?? []).map((a) => a.ip).join(',') || '<none>'}`);
    w.add(1, `NotReadyAddresses:\t${(subset.notReadyAddresses ?? []).map((a) => a.ip).join(',') || '<none>'}`);
    w.add(1, 'Ports:');
    w.add(2, 'Name\tPort\tProtocol');
    w.add(2, '----\t----\t--------');
    for (const port of subset.ports ?? []) w.add(2, `${port.name || '<unset>'}\t${port.port}\t${port.protocol ?? 'TCP'}`);
  }
  w.add(0, `Endpoints summary:\t${formatEndpoints(endpoints)}`);
};

/** kubectl-like description of one object. */
export const describeObject = (object: KubeObject, related: Related = {}): string => {
  const w = createLines();
  switch (object.kind) {
    case 'Pod':
      describePod(object, w);
      break;
    case 'Deployment':
      describeDeployment(object, related, w);
      break;
    case 'ReplicaSet':
      describeReplicaSet(object, related, w);
      break;
    case 'Service':
      describeService(object, related, w);
      break;
    case 'Node':
      describeNode(object, related, w);
      break;
    case 'Namespace':
      describeNamespace(object, w);
      break;
    case 'Endpoints':
      describeEndpoints(object, w);
      break;
    default:
      describeGeneric(object, w, { labels: labelLines(object.metadata.labels), annotations: annotationLines(object.metadata.annotations) });
  }
  w.add(0, 'Events:\t<none>');
  return alignBlocks(w.lines);
};

const listItems = async <T>(client: Client, path: string, query: Record<string, string | undefined>): Promise<T[]> => {
  try {
    return (await client.get<{ items?: T[] }>(path, query)).items ?? [];
  } catch (error) {
    if (error instanceof ApiError) return [];
    throw error;
  }
};

/** Fetches what describe shows about an object besides itself; failures leave parts out. */
export const fetchRelated = async (client: Client, resources: Resources, object: KubeObject): Promise<Related> => {
  const namespace = object.metadata.namespace;
  switch (object.kind) {
    case 'Deployment': {
      const type = resources.forGroupKind('apps', 'ReplicaSet');
      const labels = object.spec.selector.matchLabels;
      return { replicaSets: await listItems<ReplicaSet>(client, collectionPath(type, namespace), { labelSelector: labels ? selectorFromLabels(labels) : undefined }) };
    }
    case 'ReplicaSet': {
      const labels = object.spec.selector.matchLabels;
      const pods = await listItems<Pod>(client, collectionPath(resources.forGroupKind('', 'Pod'), namespace), { labelSelector: labels ? selectorFromLabels(labels) : undefined });
      return { pods: pods.filter((p) => (p.metadata.ownerReferences ?? []).some((o) => o.controller && (o.uid === object.metadata.uid || o.name === object.metadata.name))) };
    }
    case 'Service': {
      try {
        return { endpoints: await client.get<Endpoints>(objectPath(resources.forGroupKind('', 'Endpoints'), namespace, object.metadata.name)) };
      } catch (error) {
        if (error instanceof ApiError) return {};
        throw error;
      }
    }
    case 'Node':
      return { pods: await listItems<Pod>(client, collectionPath(resources.forGroupKind('', 'Pod'), undefined), { fieldSelector: `spec.nodeName=${object.metadata.name}` }) };
    default:
      return {};
  }
};

/** Registers `describe`. */
export const registerDescribe = (program: Command): void => {
  const command = program
    .command('describe')
    .description('Show details of an object, or of every object of a kind')
    .argument('<resource...>', 'KIND [NAME...] or KIND/NAME')
    .option('-l, --selector <selector>', 'label selector (describes every match)')
    .option('-A, --all-namespaces', 'with no name: across all namespaces');
  withNamespaceOption(command);
  withConnectionOptions(command);
  command.action(
    action(async (cmd) => {
      const args = cmd.processedArgs[0] as string[];
      const options = optionsOf<{ selector?: string; allNamespaces?: boolean }>(cmd);
      const session = connect(cmd);
      const resources = await session.resources();
      const targets: { type: ResourceType; name?: string }[] = [];
      if (args[0]?.includes('/')) {
        for (const arg of args) {
          const slash = arg.indexOf('/');
          if (slash < 0) throw new Error(`expected KIND/NAME, got ${JSON.stringify(arg)}`);
          targets.push({ type: resources.resolve(arg.slice(0, slash)), name: arg.slice(slash + 1) });
        }
      } else {
        const type = resources.resolve(args[0]!);
        if (args.length > 1) for (const name of args.slice(1)) targets.push({ type, name });
        else targets.push({ type });
      }
      const objects: KubeObject[] = [];
      let failures = 0;
      for (const target of targets) {
        try {
          if (target.name !== undefined) {
            objects.push(withTypeMeta(target.type, await session.client.get<KubeObject>(objectPath(target.type, session.namespace, target.name))));
          } else {
            const list = await session.client.get<{ items?: KubeObject[] }>(collectionPath(target.type, options.allNamespaces ? undefined : session.namespace), {
              labelSelector: options.selector,
            });
            objects.push(...(list.items ?? []).map((o) => withTypeMeta(target.type, o)));
          }
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          printError(error);
          failures++;
        }
      }
      const texts: string[] = [];
      for (const object of objects) texts.push(describeObject(object, await fetchRelated(session.client, resources, object)));
      out(texts.join('\n'));
      if (objects.length === 0 && failures === 0) process.stderr.write(`No resources found in ${session.namespace} namespace.\n`);
      if (failures > 0) throw new ReportedError(failures);
    }),
  );
};
