/**
 * The node's side of the `local-path` provisioner (reconcilers/local-path-provisioner):
 * what rancher's local-path-provisioner does with a helper pod on the volume's node, the
 * agent that owns the node's disk does itself.
 *
 * - It says where volumes go: each Node it registers carries `logplane.io/local-path-dir`,
 *   `<data>/<node>/local-path` (the provisioner builds each volume's path under it).
 * - Create: a volume provisioned by `rancher.io/local-path` and pinned to one of its nodes
 *   gets its directory (mode 0777, as rancher's `mkdir -m 0777 -p`) as soon as the volume
 *   exists, before any pod mounts it.
 * - Delete: once such a volume is being deleted and no longer Bound, the agent removes its
 *   directory (reclaim policy Delete; a Retain volume's data stays) and then the volume's
 *   `logplane.io/local-path-cleanup` finalizer, so the object goes only after its data.
 *
 * It touches only paths under its nodes' local-path directories: a volume claiming another
 * path has its finalizer removed without anything being deleted.
 */
import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import type { Logger } from 'pino';
import { filter, type Subscription } from 'rxjs';
import type { EventLog } from '../log/port.ts';
import { appendAndWait, type Projection } from '../projections/index.ts';
import { ANN_PROVISIONED_BY, LOCAL_PATH_CLEANUP_FINALIZER, LOCAL_PATH_DIR_ANNOTATION, LOCAL_PATH_PROVISIONER } from '../projections/local-path.ts';
import type { EventBody, PersistentVolume } from '../schemas/index.ts';

/** Where the local-path volumes of `node` go, under the agent's data directory. */
export const localPathDir = (dataDir: string, node: string): string => join(resolve(dataDir), node, 'local-path');

/** The annotations the agent puts on the Node it registers: its local-path directory. */
export const localPathAnnotations = (dataDir: string, node: string): Record<string, string> => ({ [LOCAL_PATH_DIR_ANNOTATION]: localPathDir(dataDir, node) });

export interface LocalPathOptions {
  readonly log: EventLog;
  readonly projection: Projection;
  readonly logger: Logger;
  /** The nodes this agent runs. */
  readonly nodes: readonly string[];
  readonly dataDir: string;
}

export interface LocalPathVolumes {
  /** Stops watching volumes (a cleanup in flight finishes). */
  close(): Promise<void>;
}

const HOSTNAME_LABEL = 'kubernetes.io/hostname';

/** The node a volume is pinned to by a `kubernetes.io/hostname In [node]` affinity, if that is all it says. */
const nodeOf = (volume: PersistentVolume): string | undefined => {
  const terms = volume.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  const hostname = terms.length === 1 ? terms[0]?.matchExpressions?.find((r) => r.key === HOSTNAME_LABEL && r.operator === 'In') : undefined;
  return hostname?.values?.length === 1 ? hostname.values[0] : undefined;
};

/** The volume without the cleanup finalizer, as a desired-state update judged against the version read. */
const releaseCommand = (volume: PersistentVolume): EventBody => {
  const { resourceVersion, finalizers, ...metadata } = volume.metadata;
  const kept = (finalizers ?? []).filter((name) => name !== LOCAL_PATH_CLEANUP_FINALIZER);
  const { status: _status, ...object } = volume;
  return {
    type: 'ObjectUpdated',
    object: { ...object, metadata: kept.length > 0 ? { ...metadata, finalizers: kept } : metadata },
    expectedResourceVersion: resourceVersion ?? null,
    subresource: null,
  };
};

/** Starts creating and removing the directories of the local-path volumes of `options.nodes`. */
export const startLocalPathVolumes = (options: LocalPathOptions): LocalPathVolumes => {
  const { log, projection, logger } = options;
  const bases = new Map(options.nodes.map((node) => [node, localPathDir(options.dataDir, node)]));
  /** Volumes (uid) whose finalizer removal is in flight. */
  const releasing = new Set<string>();
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;

  /** The volume's directory when it lies under its node's local-path directory, else undefined. */
  const safePath = (volume: PersistentVolume, base: string): string | undefined => {
    const path = volume.spec?.hostPath?.path ?? volume.spec?.local?.path;
    if (path === undefined) return undefined;
    const resolved = resolve(path);
    return resolved.startsWith(base + sep) ? resolved : undefined;
  };

  const release = (volume: PersistentVolume, node: string): void => {
    const uid = volume.metadata.uid ?? volume.metadata.name;
    if (releasing.has(uid)) return;
    releasing.add(uid);
    const key = `PersistentVolume//${volume.metadata.name}`;
    const sent = appendAndWait(log, projection, [releaseCommand(volume)], { actor: { type: 'node', name: node } })
      .catch((error: unknown) => {
        logger.warn({ volume: volume.metadata.name, error: String(error) }, 'removing the local-path cleanup finalizer failed');
      })
      .finally(() => {
        releasing.delete(uid);
        inFlight.delete(sent);
        // A write the fold rejected (the volume changed meanwhile) is tried again on the version now seen.
        const latest = projection.view().get(key);
        if (latest?.kind === 'PersistentVolume' && latest.metadata.uid === volume.metadata.uid) handleSafely(latest);
      });
    inFlight.add(sent);
  };

  const handle = (volume: PersistentVolume): void => {
    if (closed || volume.metadata.annotations?.[ANN_PROVISIONED_BY] !== LOCAL_PATH_PROVISIONER) return;
    const node = nodeOf(volume);
    const base = node === undefined ? undefined : bases.get(node);
    if (node === undefined || base === undefined) return;
    const path = safePath(volume, base);
    const volumeLogger = logger.child({ node, volume: volume.metadata.name });
    if (!volume.metadata.deletionTimestamp) {
      if (path === undefined) {
        volumeLogger.warn({ path: volume.spec?.hostPath?.path ?? volume.spec?.local?.path }, 'local-path volume outside the node\'s local-path directory; not created');
        return;
      }
      if (existsSync(path)) return;
      mkdirSync(path, { recursive: true, mode: 0o777 });
      chmodSync(path, 0o777);
      volumeLogger.info({ path }, 'created local-path volume directory');
      return;
    }
    if (!(volume.metadata.finalizers ?? []).includes(LOCAL_PATH_CLEANUP_FINALIZER) || volume.status?.phase === 'Bound') return;
    if (volume.spec?.persistentVolumeReclaimPolicy === 'Delete' && path !== undefined) {
      rmSync(path, { recursive: true, force: true });
      volumeLogger.info({ path }, 'removed local-path volume directory');
    }
    release(volume, node);
  };

  function handleSafely(volume: PersistentVolume): void {
    try {
      handle(volume);
    } catch (error) {
      logger.warn({ volume: volume.metadata.name, error: String(error) }, 'local-path volume directory could not be set up or removed');
    }
  }

  const subscription: Subscription = projection.changes$
    .pipe(filter((change) => change.type !== 'DELETED' && change.object.kind === 'PersistentVolume'))
    .subscribe((change) => handleSafely(change.object as PersistentVolume));
  for (const volume of projection.view().list('PersistentVolume') as PersistentVolume[]) handleSafely(volume);
  return {
    close: async () => {
      closed = true;
      subscription.unsubscribe();
      await Promise.all([...inFlight]);
    },
  };
};
