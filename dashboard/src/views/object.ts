/**
 * An object's page: status and conditions, YAML, owners and children, its Kubernetes Events
 * (watched), its history (every event of the log that touched it, with who and the verdict),
 * and a Pod's log, followed. Live in the present; at a past moment, the object as it was there.
 */
import { stringify } from 'yaml';
import { get, streamLines, type KubeObject } from '../api.ts';
import { h, replace } from '../dom.ts';
import { liveList } from '../live.ts';
import { objectsAt, pastMoment } from '../moment.ts';
import { collectionPath, kindRefOfResource, resourceOfOwner, routeNameOf, type Resource } from '../resources.ts';
import { link } from '../route.ts';
import type { Version } from '../timeline-model.ts';
import { showEvents } from './events.ts';
import { objectLink } from './table.ts';

type Fields = Record<string, unknown>;

/** The history API's key path of an object: `Kind/namespace-or-_/name`. */
export const historyPath = (kind: string, namespace: string, name: string): string =>
  [kind, namespace || '_', name].map(encodeURIComponent).join('/');

const conditionsTable = (object: KubeObject): HTMLElement | null => {
  const conditions = (object.status?.['conditions'] ?? []) as readonly Fields[];
  if (!Array.isArray(conditions) || conditions.length === 0) return null;
  return h(
    'table',
    { class: 'conditions' },
    h('thead', {}, h('tr', {}, ['TYPE', 'STATUS', 'REASON', 'MESSAGE', 'LAST TRANSITION'].map((t) => h('th', {}, t)))),
    h(
      'tbody',
      {},
      conditions.map((c) =>
        h('tr', {}, [c['type'], c['status'], c['reason'], c['message'], c['lastTransitionTime']].map((v) => h('td', {}, v === undefined ? '' : String(v)))),
      ),
    ),
  );
};

const renderObject = (target: HTMLElement, object: KubeObject | undefined, resources: readonly Resource[]): void => {
  if (!object) {
    replace(target, h('p', { class: 'empty', 'data-testid': 'absent' }, 'The object does not exist at this moment.'));
    return;
  }
  const owners = object.metadata.ownerReferences ?? [];
  const phase = object.status?.['phase'];
  replace(
    target,
    h('h3', {}, 'Status'),
    typeof phase === 'string' ? h('p', {}, 'Phase: ', h('strong', { 'data-testid': 'phase' }, phase)) : null,
    conditionsTable(object),
    owners.length > 0
      ? h(
          'p',
          { class: 'owners' },
          'Owned by: ',
          owners.map((owner) => {
            const resource = resourceOfOwner(resources, owner);
            return resource ? h('a', { href: link(['object', routeNameOf(resource), object.metadata.namespace ?? '_', owner.name]) }, `${owner.kind}/${owner.name}`) : `${owner.kind}/${owner.name}`;
          }),
        )
      : null,
    h('h3', {}, 'YAML'),
    h('pre', { class: 'yaml', 'data-testid': 'yaml' }, stringify(object)),
  );
};

const renderChildren = async (target: HTMLElement, object: KubeObject, resources: readonly Resource[], at: string | undefined): Promise<void> => {
  const uid = object.metadata.uid;
  const namespace = object.metadata.namespace ?? '';
  if (!uid) return;
  const found: { resource: Resource; object: KubeObject }[] = [];
  for (const resource of resources.filter((r) => r.namespaced === (namespace !== ''))) {
    const items = at !== undefined
      ? (await objectsAt(at, kindRefOfResource(resource), namespace || undefined).catch(() => ({ objects: [] as KubeObject[] }))).objects
      : (await get<{ items: KubeObject[] }>(collectionPath(resource, namespace)).catch(() => ({ items: [] as KubeObject[] }))).items;
    for (const item of items) if (item.metadata.ownerReferences?.some((o) => o.uid === uid)) found.push({ resource, object: item });
  }
  replace(
    target,
    found.length === 0 ? null : h('h3', {}, 'Owns'),
    found.length === 0 ? null : h('ul', { class: 'children' }, found.map((c) => h('li', {}, h('a', { href: objectLink(c.resource, c.object) }, `${c.resource.kind}/${c.object.metadata.name}`)))),
  );
};

const describeChange = (version: Version & { diff?: readonly { path: string }[] }): string =>
  version.verdict.type === 'rejected' ? `rejected: ${version.verdict.message}` : (version.diff ?? []).map((d) => d.path).slice(0, 6).join(', ');

