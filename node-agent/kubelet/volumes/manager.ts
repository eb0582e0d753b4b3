/**
 * A node's pod volumes, materialized on the host as kubelet's volume manager does, in a
 * directory per pod (`<root>/<pod key>/<plugin>/<volume>`, `kubernetes.io~configmap` …):
 *
 * - emptyDir: a directory, mode 0777; `medium: Memory` a tmpfs (size `sizeLimit`) when the
 *   agent is root, else a plain directory (logged);
 * - configMap, secret, downwardAPI, projected: files written by the atomic writer, rewritten
 *   when a ConfigMap or Secret they show changes (`PodObjectSource.changes$`), the pod's
 *   labels and annotations change (`refreshPod`) or a service-account token they hold is
 *   refreshed (`serviceAccountTokens.refreshed$`); a token still being fetched keeps the
 *   volume `pending`;
 * - hostPath: the host path itself (`type` checked; `DirectoryOrCreate`/`FileOrCreate` create it);
 * - persistentVolumeClaim: the `local` or `hostPath` path of the PersistentVolume the claim is bound to.
 *
 * The pod key is an HMAC of the pod's uid under a key kept in the agent's data directory:
 * a process runtime pod running as another user reaches its own volumes through a
 * directory it cannot list (`<root>` is 0711), never another pod's.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import type { Container, Pod, Volume } from '../../../schemas/index.ts';
import { parseQuantity, quantityValue } from '../../../schemas/quantity.ts';
import type { Resolved } from '../env.ts';
import type { PodObjectSource } from '../pod-objects.ts';
import { writeAtomically } from './atomic-writer.ts';
import { type MountPropagation, expandSubPathExpr, mountPropagation, subPathOnHost } from './mount-paths.ts';
import { projectedKind, volumePayload, volumeShows, type Pending } from './sources.ts';

/** One mount of a container: where its content is on the host and where the container sees it. */
export interface ContainerMount {
  readonly volume: string;
  readonly hostPath: string;
  readonly containerPath: string;
  readonly readOnly: boolean;
  readonly propagation: MountPropagation;
}

export interface VolumeManagerOptions {
  /** Where pods' volumes live (created 0711). */
  readonly root: string;
  /** This node's name (its allocatable feeds resourceFieldRef files). */
  readonly node: string;
  readonly objects: PodObjectSource;
  readonly logger: Logger;
}

export interface VolumeManager {
  /**
   * Materializes every volume of `pod` (idempotent: rewrites what changed); kubelet's
   * `MountVolume.SetUp failed …` message on failure; pending while a token is fetched.
   */
  setUp(pod: Pod): Resolved<void> | Pending;
  /**
   * The mounts of `container` of a set-up pod (subPath, or subPathExpr expanded with the
   * container's variables `env` (default none), applied; mount-paths.ts), or why one cannot be made.
   */
  mounts(pod: Pod, container: Container, env?: ReadonlyMap<string, string>): Resolved<ContainerMount[]>;
  /** The pod's labels or annotations may have changed: its downwardAPI volumes are rewritten. */
  refreshPod(pod: Pod): void;
  /** Unmounts (tmpfs) and removes the pod's volumes. */
  tearDown(uid: string): void;
  close(): void;
}

/** kubelet's plugin directory names. */
const PLUGIN_DIRS = {
  emptyDir: 'kubernetes.io~empty-dir',
  configMap: 'kubernetes.io~configmap',
  secret: 'kubernetes.io~secret',
  downwardAPI: 'kubernetes.io~downward-api',
  projected: 'kubernetes.io~projected',
} as const;

const isRoot = (): boolean => process.getuid?.() === 0;

