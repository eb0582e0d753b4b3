/**
 * The create path of an object a controller creates, as kube-apiserver runs it for a
 * controller's POST: defaults, what a create sets (`prepareForCreate`), and the mutating
 * admission that reads the cluster. Handed to the controllers by the composition root (see
 * reconcilers/create-admission.ts); validation is the controllers' own business, as their
 * objects are built from validated templates.
 *
 * A decision must re-run to the same commands (`debug reconcile`), so what kube draws at
 * random here is derived from the object: the ServiceAccount plugin's `kube-api-access-*`
 * suffix is a hash of the pod's namespace and name (unique per pod, as a controller's pod
 * names are).
 */
import { createHash } from 'node:crypto';
import type { View } from '../../projections/index.ts';
import type { KubeObject } from '../../schemas/index.ts';
import { applyDefaults, prepareForCreate } from '../validation/defaults.ts';
import { ApiError } from '../errors.ts';
import { admitFromView, type AdmissionOptions } from './index.ts';

/** kube's generated-name alphabet (no vowels, no look-alike digits). */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** 5 characters of the alphabet derived from the SHA-256 of `input`. */
export const derivedSuffix = (input: string): string => {
  const digest = createHash('sha256').update(input).digest();
  let out = '';
  for (let i = 0; i < 5; i++) out += SUFFIX_ALPHABET[(digest[i] ?? 0) % SUFFIX_ALPHABET.length];
  return out;
};

const CONTROLLER_ADMISSION: AdmissionOptions = {
  serviceAccounts: { volumeSuffix: (pod) => derivedSuffix(`${pod.metadata.namespace ?? ''}/${pod.metadata.name}`) },
};

/** What the create path makes of a controller's object (structurally reconcilers' `AdmissionResult`). */
export type ControllerCreateResult = { readonly type: 'admitted'; readonly object: KubeObject } | { readonly type: 'refused'; readonly message: string };

/**
 * A copy of `object` as the apiserver would store it on create (the argument is not
 * changed), or the refusal a POST of it would get: an admission plugin's 4xx (LimitRanger's
 * 403 …), with the Status message kube's controllers put in their FailedCreate Events.
 */
export const admitControllerCreate = (object: KubeObject, view: View): ControllerCreateResult => {
  const copy = structuredClone(object);
  applyDefaults(copy);
  prepareForCreate(copy);
  try {
    admitFromView(copy, view, CONTROLLER_ADMISSION);
  } catch (error) {
    if (error instanceof ApiError && error.code >= 400 && error.code < 500) return { type: 'refused', message: error.message };
    throw error;
  }
  return { type: 'admitted', object: copy };
};