/** The object's history, newest first; the row that made the version a past page shows (its `resourceVersion`) is marked. */
const renderHistory = async (target: HTMLElement, resource: Resource, namespace: string, name: string, shownVersion?: string): Promise<void> => {
  const { versions } = await get<{ versions: (Version & { diff: readonly { path: string }[] })[] }>(`/logplane/v1/history/${historyPath(kindRefOfResource(resource), namespace, name)}`);
  const shown = shownVersion === undefined ? undefined : [...versions].reverse().find((v) => v.verdict.type === 'accepted' && v.object?.metadata.resourceVersion === shownVersion);
  replace(
    target,
    h('h3', {}, 'History'),
    h(
      'table',
      { class: 'history' },
      h('thead', {}, h('tr', {}, ['TIME', 'POSITION', 'ACTOR', 'EVENT', 'VERDICT', 'CHANGED'].map((t) => h('th', {}, t)))),
      h(
        'tbody',
        {},
        [...versions].reverse().map((v) =>
          h(
            'tr',
            { class: `${v.verdict.type}${v === shown ? ' shown' : ''}`, ...(v === shown ? { 'data-testid': 'shown-version' } : {}) },
            h('td', {}, new Date(v.time).toISOString()),
            h('td', {}, h('a', { href: link(['object', routeNameOf(resource), namespace || '_', name], { at: v.position }), title: 'see the cluster at this moment' }, v.position)),
            h('td', {}, `${v.actor.type} ${v.actor.name}`),
            h('td', {}, v.eventType),
            h('td', {}, v.verdict.type),
            h('td', {}, describeChange(v)),
          ),
        ),
      ),
    ),
  );
};

/** Follows a Pod's log into `target` until the returned cleanup runs. */
const followLog = (target: HTMLElement, namespace: string, name: string): (() => void) => {
  const controller = new AbortController();
  const pre = h('pre', { class: 'log', 'data-testid': 'log' });
  replace(target, h('h3', {}, 'Log (following)'), pre);
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/log?follow=true&tailLines=200`;
  streamLines('GET', path, (line) => pre.append(`${line}\n`), controller.signal).catch((error: Error) => {
    if (!controller.signal.aborted) pre.append(`(log unavailable: ${error.message})\n`);
  });
  return () => controller.abort();
};

/** Shows the page of object `name` of `resource` in `container`; returns its cleanup. */
export const showObject = (container: HTMLElement, resources: readonly Resource[], resource: Resource, namespace: string, name: string): (() => void) => {
  const at = pastMoment();
  const status = h('p', { class: 'status' });
  const main = h('div', {});
  const children = h('div', {});
  const events = h('div', { class: 'object-events' });
  const history = h('div', {});
  const logs = h('div', {});
  replace(
    container,
    h('h2', {}, `${resource.kind} `, h('span', { class: 'name' }, namespace ? `${namespace}/${name}` : name)),
    h(
      'p',
      { class: 'actions' },
      h('a', { href: link(['timeline'], { key: `${resource.kind}/${namespace}/${name}`, ns: namespace }) }, 'Timeline'),
      ' · ',
      h('a', { href: link(['why', resource.kind, namespace || '_', name]) }, 'Why'),
    ),
    status,
    main,
    children,
    events,
    history,
    logs,
  );
  const cleanups: (() => void)[] = [];
  const errorText = (error: Error): void => {
    status.textContent = error.message;
    status.classList.add('error');
  };
  if (at === undefined) void renderHistory(history, resource, namespace, name).catch(errorText);
  cleanups.push(showEvents(events, { kind: resource.kind, namespace, name }, at, errorText));
  if (at !== undefined) {
    objectsAt(at, kindRefOfResource(resource), namespace || undefined, name)
      .then((reply) => {
        void renderHistory(history, resource, namespace, name, reply.objects[0]?.metadata.resourceVersion).catch(errorText);
        status.textContent = `as it was at position ${reply.position}`;
        status.dataset['position'] = reply.position;
        const object = reply.objects[0];
        renderObject(main, object, resources);
        if (object) void renderChildren(children, object, resources, at);
      })
      .catch(errorText);
    return () => cleanups.forEach((cleanup) => cleanup());
  }
  status.textContent = 'live';
  let childrenShown = false;
  const live = liveList(
    `${collectionPath(resource, namespace)}?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`,
    (objects) => {
      const object = objects[0];
      renderObject(main, object, resources);
      if (object && !childrenShown) {
        childrenShown = true;
        void renderChildren(children, object, resources, undefined);
      }
    },
    errorText,
  );
  cleanups.push(() => live.stop());
  if (resource.kind === 'Pod' && resource.group === '') cleanups.push(followLog(logs, namespace, name));
  return () => cleanups.forEach((cleanup) => cleanup());
};
