/**
 * Mutating admission that reads the cluster (kube-apiserver's admission plugins with
 * listers), run on a create after the object is decoded, defaulted and validated, before it
 * is appended: per kind, in one strategy map. An inert kind needs no line here.
 *
 * - DefaultIngressClass: an Ingress naming no class (neither `spec.ingressClassName` nor the
 *   `kubernetes.io/ingress.class` annotation) gets the default IngressClass.
 * - DefaultStorageClass: a PersistentVolumeClaim naming no class (`spec.storageClassName`
 *   absent — `""` asks for none — and no `volume.beta.kubernetes.io/storage-class`
 *   annotation) gets the default StorageClass.
 *
 * A default class is one annotated `…is-default-class: "true"`; of several, the newest, then
 * the first by name, as kube 1.32 chooses.
 * - StorageObjectInUseProtection: every new PersistentVolumeClaim gets the
 *   `kubernetes.io/pvc-protection` finalizer and every PersistentVolume
 *   `kubernetes.io/pv-protection` (the pvc-protection and pv-protection controllers remove
 *   them once the object is not in use).
 * - Priority, RuntimeClass (`pod.ts`): a Pod's priority, preemption policy, overhead and
 *   scheduling constraints from its classes; at most one globalDefault PriorityClass.
 * - LimitRanger (`limit-ranger.ts`): a Pod's containers get the default requests and limits
 *   of its namespace's LimitRanges, then Pods and PersistentVolumeClaims are held to their
 *   min, max and maxLimitRequestRatio.
 * - ServiceAccount (`service-account.ts`, when the options ask for it: an apiserver that
 *   issues service-account tokens): a Pod's service account defaulted and checked, and its
 *   `kube-api-access-*` volume mounted.
 *
 * An admission may refuse (throws an `ApiError`); the caller judges a refusal on a view that
 * has caught up with the log.
 */
import { PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER, type Projection, type View } from '../../projections/index.ts';
import { KINDS, type Kind, type KubeObject, type ObjectMeta } from '../../schemas/index.ts';
import type { ObjectOfKind } from '../../schemas/keys.ts';
import { admitClaimLimits, admitPodLimits } from './limit-ranger.ts';
import { admitPodPriority, admitPriorityClass, admitRuntimeClass } from './pod.ts';
import { admitPodServiceAccount, REQUEST_SERVICE_ACCOUNT_ADMISSION, waitForDefaultServiceAccount, type ServiceAccountAdmission } from './service-account.ts';

export { waitForDefaultServiceAccount } from './service-account.ts';

/** What the admission of one apiserver (or one controller create path) is configured with. */
export interface AdmissionOptions {
  /** The ServiceAccount plugin, on; absent: off (an apiserver without a token issuer). */
  readonly serviceAccounts?: ServiceAccountAdmission;
}

type Admission<K extends Kind> = (object: ObjectOfKind<K>, view: View, options: AdmissionOptions) => void;

const NONE = (): void => undefined;

/** The newest of `objects` whose annotations say they are the default (one of `annotations` is "true"), then the first by name. */
export const newestDefault = <T extends { metadata: ObjectMeta & { name: string } }>(objects: readonly T[], annotations: readonly string[]): T | undefined =>
  objects
    .filter((object) => annotations.some((annotation) => object.metadata.annotations?.[annotation] === 'true'))
    .sort((a, b) => {
      const [left, right] = [Date.parse(a.metadata.creationTimestamp ?? '') || 0, Date.parse(b.metadata.creationTimestamp ?? '') || 0];
      return left === right ? (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0) : right - left;
    })[0];

/** StorageObjectInUseProtection: `finalizer` on `object`, once. */
const addFinalizer = (object: KubeObject, finalizer: string): void => {
  const finalizers = object.metadata.finalizers ?? [];
  if (!finalizers.includes(finalizer)) object.metadata.finalizers = [...finalizers, finalizer];
};

const ADMISSION: { readonly [K in Kind]: Admission<K> } = {
  ...(Object.fromEntries(KINDS.map((kind) => [kind, NONE])) as unknown as { [K in Kind]: Admission<K> }),
  Ingress: (ingress, view) => {
    if (ingress.spec?.ingressClassName != null) return;
    if (ingress.metadata.annotations?.['kubernetes.io/ingress.class'] !== undefined) return;
    const chosen = newestDefault(view.list('IngressClass') as ObjectOfKind<'IngressClass'>[], ['ingressclass.kubernetes.io/is-default-class']);
    if (chosen) ingress.spec = { ...ingress.spec, ingressClassName: chosen.metadata.name };
  },
  Pod: (pod, view, options) => {
    if (options.serviceAccounts) admitPodServiceAccount(pod, view, options.serviceAccounts);
    admitRuntimeClass(pod, view);
    admitPodPriority(pod, view);
    admitPodLimits(pod, view);
  },
  PriorityClass: admitPriorityClass,
  PersistentVolume: (volume) => addFinalizer(volume, PV_PROTECTION_FINALIZER),
  PersistentVolumeClaim: (claim, view) => {
    addFinalizer(claim, PVC_PROTECTION_FINALIZER);
    const named = claim.spec?.storageClassName != null || claim.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] !== undefined;
    const chosen = named
      ? undefined
      : newestDefault(view.list('StorageClass') as ObjectOfKind<'StorageClass'>[], [
          'storageclass.kubernetes.io/is-default-class',
          'storageclass.beta.kubernetes.io/is-default-class',
        ]);
    if (chosen) claim.spec = { ...claim.spec, storageClassName: chosen.metadata.name };
    admitClaimLimits(claim, view);
  },
};

/** Applies the admission of `object`'s kind, reading `view` (changes `object` in place; throws an `ApiError` to refuse it). */
export const admitFromView = (object: KubeObject, view: View, options: AdmissionOptions = {}): void => {
  (ADMISSION[object.kind] as Admission<Kind>)(object as ObjectOfKind<Kind>, view, options);
};

/** The admission of a request to `server`: the ServiceAccount plugin when it issues service-account tokens. */
export const requestAdmission = (server: { readonly serviceAccountTokens: unknown }): AdmissionOptions =>
  server.serviceAccountTokens === undefined ? {} : { serviceAccounts: REQUEST_SERVICE_ACCOUNT_ADMISSION };

/**
 * Runs `admit` again after the view has caught up; while it refuses for a missing `default`
 * service account (the ServiceAccount controller creates it in a new namespace), waits for it
 * as kube's plugin does (about a second and a half), then runs it once more.
 */
export const admitAfterDefaultServiceAccount = async <T>(admit: () => T, server: { readonly projection: Pick<Projection, 'view' | 'changes$'> }): Promise<T> => {
  try {
    return admit();
  } catch (error) {
    if (!(await waitForDefaultServiceAccount(error, server.projection))) throw error;
    return admit();
  }
};
