/**
 * The create path of an object a controller creates, as kube-apiserver runs it for a
 * controller's POST: defaults, what a create sets (`prepareForCreate`), and the mutating
 * admission that reads the cluster. Handed to the controllers by the composition root (see
 * reconcilers/create-admission.ts); validation is the controllers' own business, as their
 * objects are built from validated templates.
 */
import type { View } from '../../projections/index.ts';
import type { KubeObject } from '../../schemas/index.ts';
import { applyDefaults, prepareForCreate } from '../validation/defaults.ts';
import { ApiError } from '../errors.ts';
import { admitFromView } from './index.ts';

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
    admitFromView(copy, view);
  } catch (error) {
    if (error instanceof ApiError && error.code >= 400 && error.code < 500) return { type: 'refused', message: error.message };
    throw error;
  }
  return { type: 'admitted', object: copy };
};
