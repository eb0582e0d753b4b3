/**
 * After the last fault is repaired and the workload stopped: every surviving Deployment
 * (the run's own and each lifecycle's) must converge (its pods Running on live nodes with the
 * current template, its status updated and ready), and every deletion the workload sent must
 * finish — a deleted Namespace gone (the namespace controller emptied and finalized it), a
 * deleted Deployment gone with its pods (the garbage collector) — within `timeoutMs`.
 */
import type { DeploymentRef, LifecycleLedger } from './lifecycle.ts';
import type { ChaosDriver } from './scenario.ts';
import { waitUntil } from './scenario.ts';

export interface SettleVerdict {
  /** From the start of the wait to everything settled (or to the timeout). */
  readonly ms: number;
  readonly deployments: number;
  readonly namespaceDeletions: number;
  readonly deploymentDeletions: number;
  /** What had not converged or finished at the timeout; empty when all did. */
  readonly unsettled: readonly string[];
}

export const settle = async (driver: ChaosDriver, ledger: LifecycleLedger, extra: readonly DeploymentRef[], timeoutMs: number): Promise<SettleVerdict> => {
  const started = Date.now();
  const surviving = [...extra, ...ledger.surviving];
  const pending = new Map<string, () => Promise<string | true>>();
  for (const ref of surviving) pending.set(`deployment ${ref.namespace}/${ref.name} converged`, () => driver.convergedState(ref.name, ref.namespace));
  for (const namespace of ledger.deletedNamespaces) {
    pending.set(`namespace ${namespace} deleted`, async () => {
      const answer = await driver.request('GET', `/api/v1/namespaces/${namespace}`);
      const phase = (answer.body as { status?: { phase?: string } }).status?.phase;
      return answer.status === 404 ? true : `GET ${answer.status}${phase ? ` (${phase})` : ''}`;
    });
  }
  for (const ref of ledger.deletedDeployments) {
    pending.set(`deployment ${ref.namespace}/${ref.name} deleted with its pods`, async () => {
      const deployment = await driver.request('GET', `/apis/apps/v1/namespaces/${ref.namespace}/deployments/${ref.name}`);
      const pods = await driver.request('GET', `/api/v1/namespaces/${ref.namespace}/pods?labelSelector=app%3D${ref.name}`);
      const left = (pods.body as { items?: unknown[] }).items?.length ?? -1;
      return deployment.status === 404 && pods.status === 200 && left === 0 ? true : `GET ${deployment.status}, ${left} pods left`;
    });
  }
  const last = new Map<string, string>();
  await waitUntil('every Deployment converged and every deletion finished', async () => {
    for (const [what, probe] of pending) {
      const state = await probe().catch((error: unknown) => String(error));
      if (state === true) {
        pending.delete(what);
        last.delete(what);
      } else {
        last.set(what, state);
      }
    }
    return pending.size === 0;
  }, timeoutMs).catch(() => undefined);
  return {
    ms: Date.now() - started,
    deployments: surviving.length,
    namespaceDeletions: ledger.deletedNamespaces.length,
    deploymentDeletions: ledger.deletedDeployments.length,
    unsettled: [...pending.keys()].map((what) => `${what}: ${last.get(what) ?? 'not probed'}`),
  };
};
