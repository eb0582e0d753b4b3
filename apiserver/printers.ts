/**
 * The Table rows of the kinds served without a controller of their own yet, after
 * kube's printers (pkg/printers/internalversion/printers.go): the cells of each kind's
 * columns, which come from the kind registry (`printerColumns`, kube's own column
 * definitions), in the same order.
 */
import type { Kind, LabelSelector, ObjectOfKind, PodTemplateSpec } from '../schemas/index.ts';
import { storedKind } from '../schemas/kinds/registry.ts';
import { age, humanDuration, labelSelectorText, type TableCell, type TableColumnDefinition } from './tables.ts';

type Row<K extends Kind> = (object: ObjectOfKind<K>, now: number) => TableCell[];

const none = (value: string | undefined): string => (value ? value : '<none>');
const unset = (value: string | undefined): string => (value ? value : '<unset>');
const count = (map: Readonly<Record<string, unknown>> | undefined): number => Object.keys(map ?? {}).length;
const labels = (map: Readonly<Record<string, string>> | undefined): string =>
  none(Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join(','));
const bool = (value: boolean | undefined): string => (value ? 'true' : 'false');
const createdAt = (timestamp: string | undefined): string => timestamp ?? '<unknown>';
const selectorText = (selector: LabelSelector | undefined): string => (selector ? labelSelectorText(selector) : '<none>');

const template = (spec: PodTemplateSpec | undefined): [string, string] => {
  const containers = spec?.spec.containers ?? [];
  return [containers.map((c) => c.name).join(','), containers.map((c) => c.image ?? '').join(',')];
};

const ACCESS_MODES: Readonly<Record<string, string>> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };
const accessModes = (modes: readonly string[] | undefined): string => (modes ?? []).map((mode) => ACCESS_MODES[mode] ?? mode).join(',');

const sinceOrNone = (timestamp: string | undefined, now: number): string => (timestamp ? age(timestamp, now) : '<none>');

