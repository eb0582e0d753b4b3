/**
 * Objects a controller creates pass through the apiserver's create path, as in kube (where a
 * controller's create is a POST like any other): defaults, what a create sets (a Pod's
 * affinity label keys, a Job's generated selector …) and the mutating and validating
 * admission that reads the cluster (default StorageClass, IngressClass, LimitRanger …).
 * Reconcilers do not depend on the apiserver: the composition root (cli) hands that path in
 * as a {@link CreateAdmission}, and `debug reconcile` gets the same one, so a decision re-run
 * gives the commands recorded.
 *
 * A create the admission refuses (a pod over its namespace's LimitRange) is what kube's
 * controllers see as a failed POST: a controller that records Events (see
 * `reconcilers/events`) drops that create, records kube's Warning `FailedCreate` "Error
 * creating: <the apiserver's message>" on the object it decided, and comes back to the key
 * later (kube's rate-limited requeue); the admission runs before its narrator, so no
 * `SuccessfulCreate` is recorded for it. A controller without Events fails the round with a
 * retriable error, which the runtime retries with backoff.
 */
import type { View } from '../projections/index.ts';
import type { EventBody, KubeObject } from '../schemas/index.ts';
import { ReconcileError } from './errors.ts';
import type { Controller, Decision } from './runtime.ts';

/** What the create path makes of an object: the object to record, or the apiserver's refusal. */
export type AdmissionResult =
  | { readonly type: 'admitted'; readonly object: KubeObject }
  /** A 4xx the apiserver would answer the POST with; `message` is its Status message. */
  | { readonly type: 'refused'; readonly message: string };

/** The apiserver's create path for an object a controller creates (must not change its argument). */
export type CreateAdmission = (object: KubeObject, view: View) => AdmissionResult;

/** A create the admission refused. */
export interface Refusal {
  readonly object: KubeObject;
  readonly message: string;
}

/** A decision with its creates admitted, and the creates that were refused (dropped from it). */
export interface AdmittedDecision {
  readonly decision: Decision;
  readonly refused: readonly Refusal[];
}

/** Objects that already went through the create path, so an outer wrapper does not admit them twice. */
const admittedObjects = new WeakSet<KubeObject>();

/** `decision` with every created object through `admit` (refused ones dropped and returned). */
export const admitCommands = (admit: CreateAdmission, view: View, decision: Decision): AdmittedDecision => {
  if (!decision.commands.some((command) => command.type === 'ObjectCreated' && !admittedObjects.has(command.object))) return { decision, refused: [] };
  const refused: Refusal[] = [];
  const commands: EventBody[] = [];
  for (const command of decision.commands) {
    if (command.type !== 'ObjectCreated' || admittedObjects.has(command.object)) {
      commands.push(command);
      continue;
    }
    const result = admit(command.object, view);
    switch (result.type) {
      case 'admitted':
        admittedObjects.add(result.object);
        commands.push({ ...command, object: result.object });
        break;
      case 'refused':
        refused.push({ object: command.object, message: result.message });
        break;
      default:
        return result satisfies never;
    }
  }
  return { decision: { ...decision, commands }, refused };
};

/** The creates of a key were refused by admission and the controller records no Events to say so: retried with backoff. */
export class CreateRefusedError extends ReconcileError {
  override readonly name = 'CreateRefusedError';
  constructor(key: string, refused: readonly Refusal[]) {
    super(`creating objects for ${key} was refused: ${refused.map((r) => r.message).join('; ')}`, true, { key, refused: refused.length });
  }
}

const admittedOrThrow = (admit: CreateAdmission, key: string, view: View, decision: Decision): Decision => {
  const { decision: admitted, refused } = admitCommands(admit, view, decision);
  if (refused.length > 0) throw new CreateRefusedError(key, refused);
  return admitted;
};

/**
 * `controller` whose created objects pass through `admit` (decisions stay pure functions of
 * the view): handed to the decision in its context (a controller that records Events admits
 * before narrating), and applied to whatever it did not admit itself.
 */
export const withCreateAdmission = (controller: Controller, admit: CreateAdmission): Controller => {
  const { decide, decideAll } = controller;
  return {
    ...controller,
    decide: (key, view, context) => admittedOrThrow(admit, key, view, decide(key, view, { ...context, admitCreated: admit })),
    ...(decideAll
      ? {
          decideAll: (keys, view, context) =>
            new Map([...decideAll(keys, view, { ...context, admitCreated: admit })].map(([key, decision]) => [key, admittedOrThrow(admit, key, view, decision)])),
        }
      : {}),
  };
};
