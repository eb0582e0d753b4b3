/**
 * One client's Deployment lifecycles, a step at a time: it creates a Namespace
 * `chaos-l<client>-<n>` and a Deployment `app-<client>-<n>` in it (1 replica), scales it up,
 * rolls it out (a new image in the pod template) and scales it down (each a read-modify-write
 * PUT with the resourceVersion it read), then deletes either the whole Namespace (even n: the
 * namespace controller must empty and finish it) or only the Deployment (odd n: the garbage
 * collector must take its ReplicaSets and pods; the Namespace stays). Then the next lifecycle.
 *
 * Creates and updates carry the op annotation like every other write of the workload, so the
 * checker finds the acknowledged ones in the log; deletes are not tagged (an ObjectDeleted
 * carries no object) and are judged at the end instead: a deleted Namespace or Deployment must
 * be gone, and an acknowledged create of something later deleted is not expected in a
 * projection (`transient`). A step whose outcome is unknown re-reads before it goes on.
 */
import { assertNever } from '../../schemas/index.ts';
import { OP_ANNOTATION, type ApiAnswer, type ApiTarget, type WriteRecord, type WriteSubject } from './workload.ts';

/** A Deployment the workload created, by namespace and name. */
export interface DeploymentRef {
  readonly namespace: string;
  readonly name: string;
}

export interface LifecycleLedger {
  /** Deployments created and not deleted (nor their namespace): they must converge. */
  readonly surviving: DeploymentRef[];
  /** Namespaces whose deletion was sent (acknowledged or not): they must be gone. */
  readonly deletedNamespaces: string[];
  /** Deployments deleted on their own: they, their ReplicaSets and pods must be gone. */
  readonly deletedDeployments: DeploymentRef[];
}

type Phase =
  | { readonly type: 'idle' }
  | { readonly type: 'namespace'; readonly namespace: string; readonly created: WriteRecord[] }
  | { readonly type: 'deployed'; readonly ref: DeploymentRef; readonly created: WriteRecord[]; readonly mutations: number }
  | { readonly type: 'deleting-deployment'; readonly ref: DeploymentRef }
  | { readonly type: 'deleting-namespace'; readonly namespace: string };

/** The mutations of a lifecycle, in order; then the delete. */
const MUTATIONS = ['scale-up', 'rollout', 'scale-down'] as const;
const IMAGES = ['logplane/echo:1', 'logplane/echo:2'] as const;

export const deploymentManifest = (namespace: string, name: string, replicas: number, op?: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace, ...(op === undefined ? {} : { annotations: { [OP_ANNOTATION]: op } }) },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: IMAGES[0] }] } },
  },
});

export const deploymentPath = (ref: DeploymentRef): string => `/apis/apps/v1/namespaces/${ref.namespace}/deployments/${ref.name}`;

interface DeploymentObject {
  metadata: { name: string; resourceVersion?: string; deletionTimestamp?: string | null; annotations?: Record<string, string> };
  spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
}

export interface Lifecycle {
  step(): Promise<void>;
  /**
   * When the workload stops: a deletion begun is sent until acknowledged or seen (the ledger
   * expects it to finish); anything else stays as it is (a surviving Deployment must converge).
   */
  finish(): Promise<void>;
}

/**
 * `send` makes one write and records it under `op` (the workload's recorder; deletes have no op
 * annotation and get an op id of their own); reads go through `nextTarget`.
 */