/** The rows of every kind with a printer here. */
export const ROWS: { readonly [K in Kind]?: Row<K> } = {
  ConfigMap: (o, now) => [o.metadata.name, count(o.data) + count(o.binaryData), age(o.metadata.creationTimestamp, now)],
  Secret: (o, now) => [o.metadata.name, o.type ?? 'Opaque', count(o.data), age(o.metadata.creationTimestamp, now)],
  ServiceAccount: (o, now) => [o.metadata.name, (o.secrets ?? []).length, age(o.metadata.creationTimestamp, now)],
  LimitRange: (o) => [o.metadata.name, createdAt(o.metadata.creationTimestamp)],
  Role: (o) => [o.metadata.name, createdAt(o.metadata.creationTimestamp)],
  ClusterRole: (o) => [o.metadata.name, createdAt(o.metadata.creationTimestamp)],
  RoleBinding: (o, now) => bindingRow(o, now),
  ClusterRoleBinding: (o, now) => bindingRow(o, now),
  PersistentVolumeClaim: (o, now) => [
    o.metadata.name,
    o.metadata.deletionTimestamp ? 'Terminating' : (o.status?.phase ?? 'Pending'),
    o.spec?.volumeName ?? '',
    o.status?.phase === 'Bound' ? (o.status.capacity?.['storage'] ?? '') : '',
    o.status?.phase === 'Bound' ? accessModes(o.status.accessModes) : '',
    o.spec?.storageClassName ?? o.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? '',
    unset(o.spec?.volumeAttributesClassName),
    age(o.metadata.creationTimestamp, now),
    unset(o.spec?.volumeMode),
  ],
  PersistentVolume: (o, now) => [
    o.metadata.name,
    o.spec?.capacity?.['storage'] ?? '',
    accessModes(o.spec?.accessModes),
    o.spec?.persistentVolumeReclaimPolicy ?? '',
    o.metadata.deletionTimestamp ? 'Terminating' : (o.status?.phase ?? ''),
    o.spec?.claimRef ? `${o.spec.claimRef.namespace ?? ''}/${o.spec.claimRef.name ?? ''}` : '',
    o.spec?.storageClassName ?? '',
    unset(o.spec?.volumeAttributesClassName),
    o.status?.reason ?? '',
    age(o.metadata.creationTimestamp, now),
    unset(o.spec?.volumeMode),
  ],
  PodTemplate: (o) => [o.metadata.name, ...template(o.template), labels(o.template?.metadata?.labels)],
  ReplicationController: (o, now) => [
    o.metadata.name,
    o.spec?.replicas ?? 1,
    o.status?.replicas ?? 0,
    o.status?.readyReplicas ?? 0,
    age(o.metadata.creationTimestamp, now),
    ...template(o.spec?.template),
    labels(o.spec?.selector),
  ],
  ResourceQuota: (o, now) => {
    const hard = o.status?.hard ?? o.spec?.hard ?? {};
    const used = o.status?.used ?? {};
    const entries = Object.keys(hard).sort().map((name) => ({ name, text: `${name}: ${used[name] ?? '0'}/${hard[name]}` }));
    return [
      o.metadata.name,
      age(o.metadata.creationTimestamp, now),
      entries.filter((e) => !e.name.startsWith('limits.')).map((e) => e.text).join(', '),
      entries.filter((e) => e.name.startsWith('limits.')).map((e) => e.text).join(', '),
    ];
  },
  ControllerRevision: (o, now) => {
    const owner = (o.metadata.ownerReferences ?? []).find((ref) => ref.controller);
    const group = owner?.apiVersion.includes('/') ? owner.apiVersion.slice(0, owner.apiVersion.indexOf('/')) : '';
    return [o.metadata.name, owner ? `${owner.kind.toLowerCase()}${group ? `.${group}` : ''}/${owner.name}` : '<none>', o.revision, age(o.metadata.creationTimestamp, now)];
  },
  DaemonSet: (o, now) => [
    o.metadata.name,
    o.status?.desiredNumberScheduled ?? 0,
    o.status?.currentNumberScheduled ?? 0,
    o.status?.numberReady ?? 0,
    o.status?.updatedNumberScheduled ?? 0,
    o.status?.numberAvailable ?? 0,
    labels(o.spec?.template.spec.nodeSelector),
    age(o.metadata.creationTimestamp, now),
    ...template(o.spec?.template),
    selectorText(o.spec?.selector),
  ],
  StatefulSet: (o, now) => [o.metadata.name, `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`, age(o.metadata.creationTimestamp, now), ...template(o.spec?.template)],
  Job: (o, now) => {
    const conditions = o.status?.conditions ?? [];
    const has = (type: string): boolean => conditions.some((c) => c.type === type && c.status === 'True');
    const status = has('Failed') ? 'Failed' : has('Complete') ? 'Complete' : has('Suspended') ? 'Suspended' : has('FailureTarget') ? 'FailureTarget' : has('SuccessCriteriaMet') ? 'SuccessCriteriaMet' : 'Running';
    const completions = o.spec?.completions !== undefined ? `${o.status?.succeeded ?? 0}/${o.spec.completions}` : `${o.status?.succeeded ?? 0}/1 of ${o.spec?.parallelism ?? 1}`;
    const start = o.status?.startTime ? Date.parse(o.status.startTime) : undefined;
    const end = o.status?.completionTime ? Date.parse(o.status.completionTime) : now;
    return [o.metadata.name, status, completions, start === undefined ? '' : humanDuration(end - start), age(o.metadata.creationTimestamp, now), ...template(o.spec?.template), selectorText(o.spec?.selector)];
  },
  CronJob: (o, now) => [
    o.metadata.name,
    o.spec?.schedule ?? '',
    none(o.spec?.timeZone),
    o.spec?.suspend ? 'True' : 'False',
    (o.status?.active ?? []).length,
    sinceOrNone(o.status?.lastScheduleTime, now),
    age(o.metadata.creationTimestamp, now),
    ...template(o.spec?.jobTemplate.spec?.template),
    selectorText(o.spec?.jobTemplate.spec?.selector),
  ],
  HorizontalPodAutoscaler: (o, now) => [
    o.metadata.name,
    o.spec ? `${o.spec.scaleTargetRef.kind}/${o.spec.scaleTargetRef.name}` : '',
    hpaTargets(o),
    o.spec?.minReplicas ?? 1,
    o.spec?.maxReplicas ?? 0,
    o.status?.currentReplicas ?? 0,
    age(o.metadata.creationTimestamp, now),
  ],
  CertificateSigningRequest: (o, now) => {
    const conditions = (o.status?.conditions ?? []).map((c) => c.type);
    return [
      o.metadata.name,
      age(o.metadata.creationTimestamp, now),
      o.spec.signerName,
      o.spec.username ?? '',
      o.spec.expirationSeconds !== undefined ? humanDuration(o.spec.expirationSeconds * 1000) : '<none>',
      conditions.length === 0 ? 'Pending' : conditions.join(','),
    ];
  },
  IngressClass: (o, now) => [
    o.metadata.name,
    o.spec?.controller ?? '',
    o.spec?.parameters ? `${o.spec.parameters.kind}/${o.spec.parameters.name}` : '<none>',
    age(o.metadata.creationTimestamp, now),
  ],
  Ingress: (o, now) => {
    const hosts = (o.spec?.rules ?? []).map((rule) => rule.host ?? '*');
    const addresses = (o.status?.loadBalancer?.ingress ?? []).map((entry) => entry.ip ?? entry.hostname ?? '');
    return [o.metadata.name, none(o.spec?.ingressClassName), hosts.length > 0 ? hosts.join(',') : '*', addresses.join(','), (o.spec?.tls ?? []).length > 0 ? '80, 443' : '80', age(o.metadata.creationTimestamp, now)];
  },
  NetworkPolicy: (o, now) => {
    const selector = o.spec?.podSelector;
    const text = selector && (count(selector.matchLabels) > 0 || (selector.matchExpressions ?? []).length > 0) ? labelSelectorText(selector) : '<none>';
    return [o.metadata.name, text, age(o.metadata.creationTimestamp, now)];
  },
  PodDisruptionBudget: (o, now) => [
    o.metadata.name,
    o.spec?.minAvailable !== undefined ? String(o.spec.minAvailable) : 'N/A',
    o.spec?.maxUnavailable !== undefined ? String(o.spec.maxUnavailable) : 'N/A',
    o.status?.disruptionsAllowed ?? 0,
    age(o.metadata.creationTimestamp, now),
  ],
  CSIDriver: (o, now) => [
    o.metadata.name,
    bool(o.spec.attachRequired),
    bool(o.spec.podInfoOnMount),
    bool(o.spec.storageCapacity),
    (o.spec.tokenRequests ?? []).length > 0 ? (o.spec.tokenRequests ?? []).map((t) => t.audience).join(',') : '<unset>',
    bool(o.spec.requiresRepublish),
    (o.spec.volumeLifecycleModes ?? []).join(','),
    age(o.metadata.creationTimestamp, now),
  ],
  CSINode: (o, now) => [o.metadata.name, o.spec.drivers.length, age(o.metadata.creationTimestamp, now)],
  StorageClass: (o, now) => {
    const isDefault = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'].some((key) => o.metadata.annotations?.[key] === 'true');
    return [
      isDefault ? `${o.metadata.name} (default)` : o.metadata.name,
      o.provisioner,
      o.reclaimPolicy ?? 'Delete',
      o.volumeBindingMode ?? 'Immediate',
      bool(o.allowVolumeExpansion),
      age(o.metadata.creationTimestamp, now),
    ];
  },
  VolumeAttachment: (o, now) => [o.metadata.name, o.spec.attacher, o.spec.source.persistentVolumeName ?? '', o.spec.nodeName, bool(o.status?.attached), age(o.metadata.creationTimestamp, now)],
  MutatingWebhookConfiguration: (o, now) => [o.metadata.name, (o.webhooks ?? []).length, age(o.metadata.creationTimestamp, now)],
  ValidatingWebhookConfiguration: (o, now) => [o.metadata.name, (o.webhooks ?? []).length, age(o.metadata.creationTimestamp, now)],
  ValidatingAdmissionPolicy: (o, now) => [
    o.metadata.name,
    (o.spec?.validations ?? []).length,
    o.spec?.paramKind ? `${o.spec.paramKind.apiVersion ?? ''}/${o.spec.paramKind.kind ?? ''}` : '<unset>',
    age(o.metadata.creationTimestamp, now),
  ],
  ValidatingAdmissionPolicyBinding: (o, now) => [o.metadata.name, o.spec?.policyName ?? '', unset(o.spec?.paramRef?.name), age(o.metadata.creationTimestamp, now)],
  PriorityClass: (o, now) => [o.metadata.name, o.value, bool(o.globalDefault), age(o.metadata.creationTimestamp, now), o.preemptionPolicy ?? 'PreemptLowerPriority'],
  Lease: (o, now) => [o.metadata.name, o.spec?.holderIdentity ?? '', age(o.metadata.creationTimestamp, now)],
  RuntimeClass: (o, now) => [o.metadata.name, o.handler, age(o.metadata.creationTimestamp, now)],
  EndpointSlice: (o, now) => {
    const ports = (o.ports ?? []).map((port) => String(port.port ?? ''));
    const addresses = o.endpoints.flatMap((endpoint) => endpoint.addresses);
    const shown = addresses.slice(0, 3).join(',');
    return [
      o.metadata.name,
      o.addressType,
      ports.length > 0 ? ports.join(',') : '<unset>',
      addresses.length === 0 ? '<unset>' : addresses.length > 3 ? `${shown} + ${addresses.length - 3} more...` : shown,
      age(o.metadata.creationTimestamp, now),
    ];
  },
  Event: (o, now) => {
    const last = o.lastTimestamp ?? o.eventTime ?? o.metadata.creationTimestamp;
    const first = o.firstTimestamp ?? o.eventTime ?? o.metadata.creationTimestamp;
    const involved = o.involvedObject;
    return [
      age(last, now),
      o.type ?? '',
      o.reason ?? '',
      `${(involved.kind ?? '').toLowerCase()}/${involved.name ?? ''}`,
      involved.fieldPath ?? '',
      [o.source?.component ?? o.reportingComponent, o.source?.host ?? o.reportingInstance].filter((part) => part).join(', '),
      (o.message ?? '').trim(),
      age(first, now),
      o.count ?? o.series?.count ?? 1,
      o.metadata.name,
    ];
  },
};

