/**
 * The namespaces every cluster has: default, kube-system, kube-public, kube-node-lease.
 */
import type { Logger } from 'pino';
import { catchUp, type ServerContext } from './context.ts';
import { resourceOfKind } from './resources.ts';
import { admitCreate } from './validation/admit.ts';

export const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;

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
