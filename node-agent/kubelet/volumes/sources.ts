/**
 * The files of configMap, secret, downwardAPI and projected volumes, as kubelet's volume
 * plugins compute them (`pkg/volume/{configmap,secret,downwardapi,projected}`): `items`
 * select and rename keys (a missing key is an error unless `optional`), `defaultMode`
 * 0644 unless set, an item's `mode` wins; a missing object is an error unless `optional`
 * (then the volume is empty). Pure functions of the pod and its objects.
 */
import type { ConfigMap, Container, KeyToPath, Pod, Secret, Volume } from '../../../schemas/index.ts';
import { type NodeAllocatable, type Resolved, containerResourceValue, metadataFieldValue } from '../env.ts';
import type { PodObjectSource } from '../pod-objects.ts';
import type { Payload, PayloadFile } from './atomic-writer.ts';

/** Kubernetes' default mode of volume files (`DefaultMode` of configMap/secret/downwardAPI/projected: 0644). */
export const DEFAULT_VOLUME_FILE_MODE = 0o644;

const ok = <T>(value: T): Resolved<T> => ({ type: 'ok', value });
const error = <T>(message: string): Resolved<T> => ({ type: 'error', message });

/** `MakePayload` of the configmap/secret plugins: each key (or each item) as a file. */
function keyedPayload(
  data: ReadonlyMap<string, Buffer>,
  items: readonly KeyToPath[] | undefined,
  mode: number,
  optional: boolean,
  describe: string,
  into: Map<string, PayloadFile>,
): Resolved<void> {
  if (items === undefined || items.length === 0) {
    for (const [key, value] of data) into.set(key, { data: value, mode });
    return ok(undefined);
  }
  for (const item of items) {
    const value = data.get(item.key);
    if (value === undefined) {
      if (optional) continue;
      return error(describe === 'secret' ? `references non-existent secret key: ${item.key}` : `configmap references non-existent config key: ${item.key}`);
    }
    into.set(item.path, { data: value, mode: item.mode ?? mode });
  }
  return ok(undefined);
}

const configMapData = (configMap: ConfigMap): Map<string, Buffer> => {
  const data = new Map<string, Buffer>();
  for (const [key, value] of Object.entries(configMap.data ?? {})) data.set(key, Buffer.from(value, 'utf8'));
  for (const [key, value] of Object.entries(configMap.binaryData ?? {})) data.set(key, Buffer.from(value, 'base64'));
  return data;
};

const secretData = (secret: Secret): Map<string, Buffer> => new Map(Object.entries(secret.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]));

/** What the downward API files of a volume read. */
export interface DownwardContext {
  readonly pod: Pod;
  readonly allocatable: NodeAllocatable;
}

function downwardPayload(items: readonly NonNullable<NonNullable<Volume['downwardAPI']>['items']>[number][], mode: number, context: DownwardContext, into: Map<string, PayloadFile>): Resolved<void> {
  for (const item of items) {
    let value: Resolved<string>;
    if (item.fieldRef !== undefined) {
      value = metadataFieldValue(context.pod, item.fieldRef.fieldPath);
    } else if (item.resourceFieldRef !== undefined) {
      const ref = item.resourceFieldRef;
      const container: Container | undefined = [...context.pod.spec.containers, ...(context.pod.spec.initContainers ?? [])].find((c) => c.name === ref.containerName);
      if (container === undefined) return error(`container ${ref.containerName ?? ''} not found`);
      value = containerResourceValue(ref.resource, ref.divisor, container, context.allocatable);
    } else {
      continue;
    }
    if (value.type === 'error') return value;
    into.set(item.path, { data: Buffer.from(value.value, 'utf8'), mode: item.mode ?? mode });
  }
  return ok(undefined);
}

/** The volume kinds whose files the agent writes with the atomic writer. */
export type ProjectedKind = 'configMap' | 'secret' | 'downwardAPI' | 'projected';

/** Which of those kinds `volume` is, if any. */
export function projectedKind(volume: Volume): ProjectedKind | undefined {
  if (volume.configMap !== undefined) return 'configMap';
  if (volume.secret !== undefined) return 'secret';
  if (volume.downwardAPI !== undefined) return 'downwardAPI';
  if (volume.projected !== undefined) return 'projected';
  return undefined;
}

/** Whether `volume` shows the ConfigMap or Secret `name` (so a change of it rewrites the volume). */
export function volumeShows(volume: Volume, kind: 'ConfigMap' | 'Secret', name: string): boolean {
  if (kind === 'ConfigMap' && volume.configMap?.name === name) return true;
  if (kind === 'Secret' && volume.secret?.secretName === name) return true;
  return (volume.projected?.sources ?? []).some((source) => (kind === 'ConfigMap' ? source.configMap?.name === name : source.secret?.name === name));
}

