/**
 * The columns of the tables, per kind (what `kubectl get` prints), computed from the objects
 * themselves so that a table of the past (objects from `/logplane/v1/at`) reads the same as
 * a live one. A kind without columns here gets NAME and AGE.
 */
import type { KubeObject } from './api.ts';

export interface Column {
  readonly title: string;
  /** The cell's text; `now` is the moment the table shows (the past when time travelling). */
  readonly value: (object: KubeObject, now: number) => string;
}

type Fields = Record<string, unknown>;

const field = (object: unknown, ...path: string[]): unknown => {
  let current: unknown = object;
  for (const step of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Fields)[step];
  }
  return current;
};

const list = (value: unknown): Fields[] => (Array.isArray(value) ? value.filter((v): v is Fields => typeof v === 'object' && v !== null) : []);

const text = (value: unknown, fallback = '<none>'): string => (value === undefined || value === null || value === '' ? fallback : String(value));

const num = (value: unknown): number => (typeof value === 'number' ? value : 0);

/** kubectl's human age: 45s, 3m10s, 5h, 2d. */
export const age = (from: string | undefined, now: number): string => {
  if (!from) return '<unknown>';
  const seconds = Math.max(0, Math.floor((now - Date.parse(from)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h`;
  return `${Math.floor(hours / 24)}d`;
};

/** A Pod's STATUS as kubectl prints it: a waiting or terminated reason, else the phase. */
export const podStatus = (pod: KubeObject): string => {
  if (pod.metadata.deletionTimestamp) return 'Terminating';
  for (const container of list(field(pod, 'status', 'containerStatuses'))) {
    const waiting = field(container, 'state', 'waiting', 'reason');
    if (typeof waiting === 'string' && waiting !== '') return waiting;
    const terminated = field(container, 'state', 'terminated', 'reason');
    if (typeof terminated === 'string' && terminated !== '') return terminated;
  }
  return text(field(pod, 'status', 'phase'), 'Pending');
};

/** The status of a condition (`Ready`) in `status.conditions`. */
export const condition = (object: KubeObject, type: string): string | undefined =>
  list(field(object, 'status', 'conditions')).find((c) => c['type'] === type)?.['status'] as string | undefined;

const NAME: Column = { title: 'NAME', value: (o) => o.metadata.name };
const NAMESPACE: Column = { title: 'NAMESPACE', value: (o) => o.metadata.namespace ?? '' };
const AGE: Column = { title: 'AGE', value: (o, now) => age(o.metadata.creationTimestamp, now) };

const images = (template: unknown): string =>
  list(field(template, 'spec', 'containers'))
    .map((c) => text(c['image'], ''))
    .join(',');

const BY_KIND: Readonly<Record<string, readonly Column[]>> = {
  Pod: [
    NAME,
    {
      title: 'READY',
      value: (o) => {
        const statuses = list(field(o, 'status', 'containerStatuses'));
        const total = list(field(o, 'spec', 'containers')).length;
        return `${statuses.filter((s) => s['ready'] === true).length}/${total}`;
      },
    },
    { title: 'STATUS', value: podStatus },
    { title: 'RESTARTS', value: (o) => String(list(field(o, 'status', 'containerStatuses')).reduce((sum, s) => sum + num(s['restartCount']), 0)) },
    { title: 'NODE', value: (o) => text(field(o, 'spec', 'nodeName')) },
    { title: 'IP', value: (o) => text(field(o, 'status', 'podIP')) },
    AGE,
  ],
  Deployment: [
    NAME,
    { title: 'READY', value: (o) => `${num(field(o, 'status', 'readyReplicas'))}/${num(field(o, 'spec', 'replicas'))}` },
    { title: 'UP-TO-DATE', value: (o) => String(num(field(o, 'status', 'updatedReplicas'))) },
    { title: 'AVAILABLE', value: (o) => String(num(field(o, 'status', 'availableReplicas'))) },
    { title: 'IMAGES', value: (o) => images(field(o, 'spec', 'template')) },
    AGE,
  ],
  ReplicaSet: [
    NAME,
    { title: 'DESIRED', value: (o) => String(num(field(o, 'spec', 'replicas'))) },
    { title: 'CURRENT', value: (o) => String(num(field(o, 'status', 'replicas'))) },
    { title: 'READY', value: (o) => String(num(field(o, 'status', 'readyReplicas'))) },
    { title: 'IMAGES', value: (o) => images(field(o, 'spec', 'template')) },
    AGE,
  ],
  Service: [
    NAME,
    { title: 'TYPE', value: (o) => text(field(o, 'spec', 'type'), 'ClusterIP') },
    { title: 'CLUSTER-IP', value: (o) => text(field(o, 'spec', 'clusterIP')) },
    {
      title: 'PORT(S)',
      value: (o) =>
        list(field(o, 'spec', 'ports'))
          .map((p) => `${text(p['port'], '')}/${text(p['protocol'], 'TCP')}`)
          .join(',') || '<none>',
    },
    AGE,
  ],
  Endpoints: [
    NAME,
    {
      title: 'ENDPOINTS',
      value: (o) => {
        const addresses = list(field(o, 'subsets')).flatMap((s) =>
          list(s['addresses']).flatMap((a) => list(s['ports']).map((p) => `${text(a['ip'], '')}:${text(p['port'], '')}`)),
        );
        return addresses.join(',') || '<none>';
      },
    },
    AGE,
  ],
  Node: [
    NAME,
    {
      title: 'STATUS',
      value: (o) => {
        const ready = condition(o, 'Ready');
        const status = ready === 'True' ? 'Ready' : ready === undefined ? 'Unknown' : 'NotReady';
        return field(o, 'spec', 'unschedulable') === true ? `${status},SchedulingDisabled` : status;
      },
    },
    AGE,
  ],
  Namespace: [NAME, { title: 'STATUS', value: (o) => text(field(o, 'status', 'phase'), 'Active') }, AGE],
};

/** The columns of a table of `kind`, with NAMESPACE first when it shows all namespaces of a namespaced kind. */
export const columnsFor = (kind: string, withNamespace: boolean): readonly Column[] => {
  const columns = BY_KIND[kind] ?? [NAME, AGE];
  return withNamespace ? [NAMESPACE, ...columns] : columns;
};
