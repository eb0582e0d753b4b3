/**
 * The service account controller (kube-controller-manager's `serviceaccount-controller`,
 * `pkg/controller/serviceaccount/serviceaccounts_controller.go`): every active namespace has
 * the ServiceAccount `default`; deleted, it is created again. As kube's, it only creates:
 * an edited `default` account is the user's. Tokens are not this controller's.
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import { objectKey, parseObjectKey, type Namespace, type ServiceAccount } from '../../schemas/index.ts';
import type { Controller, Decision } from '../runtime.ts';

/** The service accounts every namespace gets (kube's `ServiceAccountsControllerOptions.ServiceAccounts`). */
export const DEFAULT_SERVICE_ACCOUNTS: readonly string[] = ['default'];

const accountKeys = (namespace: string): string[] =>
  DEFAULT_SERVICE_ACCOUNTS.map((name) => objectKey({ kind: 'ServiceAccount', metadata: { namespace, name } }));

/** Commands that create service account `key` when its namespace is active and it is missing, as kube's `syncNamespace`. */
export const decideServiceAccount = (key: string, view: View): Decision => {
  const { namespace, name } = parseObjectKey(key);
  if (namespace === null || view.get(key)) return { commands: [] };
  const owner = view.get(`Namespace//${namespace}`) as Namespace | undefined;
  if (!owner || owner.metadata.deletionTimestamp || (owner.status?.phase ?? 'Active') !== 'Active') return { commands: [] };
  const account: ServiceAccount = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } };
  return { commands: [{ type: 'ObjectCreated', object: account }] };
};

const keysFor = (change: AppliedChange): readonly string[] => {
  const { object } = change;
  if (object.kind === 'Namespace') return change.type === 'DELETED' ? [] : accountKeys(object.metadata.name);
  // As kube's: only a deletion of a managed account makes it look again.
  const { namespace, name } = object.metadata;
  return object.kind === 'ServiceAccount' && change.type === 'DELETED' && namespace && DEFAULT_SERVICE_ACCOUNTS.includes(name)
    ? [objectKey({ kind: 'ServiceAccount', metadata: { namespace, name } })]
    : [];
};

/** Creates the service account controller. */
export const createServiceAccountController = (): Controller => ({
  name: 'serviceaccount',
  keysFor,
  initialKeys: (view) => view.list('Namespace').flatMap((n) => accountKeys(n.metadata.name)),
  decide: (key, view) => decideServiceAccount(key, view),
});
