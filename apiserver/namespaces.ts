/**
 * The namespaces every cluster has: default, kube-system, kube-public, kube-node-lease, as
 * kube-apiserver keeps them: created at start, recreated when one is deleted (its system
 * namespaces controller), and the first three immortal (the NamespaceLifecycle admission
 * plugin answers a deletion 403).
 */
import type { Logger } from 'pino';
import { filter, type Subscription } from 'rxjs';
import { catchUp, type ServerContext } from './context.ts';
import { ApiError } from './errors.ts';
import { resourceOfKind, type ResourceInfo } from './resources.ts';
import { failureStatus } from './status.ts';
import { admitCreate } from './validation/admit.ts';

export const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;

/** The namespaces no one may delete (kube's NamespaceLifecycle `immortalNamespaces`). */
const IMMORTAL_NAMESPACES: ReadonlySet<string> = new Set(['default', 'kube-system', 'kube-public']);

/** Throws kube's 403 for a deletion of an immortal namespace. */
export const checkNamespaceDeletion = (resource: ResourceInfo, name: string): void => {
  if (resource.kind !== 'Namespace' || resource.custom !== undefined || resource.conversion !== undefined || !IMMORTAL_NAMESPACES.has(name)) return;
  throw new ApiError(failureStatus('Forbidden', `namespaces "${name}" is forbidden: this namespace may not be deleted`, { name, group: '', kind: 'namespaces' }));
};

/**
 * Recreates a default namespace once its deletion is complete (kube-node-lease can be
 * deleted; the others only through the log itself), as kube's system namespaces controller
 * does. Returns the subscription to end with the server.
 */
export const keepDefaultNamespaces = (server: ServerContext, logger: Logger): Subscription =>
  server.projection.changes$
    .pipe(filter((change) => change.type === 'DELETED' && change.object.kind === 'Namespace' && (DEFAULT_NAMESPACES as readonly string[]).includes(change.object.metadata.name)))
    .subscribe((change) => {
      logger.info({ namespace: change.object.metadata.name }, 'a default namespace was deleted; recreating it');
      ensureDefaultNamespaces(server, logger).catch((error: unknown) => logger.warn({ err: error }, 'could not recreate a default namespace; it is recreated at the next start'));
    });

/**
 * Creates the default namespaces that are missing. Safe to run from several apiservers at
 * once: the fold lets one create win, and AlreadyExists verdicts are expected.
 */
export const ensureDefaultNamespaces = async (server: ServerContext, logger: Logger): Promise<void> => {
  await catchUp(server);
  const resource = resourceOfKind('Namespace');
  const missing = DEFAULT_NAMESPACES.filter((name) => !server.projection.view().get(`Namespace//${name}`));
  await Promise.all(
    missing.map(async (name) => {
      const { object } = admitCreate({
        resource,
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
        fieldValidation: 'Strict',
        namespace: undefined,
      });
      const result = await server.writer.submit({
        topic: 'desired',
        key: `Namespace//${name}`,
        body: { type: 'ObjectCreated', object },
        identity: { actor: { type: 'user', name: 'system:apiserver' }, causationId: null, correlationId: null },
      });
      const verdict = result.record.verdict;
      if (verdict.type === 'rejected' && verdict.reason !== 'AlreadyExists') {
        throw new Error(`could not create namespace ${name}: ${verdict.reason}: ${verdict.message}`);
      }
      logger.info({ namespace: name, verdict: verdict.type }, 'ensured default namespace');
    }),
  );
};
