/**
 * `status.loadBalancer.ingress` of the Ingresses this controller serves: the proxy's
 * address and ports, written as a status update on the observed topic of the log (as the
 * node agents and controllers write status), and cleared from an Ingress that is no longer
 * this controller's. Level-based: every change of an Ingress or IngressClass re-reads the
 * view and writes only what differs; a write still in flight coalesces later changes.
 */
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import type { EventLog } from '../../log/port.ts';
import { appendAndWait, type Projection } from '../../projections/index.ts';
import type { EventBody, Ingress, IngressClass, IngressLoadBalancerIngress } from '../../schemas/index.ts';
import { kindRef } from '../../schemas/keys.ts';
import { ownedIngresses } from './rules.ts';

/** The actor the status writes are recorded under. */
export const INGRESS_CONTROLLER_ACTOR = { type: 'controller', name: 'ingress-controller' } as const;

export interface StatusWriterOptions {
  readonly projection: Projection;
  readonly log: EventLog;
  readonly logger: Logger;
  /** What every owned Ingress's `status.loadBalancer.ingress` should say. */
  readonly loadBalancer: readonly IngressLoadBalancerIngress[];
}

export interface StatusWriter {
  /** Resolves once the statuses of the view as of now are written (or found right). */
  settled(): Promise<void>;
  close(): void;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? []) === JSON.stringify(b ?? []);

/** The status updates that make the view's Ingresses say `loadBalancer` (owned ones) or nothing of it (others). */
export const statusUpdates = (ingresses: readonly Ingress[], classes: readonly IngressClass[], loadBalancer: readonly IngressLoadBalancerIngress[]): EventBody[] => {
  const owned = new Set(ownedIngresses(ingresses, classes));
  const updates: EventBody[] = [];
  for (const ingress of ingresses) {
    const current = ingress.status?.loadBalancer?.ingress ?? [];
    const wanted = owned.has(ingress) ? loadBalancer : same(current, loadBalancer) ? [] : current;
    if (same(current, wanted)) continue;
    updates.push({
      type: 'ObjectUpdated',
      object: { ...ingress, status: { ...ingress.status, loadBalancer: { ...(wanted.length > 0 ? { ingress: [...wanted] } : {}) } } },
      expectedResourceVersion: null,
      subresource: 'status',
    });
  }
  return updates;
};

/** Keeps the Ingresses' load-balancer status in line with the view. */
export const startStatusWriter = (options: StatusWriterOptions): StatusWriter => {
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  const sync = async (): Promise<void> => {
    do {
      again = false;
      const view = options.projection.view();
      const updates = statusUpdates(view.list('Ingress') as Ingress[], view.list('IngressClass') as IngressClass[], options.loadBalancer);
      if (updates.length === 0 || closed) continue;
      try {
        await appendAndWait(options.log, options.projection, updates, { actor: INGRESS_CONTROLLER_ACTOR });
        options.logger.debug({ count: updates.length }, 'Ingress load-balancer status written');
      } catch (error) {
        options.logger.warn({ err: (error as Error).message }, 'writing the Ingress load-balancer status failed; retried on the next Ingress change');
      }
    } while (again && !closed);
  };
  const trigger = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = sync().finally(() => {
      running = undefined;
    });
    return running;
  };
  const watched = [`${kindRef('Ingress')}/`, `${kindRef('IngressClass')}/`];
  const subscription: Subscription = options.projection.changes$.subscribe((change) => {
    if (watched.some((prefix) => change.key.startsWith(prefix))) void trigger();
  });
  void trigger();
  return {
    settled: () => trigger(),
    close: () => {
      closed = true;
      subscription.unsubscribe();
    },
  };
};
