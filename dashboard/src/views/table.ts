/**
 * A table of one resource: live (list + watch) in the present, the objects at the moment
 * when time travelling.
 */
import type { KubeObject } from '../api.ts';
import { columnsFor } from '../columns.ts';
import { h, replace } from '../dom.ts';
import { liveList } from '../live.ts';
import { momentMillis, objectsAt, pastMoment } from '../moment.ts';
import { collectionPath, kindRefOfResource, routeNameOf, type Resource } from '../resources.ts';
import { link } from '../route.ts';

/** The fragment of an object's page. */
export const objectLink = (resource: Resource, object: KubeObject): string =>
  link(['object', routeNameOf(resource), object.metadata.namespace ?? '_', object.metadata.name]);

const render = (container: HTMLElement, resource: Resource, objects: readonly KubeObject[], allNamespaces: boolean, now: number): void => {
  const columns = columnsFor(resource.kind, allNamespaces && resource.namespaced);
  const rows = objects.map((object) =>
    h(
      'tr',
      { 'data-name': object.metadata.name, 'data-namespace': object.metadata.namespace ?? '' },
      columns.map((column, index) => {
        const value = column.value(object, now);
        const cell = index === (allNamespaces && resource.namespaced ? 1 : 0) ? h('a', { href: objectLink(resource, object) }, value) : value;
        return h('td', { 'data-column': column.title }, cell);
      }),
    ),
  );
  replace(
    container,
    h(
      'table',
      { class: 'objects', 'data-resource': resource.plural },
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', {}, c.title)))),
      h('tbody', {}, rows),
    ),
    objects.length === 0 ? h('p', { class: 'empty' }, `No ${resource.plural}.`) : null,
  );
};

/** Shows the table of `resource` in `namespace` ('' for all) in `container`; returns its cleanup. */
export const showTable = (container: HTMLElement, resource: Resource, namespace: string): (() => void) => {
  const title = h('h2', {}, resource.kind === 'Namespace' ? 'Namespaces' : `${resource.plural}${resource.namespaced ? ` in ${namespace || 'all namespaces'}` : ''}`);
  const status = h('p', { class: 'status' });
  const body = h('div', {});
  replace(container, title, status, body);
  const at = pastMoment();
  if (at !== undefined) {
    objectsAt(at, kindRefOfResource(resource), resource.namespaced ? namespace : undefined)
      .then((reply) => {
        status.textContent = `as it was at position ${reply.position}`;
        status.dataset['position'] = reply.position;
        render(body, resource, reply.objects, namespace === '', momentMillis(at) ?? Date.now());
      })
      .catch((error: Error) => {
        status.textContent = `cannot show ${resource.plural} at ${at}: ${error.message}`;
        status.classList.add('error');
      });
    return () => undefined;
  }
  status.textContent = 'live';
  const live = liveList(
    collectionPath(resource, namespace),
    (objects) => {
      status.textContent = 'live';
      status.classList.remove('error');
      render(body, resource, objects, namespace === '', Date.now());
    },
    (error) => {
      status.textContent = `reconnecting: ${error.message}`;
      status.classList.add('error');
    },
  );
  return () => live.stop();
};
