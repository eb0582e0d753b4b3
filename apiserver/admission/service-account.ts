/**
 * kube-apiserver 1.32's ServiceAccount admission plugin
 * (`plugin/pkg/admission/serviceaccount/admission.go`) on a Pod create:
 *
 * - a mirror pod (annotation `kubernetes.io/config.mirror`) is left as it is, but may name no
 *   service account, no Secret and no projected service-account token (403);
 * - `spec.serviceAccountName` defaults to `default`, and the service account must exist
 *   (403 `error looking up service account NS/NAME: serviceaccount "NAME" not found`; kube
 *   retries the lookup of `default` for about a second, as the write path does here);
 * - unless `automountServiceAccountToken` is false (the pod's setting wins over the service
 *   account's), every container and init container without a mount at
 *   `/var/run/secrets/kubernetes.io/serviceaccount` gets one (read-only) of the volume
 *   `kube-api-access-<5 characters>`: a projected volume of a bound token (`token`, 3607 s),
 *   the namespace's `kube-root-ca.crt` (`ca.crt`) and the namespace (`namespace`); a volume
 *   already named `kube-api-access-…` is the one mounted;
 * - a pod without `imagePullSecrets` gets the service account's.
 *
 * The volume's suffix comes from the caller: random for a user's request (as kube), a hash of
 * the pod's name for a controller's create, whose decision must re-run to the same commands.
 */
import { randomInt } from 'node:crypto';
import { defer, EMPTY, filter, firstValueFrom, map, merge, of, timeout } from 'rxjs';
import type { Projection, View } from '../../projections/index.ts';
import type { ObjectOfKind, VolumeMount } from '../../schemas/index.ts';
import { ApiError, ServiceAccountNotFoundError } from '../errors.ts';
import { failureStatus } from '../status.ts';

type Pod = ObjectOfKind<'Pod'>;
type ServiceAccount = ObjectOfKind<'ServiceAccount'>;

