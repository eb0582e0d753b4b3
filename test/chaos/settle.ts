/**
 * After the last fault is repaired and the workload stopped: every surviving Deployment
 * (the run's own and each lifecycle's) must converge (its pods Running on live nodes with the
 * current template, its status updated and ready), and every deletion the workload sent must
 * finish — a deleted Namespace gone (the namespace controller emptied and finalized it), a
 * deleted Deployment gone with its pods (the garbage collector) — within `timeoutMs`.
 *
 * Each pass reads three cluster-wide lists (Namespaces, Deployments, Pods) and judges every
 * pending item on them: a 50-round run leaves thousands of items, and one request per item
 * per pass made a pass take minutes.
 */
import type { DeploymentRef, LifecycleLedger } from './lifecycle.ts';
import type { ChaosDriver, Deployment, PodLike } from './scenario.ts';
import { judgeConverged, waitUntil } from './scenario.ts';

export interface SettleVerdict {
  /** From the start of the wait to everything settled (or to the timeout). */
  readonly ms: number;
  readonly deployments: number;
  readonly namespaceDeletions: number;
  readonly deploymentDeletions: number;
  /** What had not converged or finished at the timeout; empty when all did. */
  readonly unsettled: readonly string[];
}

/** One pass's reading of the cluster. */
export interface ClusterSnapshot {
  readonly namespaces: ReadonlyMap<string, string | undefined>;
  readonly deployments: ReadonlyMap<string, Deployment>;
  /** `namespace/app label` → its pods. */
  readonly podsByApp: ReadonlyMap<string, readonly PodLike[]>;
  readonly live: ReadonlySet<string>;
}

const listItems = async <T>(driver: ChaosDriver, path: string): Promise<T[]> => {
  const answer = await driver.request('GET', path);
  if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status}`);
  return (answer.body as { items: T[] }).items;
};

export const readSnapshot = async (driver: ChaosDriver): Promise<ClusterSnapshot> => {
  const [namespaces, deployments, pods] = await Promise.all([
    listItems<{ metadata: { name: string }; status?: { phase?: string } }>(driver, '/api/v1/namespaces'),
    listItems<Deployment>(driver, '/apis/apps/v1/deployments'),
    listItems<PodLike>(driver, '/api/v1/pods'),
  ]);
  const podsByApp = new Map<string, PodLike[]>();
  for (const pod of pods) {
    const app = pod.metadata.labels?.['app'];
    if (app === undefined) continue;
    const at = `${pod.metadata.namespace ?? ''}/${app}`;
    podsByApp.set(at, [...(podsByApp.get(at) ?? []), pod]);
  }
  return {
    namespaces: new Map(namespaces.map((n) => [n.metadata.name, n.status?.phase])),
    deployments: new Map(deployments.map((d) => [`${d.metadata.namespace ?? ''}/${d.metadata.name}`, d])),
    podsByApp,
    live: driver.liveNodes(),
  };
};

type Probe = (snapshot: ClusterSnapshot) => string | true;

const converged =
  (ref: DeploymentRef): Probe =>
  (snapshot) => {
    const deployment = snapshot.deployments.get(`${ref.namespace}/${ref.name}`);
    return deployment ? judgeConverged(deployment, snapshot.podsByApp.get(`${ref.namespace}/${ref.name}`) ?? [], snapshot.live) : 'deployment not found';
  };

const namespaceGone =
  (namespace: string): Probe =>
  (snapshot) =>
    snapshot.namespaces.has(namespace) ? `still there (${snapshot.namespaces.get(namespace) ?? 'no phase'})` : true;

const deploymentGone =
  (ref: DeploymentRef): Probe =>
  (snapshot) => {
    const there = snapshot.deployments.has(`${ref.namespace}/${ref.name}`);
    const left = snapshot.podsByApp.get(`${ref.namespace}/${ref.name}`)?.length ?? 0;
    return !there && left === 0 ? true : `${there ? 'deployment still there' : 'deployment gone'}, ${left} pods left`;
  };

export const settle = async (driver: ChaosDriver, ledger: LifecycleLedger, extra: readonly DeploymentRef[], timeoutMs: number): Promise<SettleVerdict> => {
  const started = Date.now();
  const surviving = [...extra, ...ledger.surviving];
  const pending = new Map<string, Probe>();
  for (const ref of surviving) pending.set(`deployment ${ref.namespace}/${ref.name} converged`, converged(ref));
  for (const namespace of ledger.deletedNamespaces) pending.set(`namespace ${namespace} deleted`, namespaceGone(namespace));
  for (const ref of ledger.deletedDeployments) pending.set(`deployment ${ref.namespace}/${ref.name} deleted with its pods`, deploymentGone(ref));
  const last = new Map<string, string>();
  await waitUntil('every Deployment converged and every deletion finished', async () => {
    const snapshot = await readSnapshot(driver).catch((error: unknown) => String(error));
    for (const [what, probe] of pending) {
      const state = typeof snapshot === 'string' ? snapshot : probe(snapshot);
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
