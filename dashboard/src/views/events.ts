/**
 * An object's Kubernetes Events (core/v1, from the Events API) on its page: a list + watch
 * of the Events whose involvedObject is the object (no polling); at a past moment, the
 * Events as they were there (`/logplane/v1/at`).
 */
import type { KubeObject } from '../api.ts';
import { h, replace } from '../dom.ts';
import { eventRows, eventsSelector, type Involved } from '../events-model.ts';
import { liveList } from '../live.ts';
import { objectsAt } from '../moment.ts';

const render = (target: HTMLElement, events: readonly KubeObject[], involved: Involved): void => {
  const rows = eventRows(events, involved);
  replace(
    target,
    h('h3', {}, 'Events'),
    rows.length === 0
      ? h('p', { class: 'empty', 'data-testid': 'no-events' }, 'No Events about this object.')
      : h(
          'table',
          { class: 'events', 'data-testid': 'events' },
          h('thead', {}, h('tr', {}, ['LAST SEEN', 'TYPE', 'REASON', 'FROM', 'COUNT', 'MESSAGE'].map((t) => h('th', {}, t)))),
          h(
            'tbody',
            {},
            rows.map((row) =>
              h(
                'tr',
                { class: row.type === 'Warning' ? 'warning' : '', 'data-reason': row.reason },
                h('td', {}, row.lastSeen > 0 ? new Date(row.lastSeen).toISOString() : ''),
                h('td', {}, row.type),
                h('td', {}, row.reason),
                h('td', {}, row.from),
                h('td', {}, String(row.count)),
                h('td', {}, row.message),
              ),
            ),
          ),
        ),
  );
};

/**
 * Shows the Events about `involved` in `target`: watched when `at` is undefined, else as they
 * were at `at`. Returns the cleanup (ends the watch).
 */
export const showEvents = (target: HTMLElement, involved: Involved, at: string | undefined, onError: (error: Error) => void): (() => void) => {
  if (at !== undefined) {
    // Events of a cluster-scoped object are recorded in any namespace ("default" mostly): read them all.
    objectsAt(at, 'Event', involved.namespace || undefined)
      .then((reply) => render(target, reply.objects, involved))
      .catch(onError);
    return () => undefined;
  }
  const collection = involved.namespace ? `/api/v1/namespaces/${encodeURIComponent(involved.namespace)}/events` : '/api/v1/events';
  const live = liveList(`${collection}?fieldSelector=${encodeURIComponent(eventsSelector(involved))}`, (events) => render(target, events, involved), onError);
  return () => live.stop();
};
