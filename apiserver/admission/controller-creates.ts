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
import { admitFromView } from './index.ts';

/** A copy of `object` as the apiserver would store it on create (the argument is not changed). */
export const admitControllerCreate = (object: KubeObject, view: View): KubeObject => {
  const copy = structuredClone(object);
  applyDefaults(copy);
  prepareForCreate(copy);
  admitFromView(copy, view);
  return copy;
};
