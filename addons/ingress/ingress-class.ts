/**
 * The controller's IngressClass, as an Ingress controller's installation creates it
 * (ingress-nginx's chart makes `nginx` with `controller: k8s.io/ingress-nginx`): when the
 * controller starts and no IngressClass names its controller, it creates `logplane`, marked
 * as the cluster's default class unless another class already is. Created once per start,
 * not reconciled: a user may edit it, replace it with a class of another name, or un-default it.
 */
import type { Logger } from 'pino';
import type { EventLog } from '../../log/port.ts';
import { appendAndWait, type Projection } from '../../projections/index.ts';
import type { IngressClass } from '../../schemas/index.ts';
import { INGRESS_CONTROLLER_ACTOR } from './status.ts';
import { DEFAULT_CLASS_ANNOTATION, INGRESS_CONTROLLER_NAME, defaultClassOf } from './rules.ts';

/** The name of the class the controller creates. */
export const INGRESS_CLASS_NAME = 'logplane';

/** The IngressClass to create among `classes`, or undefined when one already names this controller. */
export const ingressClassToCreate = (classes: readonly IngressClass[]): IngressClass | undefined => {
  if (classes.some((c) => c.spec?.controller === INGRESS_CONTROLLER_NAME)) return undefined;
  const isDefault = defaultClassOf(classes) === undefined;
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IngressClass',
    metadata: { name: INGRESS_CLASS_NAME, ...(isDefault ? { annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } } : {}) },
    spec: { controller: INGRESS_CONTROLLER_NAME },
  };
};

/** Creates the controller's IngressClass if the view has none; a failure is logged, not fatal (Ingresses naming a class still work). */
export const ensureIngressClass = async (options: { readonly projection: Projection; readonly log: EventLog; readonly logger: Logger }): Promise<void> => {
  const wanted = ingressClassToCreate(options.projection.view().list('IngressClass') as IngressClass[]);
  if (wanted === undefined) return;
  try {
    const [result] = await appendAndWait(options.log, options.projection, [{ type: 'ObjectCreated', object: wanted }], { actor: INGRESS_CONTROLLER_ACTOR });
    const verdict = result?.record?.verdict;
    if (verdict?.type === 'accepted') options.logger.info({ ingressClass: INGRESS_CLASS_NAME, default: wanted.metadata.annotations !== undefined }, 'IngressClass created');
    else options.logger.info({ ingressClass: INGRESS_CLASS_NAME, verdict }, 'IngressClass not created (another writer was first)');
  } catch (error) {
    options.logger.warn({ err: (error as Error).message }, `creating IngressClass ${INGRESS_CLASS_NAME} failed; create it by hand (see the README's Ingress section)`);
  }
};
