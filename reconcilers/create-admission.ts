/**
 * Objects a controller creates pass through the apiserver's create path, as in kube (where a
 * controller's create is a POST like any other): defaults, what a create sets (a Pod's
 * affinity label keys, a Job's generated selector …) and the mutating admission that reads
 * the cluster (default StorageClass, IngressClass …). Reconcilers do not depend on the
 * apiserver: the composition root (cli) hands that path in as a {@link CreateAdmission}, and
 * `debug reconcile` gets the same one, so a decision re-run gives the commands recorded.
 */
import type { View } from '../projections/index.ts';
import type { EventBody, KubeObject } from '../schemas/index.ts';
import type { Controller, Decision } from './runtime.ts';

/** The apiserver's create path for an object a controller creates (returns the object to record; must not change its argument). */
export type CreateAdmission = (object: KubeObject, view: View) => KubeObject;

const admitted = (admit: CreateAdmission, view: View, decision: Decision): Decision => {
  if (!decision.commands.some((command) => command.type === 'ObjectCreated')) return decision;
  const commands = decision.commands.map((command): EventBody => (command.type === 'ObjectCreated' ? { ...command, object: admit(command.object, view) } : command));
  return { ...decision, commands };
};

/** `controller` whose created objects pass through `admit` (decisions stay pure functions of the view). */
export const withCreateAdmission = (controller: Controller, admit: CreateAdmission): Controller => {
  const { decide, decideAll } = controller;
  return {
    ...controller,
    decide: (key, view, context) => admitted(admit, view, decide(key, view, context)),
    ...(decideAll
      ? { decideAll: (keys, view, context) => new Map([...decideAll(keys, view, context)].map(([key, decision]) => [key, admitted(admit, view, decision)])) }
      : {}),
  };
};
