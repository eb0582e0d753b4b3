/**
 * Creates the bootstrap ClusterRoles and ClusterRoleBindings that are missing, as kube's
 * `rbac/bootstrap-roles` post-start hook does: ordinary ObjectCreated events by
 * `system:apiserver`, so the fold stays a function of the log. Safe to run from several
 * apiservers at once and at every start: the fold lets one create win (AlreadyExists is
 * expected), and an object that exists is left as it is (kube would reconcile an
 * autoupdate role's missing rules; logplane does not yet).
 */
import type { Logger } from 'pino';
import type { Kind } from '../../schemas/index.ts';
import { catchUp, keyOf, type ServerContext } from '../context.ts';
import { resourceOfKind } from '../resources.ts';
import { admitCreate } from '../validation/admit.ts';
import { bootstrapClusterRoleBindings, bootstrapClusterRoles } from './bootstrap-policy.ts';

const ensureObject = async (server: ServerContext, kind: Kind, body: Record<string, unknown>): Promise<boolean> => {
  const resource = resourceOfKind(kind);
  const name = (body['metadata'] as { name: string }).name;
  const key = keyOf(resource, undefined, name);
  if (server.projection.view().get(key)) return false;
  const { object } = admitCreate({ resource, body, fieldValidation: 'Strict', namespace: undefined });
  const result = await server.writer.submit({
    topic: 'desired',
    key,
    body: { type: 'ObjectCreated', object },
    identity: { actor: { type: 'user', name: 'system:apiserver' }, causationId: null, correlationId: null },
  });
  const verdict = result.record.verdict;
  if (verdict.type === 'rejected' && verdict.reason !== 'AlreadyExists') {
    throw new Error(`could not create bootstrap ${kind} ${name}: ${verdict.reason}: ${verdict.message}`);
  }
  return verdict.type !== 'rejected';
};

/** Creates the missing bootstrap roles, then the missing bindings (a binding never names a role not there yet). */
export const ensureBootstrapPolicy = async (server: ServerContext, logger: Logger): Promise<void> => {
  await catchUp(server);
  const roles = await Promise.all(bootstrapClusterRoles().map((body) => ensureObject(server, 'ClusterRole', body)));
  const bindings = await Promise.all(bootstrapClusterRoleBindings().map((body) => ensureObject(server, 'ClusterRoleBinding', body)));
  const created = [...roles, ...bindings].filter(Boolean).length;
  logger.info({ created, total: roles.length + bindings.length }, 'ensured the bootstrap RBAC policy');
};