/** Mount points below `dir` (from /proc/self/mounts), deepest first. */
export function mountsBelow(dir: string): string[] {
  let text = '';
  try {
    text = readFileSync('/proc/self/mounts', 'utf8');
  } catch {
    return [];
  }
  const unescape = (path: string) => path.replace(/\\([0-7]{3})/g, (_m, octal: string) => String.fromCharCode(parseInt(octal, 8)));
  return text
    .split('\n')
    .map((line) => unescape(line.split(' ')[1] ?? ''))
    .filter((mountPoint) => mountPoint.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

/** Creates the volume manager of one runtime (see the module comment). */
export function createVolumeManager(options: VolumeManagerOptions): VolumeManager {
  const { root, node, objects, logger } = options;
  mkdirSync(root, { recursive: true, mode: 0o711 });
  chmodSync(root, 0o711);
  const keyFile = join(root, '.key');
  if (!existsSync(keyFile)) writeFileSync(keyFile, randomBytes(32).toString('hex'), { mode: 0o600 });
  const key = readFileSync(keyFile, 'utf8').trim();
  /** Pods set up, by uid (the newest spec seen). */
  const pods = new Map<string, Pod>();

  const podDir = (uid: string): string => join(root, createHmac('sha256', key).update(uid).digest('hex').slice(0, 32));
  const uidOf = (pod: Pod): string => pod.metadata.uid ?? `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
  const allocatable = () => objects.node(node)?.status?.allocatable ?? {};

  function writeProjected(pod: Pod, volume: Volume, dir: string): Resolved<void> | Pending {
    const files = volumePayload(volume, pod, objects, allocatable());
    if (files.type !== 'ok') return files;
    if (files.value.skipped.length > 0) {
      logger.warn(
        { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, volume: volume.name, paths: files.value.skipped },
        'projected clusterTrustBundle sources, and serviceAccountToken sources when the agent has no way to ask for tokens, are not written',
      );
    }
    if (writeAtomically(dir, files.value.payload)) logger.debug({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, volume: volume.name }, 'volume files written');
    return { type: 'ok', value: undefined };
  }

  function setUpEmptyDir(volume: Volume, dir: string): void {
    if (existsSync(dir)) return;
    mkdirSync(dir, { recursive: true, mode: 0o777 });
    chmodSync(dir, 0o777);
    if (volume.emptyDir?.medium !== 'Memory') return;
    if (!isRoot()) {
      logger.warn({ volume: volume.name }, 'emptyDir medium Memory: the agent is not root and cannot mount a tmpfs; using a directory on disk');
      return;
    }
    const size = volume.emptyDir.sizeLimit === undefined ? [] : ['-o', `size=${quantityValue(parseQuantity(volume.emptyDir.sizeLimit)).toString()},mode=1777`];
    execFileSync('mount', ['-t', 'tmpfs', ...(size.length > 0 ? size : ['-o', 'mode=1777']), 'tmpfs', dir]);
  }

  /** The host path of a hostPath volume after kubelet's type check. */
  function hostPathOf(volume: Volume): Resolved<string> {
    const source = volume.hostPath;
    if (source === undefined) return { type: 'error', message: 'not a hostPath volume' };
    const path = source.path;
    const type = source.type ?? '';
    const stats = existsSync(path) ? statSync(path) : undefined;
    const fail = (what: string): Resolved<string> => ({ type: 'error', message: `hostPath type check failed: ${path} is not a ${what}` });
    switch (type) {
      case '':
        return { type: 'ok', value: path };
      case 'DirectoryOrCreate':
        if (stats === undefined) mkdirSync(path, { recursive: true, mode: 0o755 });
        else if (!stats.isDirectory()) return fail('directory');
        return { type: 'ok', value: path };
      case 'Directory':
        return stats?.isDirectory() === true ? { type: 'ok', value: path } : fail('directory');
      case 'FileOrCreate':
        if (stats === undefined) writeFileSync(path, '', { mode: 0o644 });
        else if (!stats.isFile()) return fail('file');
        return { type: 'ok', value: path };
      case 'File':
        return stats?.isFile() === true ? { type: 'ok', value: path } : fail('file');
      case 'Socket':
        return stats?.isSocket() === true ? { type: 'ok', value: path } : fail('socket');
      case 'CharDevice':
        return stats?.isCharacterDevice() === true ? { type: 'ok', value: path } : fail('character device');
      case 'BlockDevice':
        return stats?.isBlockDevice() === true ? { type: 'ok', value: path } : fail('block device');
      default:
        return { type: 'error', message: `hostPath type ${type} is not supported` };
    }
  }

  /** The local path of the PersistentVolume bound to the claim. */
  function claimPathOf(pod: Pod, volume: Volume): Resolved<string> {
    const claimName = volume.persistentVolumeClaim?.claimName ?? '';
    const namespace = pod.metadata.namespace ?? 'default';
    const claim = objects.persistentVolumeClaim(namespace, claimName);
    if (claim === undefined) return { type: 'error', message: `persistentvolumeclaim "${claimName}" not found` };
    const volumeName = claim.spec?.volumeName;
    if (volumeName === undefined || volumeName === '' || claim.status?.phase !== 'Bound') return { type: 'error', message: `pod has unbound immediate PersistentVolumeClaims: ${namespace}/${claimName}` };
    const pv = objects.persistentVolume(volumeName);
    if (pv === undefined) return { type: 'error', message: `persistentvolume "${volumeName}" not found` };
    const path = pv.spec?.local?.path ?? pv.spec?.hostPath?.path;
    if (path === undefined) return { type: 'error', message: `persistentvolume "${volumeName}" has no local or hostPath source: only local volumes can be mounted by this agent` };
    if (pv.spec?.hostPath?.type === 'DirectoryOrCreate' || (pv.spec?.local === undefined && !existsSync(path))) mkdirSync(path, { recursive: true, mode: 0o777 });
    if (!existsSync(path)) return { type: 'error', message: `path "${path}" of persistentvolume "${volumeName}" does not exist` };
    return { type: 'ok', value: path };
  }

  /** Where a volume's content is on the host. */
  function volumePath(pod: Pod, volume: Volume): Resolved<string> {
    const dir = podDir(uidOf(pod));
    if (volume.emptyDir !== undefined) return { type: 'ok', value: join(dir, PLUGIN_DIRS.emptyDir, volume.name) };
    const kind = projectedKind(volume);
    if (kind !== undefined) return { type: 'ok', value: join(dir, PLUGIN_DIRS[kind], volume.name) };
    if (volume.hostPath !== undefined) return hostPathOf(volume);
    if (volume.persistentVolumeClaim !== undefined) return claimPathOf(pod, volume);
    const kindName = Object.keys(volume).find((k) => k !== 'name') ?? 'unknown';
    return { type: 'error', message: `volume "${volume.name}": ${kindName} volumes are not supported by this agent` };
  }

  function setUpVolume(pod: Pod, volume: Volume): Resolved<void> | Pending {
    const path = volumePath(pod, volume);
    if (path.type === 'error') return path;
    try {
      if (volume.emptyDir !== undefined) setUpEmptyDir(volume, path.value);
      else if (projectedKind(volume) !== undefined) return writeProjected(pod, volume, path.value);
      return { type: 'ok', value: undefined };
    } catch (err) {
      return { type: 'error', message: (err as Error).message };
    }
  }

  function setUp(pod: Pod): Resolved<void> | Pending {
    const uid = uidOf(pod);
    mkdirSync(podDir(uid), { recursive: true, mode: 0o755 });
    pods.set(uid, pod);
    for (const volume of pod.spec.volumes ?? []) {
      const result = setUpVolume(pod, volume);
      if (result.type === 'error') return { type: 'error', message: `MountVolume.SetUp failed for volume "${volume.name}" : ${result.message}` };
      if (result.type === 'pending') return result;
    }
    return { type: 'ok', value: undefined };
  }

  function mounts(pod: Pod, container: Container, env: ReadonlyMap<string, string> = new Map()): Resolved<ContainerMount[]> {
    const out: ContainerMount[] = [];
    for (const mount of container.volumeMounts ?? []) {
      const volume = (pod.spec.volumes ?? []).find((v) => v.name === mount.name);
      if (volume === undefined) return { type: 'error', message: `cannot find volume "${mount.name}" to mount into container "${container.name}"` };
      const path = volumePath(pod, volume);
      if (path.type === 'error') return path;
      let subPath = mount.subPath ?? '';
      if ((mount.subPathExpr ?? '') !== '') {
        const expanded = expandSubPathExpr(mount.subPathExpr ?? '', env);
        if (expanded.type === 'error') return expanded;
        subPath = expanded.value;
      }
      const hostPath = subPath === '' ? path : subPathOnHost(path.value, subPath, { mount: mount.name, container: container.name });
      if (hostPath.type === 'error') return hostPath;
      const propagation = mountPropagation(mount.mountPropagation);
      if (propagation.type === 'error') return propagation;
      const readOnly = mount.readOnly === true || projectedKind(volume) !== undefined || volume.persistentVolumeClaim?.readOnly === true;
      out.push({ volume: volume.name, hostPath: hostPath.value, containerPath: mount.mountPath, readOnly, propagation: propagation.value });
    }
    return { type: 'ok', value: out };
  }

  function refresh(filter: (volume: Volume) => boolean, pod: Pod): void {
    for (const volume of pod.spec.volumes ?? []) {
      if (!filter(volume)) continue;
      const result = setUpVolume(pod, volume);
      if (result.type === 'error') logger.warn({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, volume: volume.name, err: result.message }, 'cannot update volume files');
      // A token being fetched: its arrival rewrites the volume (refreshed$) or the next setUp does.
    }
  }

  const subscription: Subscription | undefined = objects.changes$?.subscribe((change) => {
    for (const pod of pods.values()) {
      if ((pod.metadata.namespace ?? 'default') !== change.namespace) continue;
      refresh((volume) => volumeShows(volume, change.kind, change.name), pod);
    }
  });
  const tokenSubscription: Subscription | undefined = objects.serviceAccountTokens?.refreshed$.subscribe((uid) => {
    const pod = pods.get(uid);
    if (pod !== undefined) refresh((volume) => (volume.projected?.sources ?? []).some((source) => source.serviceAccountToken !== undefined), pod);
  });

  return {
    setUp,
    mounts,
    refreshPod(pod) {
      const uid = uidOf(pod);
      if (!pods.has(uid)) return;
      pods.set(uid, pod);
      refresh((volume) => volume.downwardAPI !== undefined || (volume.projected?.sources ?? []).some((s) => s.downwardAPI !== undefined), pod);
    },
    tearDown(uid) {
      pods.delete(uid);
      objects.serviceAccountTokens?.forgetPod(uid);
      const dir = podDir(uid);
      for (const mountPoint of mountsBelow(dir)) {
        try {
          execFileSync('umount', ['-l', mountPoint]);
        } catch (err) {
          logger.error({ err, mountPoint }, 'cannot unmount a pod volume; leaving its directory');
          return;
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
    close() {
      subscription?.unsubscribe();
      tokenSubscription?.unsubscribe();
    },
  };
}