export const createLifecycle = (options: {
  client: number;
  ledger: LifecycleLedger;
  nextOp: () => string;
  nextTarget: () => ApiTarget;
  send: (op: string | undefined, subject: WriteSubject, kind: WriteRecord['kind'], name: string, method: string, path: string, body: unknown, ok: readonly number[]) => Promise<WriteRecord>;
}): Lifecycle => {
  const { client, ledger } = options;
  let phase: Phase = { type: 'idle' };
  let serial = 0;
  const read = async (path: string): Promise<ApiAnswer | undefined> => {
    try {
      return await options.nextTarget().request('GET', path);
    } catch {
      return undefined;
    }
  };
  const gone = (answer: ApiAnswer | undefined): boolean =>
    answer !== undefined && (answer.status === 404 || Boolean((answer.body as DeploymentObject).metadata?.deletionTimestamp));

  const step = async (): Promise<void> => {
    switch (phase.type) {
      case 'idle': {
        const namespace = `chaos-l${client}-${serial}`;
        const op = options.nextOp();
        const record = await options.send(op, 'lifecycle-namespace', 'create', namespace, 'POST', '/api/v1/namespaces',
          { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, annotations: { [OP_ANNOTATION]: op } } }, [201]);
        if (record.outcome === 'acked' || (await read(`/api/v1/namespaces/${namespace}`))?.status === 200) phase = { type: 'namespace', namespace, created: [record] };
        return;
      }
      case 'namespace': {
        const ref = { namespace: phase.namespace, name: `app-${client}-${serial}` };
        const op = options.nextOp();
        const record = await options.send(op, 'deployment', 'create', `${ref.namespace}/${ref.name}`, 'POST', `/apis/apps/v1/namespaces/${ref.namespace}/deployments`,
          deploymentManifest(ref.namespace, ref.name, 1, op), [201]);
        if (record.outcome === 'acked' || (await read(deploymentPath(ref)))?.status === 200) {
          ledger.surviving.push(ref);
          phase = { type: 'deployed', ref, created: [...phase.created, record], mutations: 0 };
        }
        return;
      }
      case 'deployed': {
        const { ref, created, mutations } = phase;
        const mutation = MUTATIONS[mutations];
        if (mutation === undefined) {
          // Everything this lifecycle created is on its way out: no projection must still hold it.
          for (const record of created) record.transient = true;
          ledger.surviving.splice(ledger.surviving.indexOf(ref), 1);
          if (serial % 2 === 0) {
            ledger.deletedNamespaces.push(ref.namespace);
            phase = { type: 'deleting-namespace', namespace: ref.namespace };
          } else {
            created[0]!.transient = false;
            ledger.deletedDeployments.push(ref);
            phase = { type: 'deleting-deployment', ref };
          }
          return step();
        }
        const current = await read(deploymentPath(ref));
        if (current?.status !== 200) return;
        const deployment = current.body as DeploymentObject;
        const op = options.nextOp();
        const container = deployment.spec.template.spec.containers[0]!;
        switch (mutation) {
          case 'scale-up':
            deployment.spec.replicas = Math.min(3, deployment.spec.replicas + 2);
            break;
          case 'rollout':
            container.image = container.image === IMAGES[0] ? IMAGES[1] : IMAGES[0];
            break;
          case 'scale-down':
            deployment.spec.replicas = Math.max(1, deployment.spec.replicas - 1);
            break;
          default:
            assertNever(mutation);
        }
        deployment.metadata.annotations = { ...deployment.metadata.annotations, [OP_ANNOTATION]: op };
        const record = await options.send(op, 'deployment', 'update', `${ref.namespace}/${ref.name}`, 'PUT', deploymentPath(ref), deployment, [200]);
        // A refused or unknown update is tried again (on a fresh read) at the next step.
        if (record.outcome === 'acked') phase = { ...phase, mutations: mutations + 1 };
        return;
      }
      case 'deleting-deployment': {
        const { ref } = phase;
        const record = await options.send(undefined, 'deployment', 'delete', `${ref.namespace}/${ref.name}`, 'DELETE', deploymentPath(ref), undefined, [200, 202]);
        if (record.outcome === 'acked' || gone(await read(deploymentPath(ref)))) {
          serial++;
          phase = { type: 'idle' };
        }
        return;
      }
      case 'deleting-namespace': {
        const { namespace } = phase;
        const record = await options.send(undefined, 'lifecycle-namespace', 'delete', namespace, 'DELETE', `/api/v1/namespaces/${namespace}`, undefined, [200, 202]);
        if (record.outcome === 'acked' || gone(await read(`/api/v1/namespaces/${namespace}`))) {
          serial++;
          phase = { type: 'idle' };
        }
        return;
      }
      default:
        assertNever(phase);
    }
  };
  const deleting = (): boolean => phase.type === 'deleting-deployment' || phase.type === 'deleting-namespace';
  return {
    step,
    finish: async () => {
      for (let attempt = 0; attempt < 100 && deleting(); attempt++) {
        await step();
        if (deleting()) await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
  };
};
