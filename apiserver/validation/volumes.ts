/**
 * Validation of a pod's volumes and of what its containers mount, and of a
 * PersistentVolumeClaim's spec, after kube's pkg/apis/core/validation (ValidateVolumes,
 * ValidateVolumeMounts, ValidateVolumeDevices, ValidatePersistentVolumeClaimSpec): unique
 * DNS-label volume names, exactly one source per volume, mounts and devices that name a
 * volume of the pod, unique mount paths, relative subPaths.
 */
import type { Container, PersistentVolumeClaimSpec, PodSpec, Volume } from '../../schemas/index.ts';
import { fieldErrors } from '../errors.ts';
import type { StatusCause } from '../status.ts';
import { dns1123LabelProblem } from './names.ts';

type Causes = StatusCause[];

/** The fields of a Volume that are not its source. */
const NOT_A_SOURCE: ReadonlySet<string> = new Set(['name']);

/** What a volumeMount's `name` may name: the pod's volumes. */
export type VolumeNames = ReadonlySet<string>;

/** Validates `spec.volumes` at `field`; returns the names of the volumes declared. */
export const checkVolumes = (causes: Causes, field: string, volumes: readonly Volume[] | undefined): VolumeNames => {
  const names = new Set<string>();
  (volumes ?? []).forEach((volume, i) => {
    const path = `${field}[${i}]`;
    if (!volume.name) causes.push(fieldErrors.required(`${path}.name`));
    else {
      const problem = dns1123LabelProblem(volume.name);
      if (problem) causes.push(fieldErrors.invalid(`${path}.name`, volume.name, problem));
      else if (names.has(volume.name)) causes.push(fieldErrors.duplicate(`${path}.name`, volume.name));
      names.add(volume.name);
    }
    const sources = Object.keys(volume).filter((key) => !NOT_A_SOURCE.has(key) && (volume as Record<string, unknown>)[key] !== undefined);
    if (sources.length === 0) causes.push(fieldErrors.required(path, 'must specify a volume type'));
    else if (sources.length > 1) causes.push(fieldErrors.forbidden(`${path}.${sources[1]}`, 'may not specify more than 1 volume type'));
  });
  return names;
};

/** A subPath: relative, without `..` segments (kube's validateLocalDescendingPath). */
const subPathProblem = (path: string): string | undefined => {
  if (path.startsWith('/')) return 'must be a relative path';
  if (path.split('/').includes('..')) return "must not contain '..'";
  return undefined;
};

/** Validates one container's volumeMounts and volumeDevices against the pod's volumes. */
export const checkContainerVolumes = (causes: Causes, field: string, container: Container, volumes: VolumeNames): void => {
  const mountPaths = new Set<string>();
  (container.volumeMounts ?? []).forEach((mount, i) => {
    const path = `${field}.volumeMounts[${i}]`;
    if (!mount.name) causes.push(fieldErrors.required(`${path}.name`));
    else if (!volumes.has(mount.name)) causes.push(fieldErrors.notFound(`${path}.name`, mount.name));
    if (!mount.mountPath) causes.push(fieldErrors.required(`${path}.mountPath`));
    else if (mountPaths.has(mount.mountPath)) causes.push(fieldErrors.invalid(`${path}.mountPath`, mount.mountPath, 'must be unique'));
    mountPaths.add(mount.mountPath);
    if (mount.subPath && mount.subPathExpr) causes.push(fieldErrors.invalid(`${path}.subPathExpr`, mount.subPathExpr, 'subPathExpr and subPath are mutually exclusive'));
    const problem = mount.subPath ? subPathProblem(mount.subPath) : undefined;
    if (problem) causes.push(fieldErrors.invalid(`${path}.subPath`, mount.subPath, problem));
    const exprProblem = mount.subPathExpr ? subPathProblem(mount.subPathExpr) : undefined;
    if (exprProblem) causes.push(fieldErrors.invalid(`${path}.subPathExpr`, mount.subPathExpr, exprProblem));
  });
  const devicePaths = new Set<string>();
  (container.volumeDevices ?? []).forEach((device, i) => {
    const path = `${field}.volumeDevices[${i}]`;
    if (!device.name) causes.push(fieldErrors.required(`${path}.name`));
    else if (!volumes.has(device.name)) causes.push(fieldErrors.notFound(`${path}.name`, device.name));
    if (!device.devicePath) causes.push(fieldErrors.required(`${path}.devicePath`));
    else if (devicePaths.has(device.devicePath)) causes.push(fieldErrors.invalid(`${path}.devicePath`, device.devicePath, 'must be unique'));
    else if (mountPaths.has(device.devicePath)) causes.push(fieldErrors.invalid(`${path}.devicePath`, device.devicePath, 'must not be already mounted in volumeMounts'));
    devicePaths.add(device.devicePath);
  });
};

/** Validates every container's mounts of a pod spec at `field` (after `checkVolumes`). */
export const checkPodVolumes = (causes: Causes, field: string, spec: PodSpec): void => {
  const names = checkVolumes(causes, `${field}.volumes`, spec.volumes);
  (spec.initContainers ?? []).forEach((container, i) => checkContainerVolumes(causes, `${field}.initContainers[${i}]`, container, names));
  (spec.containers ?? []).forEach((container, i) => checkContainerVolumes(causes, `${field}.containers[${i}]`, container, names));
};

const ACCESS_MODES = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'] as const;

/** ValidatePersistentVolumeClaimSpec: access modes, a storage request, the volume mode. */
export const checkClaimSpec = (causes: Causes, field: string, spec: PersistentVolumeClaimSpec | undefined): void => {
  const modes = spec?.accessModes ?? [];
  if (modes.length === 0) causes.push(fieldErrors.required(`${field}.accessModes`, 'at least 1 access mode is required'));
  modes.forEach((mode) => {
    if (!(ACCESS_MODES as readonly string[]).includes(mode)) causes.push(fieldErrors.notSupported(`${field}.accessModes`, mode, ACCESS_MODES));
  });
  if (modes.includes('ReadWriteOncePod') && modes.length > 1) {
    causes.push(fieldErrors.forbidden(`${field}.accessModes`, 'may not use ReadWriteOncePod with other access modes'));
  }
  if (spec?.resources?.requests?.['storage'] === undefined) causes.push(fieldErrors.required(`${field}.resources[storage]`));
  if (spec?.volumeMode !== undefined && !['Filesystem', 'Block'].includes(spec.volumeMode)) {
    causes.push(fieldErrors.notSupported(`${field}.volumeMode`, spec.volumeMode, ['Block', 'Filesystem']));
  }
};