const bindingRow = (o: ObjectOfKind<'RoleBinding'> | ObjectOfKind<'ClusterRoleBinding'>, now: number): TableCell[] => {
  const subjects = o.subjects ?? [];
  const of = (kind: string): string => subjects.filter((s) => s.kind === kind).map((s) => (kind === 'ServiceAccount' ? `${s.namespace ?? ''}:${s.name}` : s.name)).join(', ');
  return [o.metadata.name, `${o.roleRef.kind}/${o.roleRef.name}`, age(o.metadata.creationTimestamp, now), of('User'), of('Group'), of('ServiceAccount')];
};

/** kube's `formatHPAMetrics`: "<metric>: <current>/<target>" for the first two metrics, "<unknown>" until the controller measured. */
const hpaTargets = (o: ObjectOfKind<'HorizontalPodAutoscaler'>): string => {
  const metrics = o.spec?.metrics ?? [];
  if (metrics.length === 0) return '<none>';
  const statuses = o.status?.currentMetrics ?? [];
  const parts = metrics.map((metric, i) => {
    const status = statuses[i];
    const resource = metric.type === 'Resource' ? metric.resource : metric.type === 'ContainerResource' ? metric.containerResource : undefined;
    if (!resource) return '<unknown>/<unknown>';
    const current = metric.type === 'Resource' ? status?.resource?.current : status?.containerResource?.current;
    const target = resource.target;
    if (target.averageValue !== undefined) return `${resource.name}: ${current?.averageValue ?? '<unknown>'}/${target.averageValue}`;
    const utilization = current?.averageUtilization !== undefined ? `${current.averageUtilization}%` : '<unknown>';
    return `${resource.name}: ${utilization}/${target.averageUtilization !== undefined ? `${target.averageUtilization}%` : '<auto>'}`;
  });
  return parts.length > 2 ? `${parts.slice(0, 2).join(', ')} + ${parts.length - 2} more...` : parts.join(', ');
};

/** The columns of a kind as the registry has them (kube's printer column definitions). */
export const registryColumns = (kind: Kind): readonly TableColumnDefinition[] =>
  (storedKind(kind)?.printerColumns ?? []).map((column) => ({
    name: column.name,
    type: column.type,
    format: column.format ?? '',
    description: column.description,
    priority: column.priority,
  }));