/** kube's `DefaultServiceAccountName`. */
export const DEFAULT_SERVICE_ACCOUNT = 'default';
/** kube's `DefaultAPITokenMountPath`. */
export const API_TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** kube's `ServiceAccountVolumeName`: the generated volume is this, a dash and 5 characters. */
export const API_ACCESS_VOLUME_PREFIX = 'kube-api-access-';
/** kube's `WarnOnlyBoundTokenExpirationSeconds`: the lifetime asked for the auto-mounted token. */
export const API_ACCESS_TOKEN_SECONDS = 3607;
/** The ConfigMap the root-ca-cert-publisher keeps in every namespace. */
export const ROOT_CA_CONFIG_MAP = 'kube-root-ca.crt';
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';
/** kube's generated-name alphabet (no vowels, no look-alike digits). */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** How the plugin names the volume it adds (5 characters of kube's generated-name alphabet). */
export interface ServiceAccountAdmission {
  readonly volumeSuffix: (pod: Pod) => string;
}

const forbidden = (pod: Pod, reason: string): ApiError =>
  new ApiError(failureStatus('Forbidden', `pods "${pod.metadata.name}" is forbidden: ${reason}`, { name: pod.metadata.name, group: '', kind: 'pods' }));

/** kube's TokenVolumeSource. */
export const apiAccessVolumeSource = () => ({
  defaultMode: 420,
  sources: [
    { serviceAccountToken: { expirationSeconds: API_ACCESS_TOKEN_SECONDS, path: 'token' } },
    { configMap: { name: ROOT_CA_CONFIG_MAP, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
  ],
});

/** Whether `pod` names a Secret anywhere (kube's VisitPodSecretNames, for mirror pods). */
const namesSecret = (pod: Pod): boolean => {
  const spec = pod.spec;
  if ((spec.imagePullSecrets ?? []).length > 0) return true;
  for (const volume of spec.volumes ?? []) {
    if (volume.secret !== undefined || (volume.projected?.sources ?? []).some((source) => source.secret !== undefined)) return true;
  }
  return [...(spec.initContainers ?? []), ...spec.containers].some(
    (container) =>
      (container.env ?? []).some((variable) => variable.valueFrom?.secretKeyRef !== undefined) || (container.envFrom ?? []).some((source) => source.secretRef !== undefined),
  );
};

/** The plugin's Validate of a mirror pod. */
const validateMirrorPod = (pod: Pod): void => {
  if ((pod.spec.serviceAccountName ?? '') !== '') throw forbidden(pod, 'a mirror pod may not reference service accounts');
  if (namesSecret(pod)) throw forbidden(pod, 'a mirror pod may not reference secrets');
  if ((pod.spec.volumes ?? []).some((volume) => (volume.projected?.sources ?? []).some((source) => source.serviceAccountToken !== undefined))) {
    throw forbidden(pod, 'a mirror pod may not use ServiceAccountToken volume projections');
  }
};

/** kube's shouldAutomount: the pod's preference, then the service account's, then true. */
export const shouldAutomount = (account: ServiceAccount, pod: Pod): boolean => pod.spec.automountServiceAccountToken ?? account.automountServiceAccountToken ?? true;

/** kube's mountServiceAccountToken. */
const mountApiAccess = (pod: Pod, suffix: () => string): void => {
  const spec = pod.spec;
  const existing = (spec.volumes ?? []).find((volume) => volume.name.startsWith(API_ACCESS_VOLUME_PREFIX));
  const volumeName = existing?.name ?? `${API_ACCESS_VOLUME_PREFIX}${suffix()}`;
  const mount: VolumeMount = { name: volumeName, readOnly: true, mountPath: API_TOKEN_MOUNT_PATH };
  let needsVolume = false;
  for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
    if ((container.volumeMounts ?? []).some((m) => m.mountPath === API_TOKEN_MOUNT_PATH)) continue;
    container.volumeMounts = [...(container.volumeMounts ?? []), { ...mount }];
    needsVolume = true;
  }
  if (existing === undefined && needsVolume) spec.volumes = [...(spec.volumes ?? []), { name: volumeName, projected: apiAccessVolumeSource() }];
};

/** The plugin's Admit of a new pod, reading the service account from `view` (changes `pod`; throws kube's 403). */
export const admitPodServiceAccount = (pod: Pod, view: View, admission: ServiceAccountAdmission): void => {
  if (pod.metadata.annotations?.[MIRROR_ANNOTATION] !== undefined) {
    validateMirrorPod(pod);
    return;
  }
  const namespace = pod.metadata.namespace ?? 'default';
  // kube's conversion takes the deprecated `serviceAccount` when the name is not set.
  if ((pod.spec.serviceAccountName ?? '') === '') pod.spec.serviceAccountName = (pod.spec.serviceAccount ?? '') === '' ? DEFAULT_SERVICE_ACCOUNT : pod.spec.serviceAccount;
  const name = pod.spec.serviceAccountName ?? DEFAULT_SERVICE_ACCOUNT;
  const account = view.get(`ServiceAccount/${namespace}/${name}`) as ServiceAccount | undefined;
  if (!account) throw new ServiceAccountNotFoundError(pod.metadata.name, namespace, name);
  if ((pod.spec.serviceAccount ?? '') !== '') pod.spec.serviceAccount = name;
  if (shouldAutomount(account, pod)) mountApiAccess(pod, () => admission.volumeSuffix(pod));
  if ((pod.spec.imagePullSecrets ?? []).length === 0 && (account.imagePullSecrets ?? []).length > 0) {
    pod.spec.imagePullSecrets = (account.imagePullSecrets ?? []).map((secret) => ({ name: secret.name ?? '' }));
  }
};

/** A user's request: the volume suffix is random, as kube's `SimpleNameGenerator`. */
export const REQUEST_SERVICE_ACCOUNT_ADMISSION: ServiceAccountAdmission = {
  volumeSuffix: () => Array.from({ length: 5 }, () => SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)]).join(''),
};

/** kube looks `default` up 10 times, 100-200 ms apart, as the controller may be creating it. */
const DEFAULT_ACCOUNT_WAIT_MS = 1500;

/**
 * Whether a refusal is worth waiting for: `default` missing (the ServiceAccount controller
 * makes it in a new namespace). Resolves true once it exists in `projection`, false after
 * kube's patience (the caller refuses then).
 */
export const waitForDefaultServiceAccount = (error: unknown, projection: Pick<Projection, 'view' | 'changes$'>): Promise<boolean> => {
  if (!(error instanceof ServiceAccountNotFoundError) || error.serviceAccount !== DEFAULT_SERVICE_ACCOUNT) return Promise.resolve(false);
  const key = `ServiceAccount/${error.namespace}/${error.serviceAccount}`;
  return firstValueFrom(
    merge(
      projection.changes$.pipe(filter((change) => change.key === key && change.type !== 'DELETED')),
      defer(() => (projection.view().get(key) ? of(true) : EMPTY)),
    ).pipe(
      map(() => true),
      timeout({ first: DEFAULT_ACCOUNT_WAIT_MS, with: () => of(false) }),
    ),
    { defaultValue: false },
  );
};
