/**
 * Which kinds carry `metadata.generation`, as kube-apiserver 1.32's registry strategies set
 * it: the generic store never does (rest.BeforeCreate fills uid and creationTimestamp only);
 * a kind's strategy sets `Generation = 1` in PrepareForCreate and bumps it when its spec
 * changes. The fold sets and bumps it for the kinds marked here.
 *
 * The ones without (read in pkg/registry/core/<kind>/strategy.go): ConfigMap, Secret and
 * ServiceAccount, whose PrepareForCreate only drops disabled fields or cleans secret
 * references, and Namespace, whose PrepareForCreate sets the phase and the kubernetes
 * finalizer. Every other kind keeps generation as logplane has always kept it.
 */
import { KINDS, type Kind } from '../schemas/index.ts';

const TRACKS_GENERATION: { readonly [K in Kind]: boolean } = {
  ...(Object.fromEntries(KINDS.map((kind) => [kind, true])) as { [K in Kind]: boolean }),
  ConfigMap: false,
  Secret: false,
  ServiceAccount: false,
  Namespace: false,
};

/** Whether objects of `kind` get `metadata.generation` 1 on create and one more on each spec change. */
export const tracksGeneration = (kind: Kind): boolean => TRACKS_GENERATION[kind];