/** What a volume's files need that is on its way (a service-account token being fetched): retry once `ready` resolves. */
export interface Pending {
  readonly type: 'pending';
  readonly ready: Promise<void>;
}

/** A volume's files, or kubelet's error (the pod's containers wait until it can be written), or a token on its way. */
export function volumePayload(volume: Volume, pod: Pod, objects: PodObjectSource, allocatable: NodeAllocatable): Resolved<{ payload: Payload; skipped: string[] }> | Pending {
  const namespace = pod.metadata.namespace ?? 'default';
  const files = new Map<string, PayloadFile>();
  const skipped: string[] = [];
  const done = (result: Resolved<void>): Resolved<{ payload: Payload; skipped: string[] }> => (result.type === 'error' ? result : ok({ payload: files, skipped }));
  let pending: Pending | undefined;
  if (volume.configMap !== undefined) {
    const source = volume.configMap;
    const name = source.name ?? '';
    const found = objects.configMap(namespace, name);
    const optional = source.optional === true;
    if (found === undefined) return optional ? ok({ payload: files, skipped }) : error(`configmap "${name}" not found`);
    return done(keyedPayload(configMapData(found), source.items, source.defaultMode ?? DEFAULT_VOLUME_FILE_MODE, optional, 'configmap', files));
  }
  if (volume.secret !== undefined) {
    const source = volume.secret;
    const name = source.secretName ?? '';
    const found = objects.secret(namespace, name);
    const optional = source.optional === true;
    if (found === undefined) return optional ? ok({ payload: files, skipped }) : error(`secret "${name}" not found`);
    return done(keyedPayload(secretData(found), source.items, source.defaultMode ?? DEFAULT_VOLUME_FILE_MODE, optional, 'secret', files));
  }
  if (volume.downwardAPI !== undefined) {
    return done(downwardPayload(volume.downwardAPI.items ?? [], volume.downwardAPI.defaultMode ?? DEFAULT_VOLUME_FILE_MODE, { pod, allocatable }, files));
  }
  if (volume.projected !== undefined) {
    const mode = volume.projected.defaultMode ?? DEFAULT_VOLUME_FILE_MODE;
    for (const source of volume.projected.sources ?? []) {
      if (source.configMap !== undefined) {
        const name = source.configMap.name ?? '';
        const found = objects.configMap(namespace, name);
        const optional = source.configMap.optional === true;
        if (found === undefined) {
          if (optional) continue;
          return error(`configmap "${name}" not found`);
        }
        const result = keyedPayload(configMapData(found), source.configMap.items, mode, optional, 'configmap', files);
        if (result.type === 'error') return result;
      } else if (source.secret !== undefined) {
        const name = source.secret.name ?? '';
        const found = objects.secret(namespace, name);
        const optional = source.secret.optional === true;
        if (found === undefined) {
          if (optional) continue;
          return error(`secret "${name}" not found`);
        }
        const result = keyedPayload(secretData(found), source.secret.items, mode, optional, 'secret', files);
        if (result.type === 'error') return result;
      } else if (source.downwardAPI !== undefined) {
        const result = downwardPayload(source.downwardAPI.items ?? [], mode, { pod, allocatable }, files);
        if (result.type === 'error') return result;
      } else if (source.serviceAccountToken !== undefined) {
        const tokens = objects.serviceAccountTokens;
        const projection = source.serviceAccountToken;
        if (tokens === undefined) {
          skipped.push(projection.path);
          continue;
        }
        const found = tokens.lookup({
          namespace,
          serviceAccountName: pod.spec.serviceAccountName ?? 'default',
          audiences: projection.audience ? [projection.audience] : [],
          // kube's default for a projection that sets none.
          expirationSeconds: projection.expirationSeconds ?? 3600,
          pod: { name: pod.metadata.name, uid: pod.metadata.uid ?? '' },
        });
        if (found.type === 'error') return error(found.message);
        if (found.type === 'pending') pending = { type: 'pending', ready: found.ready };
        else files.set(projection.path, { data: Buffer.from(found.token, 'utf8'), mode });
      } else if (source.clusterTrustBundle !== undefined) {
        skipped.push(source.clusterTrustBundle.path);
      }
    }
    return pending ?? ok({ payload: files, skipped });
  }
  return error(`volume "${volume.name}" is not a configMap, secret, downwardAPI or projected volume`);
}
