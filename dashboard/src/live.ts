/**
 * Live lists, as client-go's informers keep them: list, then watch from the list's
 * resourceVersion; a watch that ends is resumed from the last version seen, one answered
 * with 410 Gone is re-listed. No polling.
 */
import { ApiRequestError, get, streamLines, type KubeList, type KubeObject, type WatchEvent } from './api.ts';

/** A running live list; `stop` ends its watch. */
export interface LiveList {
  stop(): void;
}

const keyOf = (object: KubeObject): string => `${object.metadata.namespace ?? ''}/${object.metadata.name}`;

const withQuery = (path: string, query: Readonly<Record<string, string>>): string => {
  const params = new URLSearchParams(query).toString();
  return `${path}${path.includes('?') ? '&' : '?'}${params}`;
};

/**
 * Keeps the objects of collection `path` (e.g. `/api/v1/namespaces/default/pods`) and calls
 * `onChange` with all of them, sorted by namespace and name, after the list and after every
 * watch event. `onError` gets failures; the list retries with a growing delay.
 */
export const liveList = (path: string, onChange: (objects: readonly KubeObject[]) => void, onError: (error: Error) => void): LiveList => {
  const controller = new AbortController();
  const objects = new Map<string, KubeObject>();
  const publish = (): void => {
    onChange([...objects.values()].sort((a, b) => keyOf(a).localeCompare(keyOf(b))));
  };
  const run = async (): Promise<void> => {
    let resourceVersion: string | undefined;
    let retryMs = 500;
    while (!controller.signal.aborted) {
      try {
        if (resourceVersion === undefined) {
          const list = await get<KubeList>(path, controller.signal);
          objects.clear();
          for (const item of list.items) objects.set(keyOf(item), item);
          resourceVersion = list.metadata.resourceVersion ?? '';
          publish();
        }
        let expired = false;
        await streamLines(
          'GET',
          withQuery(path, { watch: '1', resourceVersion: resourceVersion ?? '', allowWatchBookmarks: 'true' }),
          (line) => {
            const event = JSON.parse(line) as WatchEvent;
            if (event.type === 'ERROR') {
              expired = event.object.code === 410;
              return;
            }
            resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion;
            if (event.type === 'BOOKMARK') return;
            if (event.type === 'DELETED') objects.delete(keyOf(event.object));
            else objects.set(keyOf(event.object), event.object);
            publish();
          },
          controller.signal,
        );
        if (expired) resourceVersion = undefined;
        retryMs = 500;
      } catch (error) {
        if (controller.signal.aborted) return;
        if (error instanceof ApiRequestError && error.code === 410) resourceVersion = undefined;
        onError(error instanceof Error ? error : new Error(String(error)));
        await new Promise((resolve) => setTimeout(resolve, retryMs));
        retryMs = Math.min(retryMs * 2, 10_000);
      }
    }
  };
  void run();
  return { stop: () => controller.abort() };
};
