/**
 * Chaos rounds on a running {@link ChaosCluster}: while the workload writes, inject a
 * round's faults at once (SIGKILL of a broker, of an apiserver with writes in flight, of an
 * agent, of a controllers process; SIGSTOP/SIGCONT of a component; a controllers process
 * partitioned from the brokers by SIGSTOP for longer than the session timeout), let
 * writes go on, repair (restart, SIGCONT), and wait for the cluster to converge: the
 * Deployment's pods Running on live nodes only, its status updated and ready. Waits are for conditions, never fixed sleeps.
 */
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { topicName } from '../../log/port.ts';
import type { ChaosCluster } from './cluster.ts';
import type { ChaosComponent } from './component.ts';
import type { Rng } from './rng.ts';
import { NAMESPACE, type ApiTarget, type Workload } from './workload.ts';

export const FAULT_TYPES = ['broker-kill', 'apiserver-kill', 'agent-kill', 'controllers-kill', 'component-pause', 'controllers-partition'] as const;
export type FaultType = (typeof FAULT_TYPES)[number];

/** Polls `probe` until it returns a value (not undefined/false); throws after `timeoutMs` with `describe()`. */
export const waitUntil = async <T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs: number, describe?: () => string): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${describe ? `; ${describe()}` : ''}${lastError ? `; last error: ${String(lastError)}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

export interface InjectedFault {
  readonly type: FaultType;
  readonly target: string;
  readonly at: number;
  /** Writes (any apiserver) in flight when it hit. */
  readonly inFlight: number;
  /** Of those, the ones then acknowledged. */
  ackedInFlight: number;
}

export interface RoundResult {
  readonly faults: readonly InjectedFault[];
  /** From the faults to every Deployment pod Running on a live node. */
  readonly convergenceMs: number;
}

export interface Deployment {
  metadata: { name: string; namespace?: string; resourceVersion?: string; generation?: number };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; readyReplicas?: number; availableReplicas?: number };
  spec: { replicas: number; template: { metadata?: { annotations?: Record<string, string> }; spec: { containers: { name: string; image: string }[] } } };
}
export interface PodLike {
  metadata: { name: string; namespace?: string; deletionTimestamp?: string | null; labels?: Record<string, string> };
  spec: { nodeName?: string | null; containers: { image: string }[] };
  status?: { phase?: string };
}

export interface ChaosDriver {
  readonly admin: Admin;
  /** Any apiserver that answers (tries them in turn). */
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  createDeployment(name: string, replicas: number): Promise<void>;
  /** Read-modify-write of a Deployment through any apiserver, retried on 409 and unknown outcomes. */
  updateDeployment(name: string, change: (d: Deployment) => void): Promise<void>;
  /** Resolves once `name`'s pods are exactly spec.replicas of the current template, all Running on live nodes. */
  waitConverged(name: string, timeoutMs: number): Promise<void>;
  /** `true` when Deployment `namespace/name` is converged as {@link waitConverged} means it, else what is off. */
  convergedState(name: string, namespace?: string): Promise<string | true>;
  /** The agents' nodes that are up now. */
  liveNodes(): Set<string>;
  runRound(plan: readonly FaultType[], options: { rng: Rng; workload: Workload; ackedAfterFaults: number; convergeTimeoutMs: number; deployment: string }): Promise<RoundResult>;
  close(): Promise<void>;
}

/**
 * Whether `deployment` converged, given its pods (label app=<name>) and the live nodes: its
 * pods Running on live nodes with the current template, no others, and its status says so, as
 * `kubectl rollout status` reads it. True, or what is still off.
 */
export const judgeConverged = (deployment: Deployment, pods: readonly PodLike[], live: ReadonlySet<string>): string | true => {
  const image = deployment.spec.template.spec.containers[0]!.image;
  const good = pods.filter((p) => !p.metadata.deletionTimestamp && p.status?.phase === 'Running' && live.has(p.spec.nodeName ?? '') && p.spec.containers[0]?.image === image);
  const summary = `${good.length}/${deployment.spec.replicas} good of ${pods.length} pods (${pods.map((p) => `${p.metadata.name}@${p.spec.nodeName ?? '-'}:${p.status?.phase ?? '?'}${p.metadata.deletionTimestamp ? ':deleting' : ''}`).join(' ')})`;
  const status = deployment.status ?? {};
  const replicas = deployment.spec.replicas;
  const statusDone = (status.observedGeneration ?? 0) >= (deployment.metadata.generation ?? 0) && status.updatedReplicas === replicas && status.readyReplicas === replicas && status.replicas === replicas;
  const statusLine = `status observed ${status.observedGeneration ?? '-'}/${deployment.metadata.generation ?? '-'} updated ${status.updatedReplicas ?? '-'} ready ${status.readyReplicas ?? '-'} total ${status.replicas ?? '-'}`;
  return good.length === replicas && pods.length === replicas && statusDone ? true : `${summary}; ${statusLine}`;
};

const deploymentBody = (name: string, replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: NAMESPACE },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'logplane/echo:1' }] } },
  },
});

export const createChaosDriver = async (cluster: ChaosCluster, targets: readonly ApiTarget[], say: (line: string) => void): Promise<ChaosDriver> => {
  const admin = new Kafka({ brokers: cluster.brokers.split(','), clientId: 'chaos-driver', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const usable = (t: ApiTarget): boolean => cluster.apiservers.find((a) => a.component.name === t.name)!.component.up();
  let turn = 0;
  const request = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
    let lastError: unknown;
    for (let i = 0; i < targets.length; i++) {
      const target = targets[turn++ % targets.length]!;
      if (!usable(target)) continue;
      try {
        return await target.request(method, path, body, 20_000);
      } catch (error) {
        lastError = error;
      }
    }
    throw new Error(`no apiserver answered ${method} ${path}`, { cause: lastError });
  };
  const inFlightNow = (): number => targets.reduce((n, t) => n + t.inFlight(), 0);
  const liveNodes = (): Set<string> => new Set(cluster.agents.filter((a) => a.up()).map((a) => a.name.replace(/^agent-/, '')));

  const updateDeployment = async (name: string, change: (d: Deployment) => void): Promise<void> => {
    await waitUntil(`an update of deployment ${name}`, async () => {
      const got = await request('GET', `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/${name}`);
      if (got.status !== 200) return false;
      const deployment = got.body as Deployment;
      change(deployment);
      const put = await request('PUT', `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/${name}`, deployment);
      return put.status === 200;
    }, 120_000);
  };

  const convergedState = async (name: string, namespace = NAMESPACE): Promise<string | true> => {
    const got = await request('GET', `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`);
    if (got.status !== 200) return `deployment: ${got.status}`;
    const list = await request('GET', `/api/v1/namespaces/${namespace}/pods?labelSelector=app%3D${name}`);
    if (list.status !== 200) return `pods: ${list.status}`;
    return judgeConverged(got.body as Deployment, (list.body as { items: PodLike[] }).items, liveNodes());
  };
  const waitConverged = async (name: string, timeoutMs: number): Promise<void> => {
    let last = '';
    await waitUntil(`deployment ${name} converged on live nodes ${[...liveNodes()].join(',')}`, async () => {
      const state = await convergedState(name);
      if (state === true) return true;
      last = state;
      return false;
    }, timeoutMs, () => `last: ${last}`);
  };

  const desiredLeader = async (): Promise<number> => {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topicName(cluster.clusterName, 'desired')] });
    return topics[0]!.partitions.find((p) => p.partitionId === 0)!.leader;
  };
  const allInSync = async (): Promise<boolean> => {
    const { topics } = await admin.fetchTopicMetadata({ topics: (['desired', 'observed'] as const).map((t) => topicName(cluster.clusterName, t)) });
    return topics.every((t) => t.partitions.every((p) => p.isr.length === 3 && p.leader >= 0));
  };

  const runRound: ChaosDriver['runRound'] = async (plan, { rng, workload, ackedAfterFaults, convergeTimeoutMs, deployment }) => {
    const faults: InjectedFault[] = [];
    const repairs: (() => Promise<void>)[] = [];
    /** Agents killed this round: restarted only after convergence, so pods must run elsewhere. */
    const deadAgents: ChaosComponent[] = [];
    /**
     * The components a fault of this round already struck (killed, stopped, partitioned): a
     * component takes one fault per round, and the faults of one round, injected at once, never
     * take out every apiserver (the workload and the checks need one that answers).
     */
    const struck = new Set<string>();
    const spareApiservers = (): ChaosComponent[] => cluster.apiservers.map((a) => a.component).filter((c) => c.up() && !struck.has(c.name));
    const pickUp = (components: readonly ChaosComponent[]): ChaosComponent => {
      const up = components.filter((c) => c.up() && !struck.has(c.name));
      if (up.length === 0) throw new Error(`no running component among ${components.map((c) => c.name).join(', ')}`);
      return rng.pick(up);
    };
    const inject = async (type: FaultType): Promise<InjectedFault> => {
      switch (type) {
        case 'broker-kill': {
          const leader = await desiredLeader();
          const victim = cluster.kafka.nodes.find((n) => n.nodeId === leader) ?? rng.pick(cluster.kafka.nodes);
          // With appends in flight on a live apiserver, so that some are acknowledged after it.
          await waitUntil('writes in flight before the broker kill', () => targets.some((t) => t.inFlight() > 0 && usable(t)), 30_000);
          const at = Date.now();
          const inFlight = inFlightNow();
          await victim.kill('SIGKILL');
          repairs.push(async () => {
            await victim.restart(180_000);
            await waitUntil('every partition back to 3 in-sync replicas', allInSync, 180_000);
          });
          return { type, target: `broker ${victim.nodeId}`, at, inFlight, ackedInFlight: 0 };
        }
        case 'apiserver-kill': {
          // Keep one apiserver: the workload and the checks need one that answers.
          const spare = spareApiservers();
          if (spare.length < 2) throw new Error('apiserver-kill needs two running apiservers no other fault of the round struck');
          const victimComponent = rng.pick(spare);
          struck.add(victimComponent.name);
          const victim = cluster.apiservers.find((a) => a.component === victimComponent)!;
          const target = targets.find((t) => t.name === victim.component.name)!;
          // Mid-write: wait until it has writes in flight.
          await waitUntil(`${victim.component.name} with a request in flight`, () => target.inFlight() > 0, 30_000);
          const at = Date.now();
          const inFlight = inFlightNow();
          await victim.component.kill();
          repairs.push(() => victim.component.start());
          return { type, target: victim.component.name, at, inFlight, ackedInFlight: 0 };
        }
        case 'agent-kill': {
          const victim = pickUp(cluster.agents);
          struck.add(victim.name);
          const at = Date.now();
          await victim.kill();
          deadAgents.push(victim);
          return { type, target: victim.name, at, inFlight: inFlightNow(), ackedInFlight: 0 };
        }
        case 'controllers-kill': {
          const victim = pickUp(cluster.controllers);
          struck.add(victim.name);
          const at = Date.now();
          await victim.kill();
          repairs.push(() => victim.start());
          return { type, target: victim.name, at, inFlight: inFlightNow(), ackedInFlight: 0 };
        }
        case 'component-pause': {
          const victim = pickUp(cluster.components.filter((c) => c.kind !== 'apiserver' || spareApiservers().length > 1));
          struck.add(victim.name);
          const at = Date.now();
          victim.pause();
          // SIGCONT once the workload has made progress past the pause (about a second of writes).
          const ackedBefore = workload.acked().length;
          repairs.push(async () => {
            await waitUntil(`progress while ${victim.name} is stopped`, () => workload.acked().length >= ackedBefore + 20, 60_000);
            victim.resume();
          });
          return { type, target: `${victim.name} (SIGSTOP/SIGCONT)`, at, inFlight: inFlightNow(), ackedInFlight: 0 };
        }
        case 'controllers-partition': {
          const victim = pickUp(cluster.controllers);
          struck.add(victim.name);
          const at = Date.now();
          victim.pause();
          // Longer than the consumer session timeout (the group must move its partitions):
          // resumed once the workload's clients have gone on for 12 s of wall time.
          repairs.push(async () => {
            await waitUntil(`${victim.name} partitioned for longer than the session timeout`, () => Date.now() - at > 12_000, 60_000);
            victim.resume();
          });
          return { type, target: `${victim.name} (partitioned by SIGSTOP)`, at, inFlight: inFlightNow(), ackedInFlight: 0 };
        }
      }
    };

    const startedAt = Date.now();
    // The faults at once, and a scale-up while the controllers fail over.
    faults.push(...(await Promise.all(plan.map((type) => inject(type)))));
    say(`  faults: ${faults.map((f) => `${f.type} → ${f.target}`).join('; ')}`);
    const current = await waitUntil(`deployment ${deployment} read`, async () => {
      const answer = await request('GET', `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/${deployment}`);
      return answer.status === 200 && (answer.body as Deployment);
    }, 60_000);
    const replicas = current.spec.replicas >= 9 ? 6 : current.spec.replicas + 3;
    const rollout = rng.next() < 0.5;
    await updateDeployment(deployment, (d) => {
      d.spec.replicas = replicas;
      if (rollout) d.spec.template.spec.containers[0]!.image = d.spec.template.spec.containers[0]!.image === 'logplane/echo:1' ? 'logplane/echo:2' : 'logplane/echo:1';
    });
    say(`  deployment ${deployment}: replicas → ${replicas}${rollout ? ', new image' : ''}`);
    const ackedAt = workload.acked().length;
    await waitUntil(`${ackedAfterFaults} writes acknowledged after the faults`, () => workload.acked().length >= ackedAt + ackedAfterFaults, 120_000,
      () => `${workload.acked().length - ackedAt} so far; last unknown: ${workload.writes.filter((w) => w.outcome === 'unknown').at(-1)?.detail ?? 'none'}`);
    // Repairs at once (a SIGCONT waits for its own condition first).
    await Promise.all(repairs.map((repair) => repair()));
    await waitConverged(deployment, convergeTimeoutMs);
    const convergenceMs = Date.now() - startedAt;
    // The dead agents come back (their node Ready again) for the next round.
    for (const agent of deadAgents) await agent.start();
    for (const fault of faults) {
      fault.ackedInFlight = workload.acked().filter((w) => w.startedAt < fault.at && w.endedAt! > fault.at).length;
    }
    return { faults, convergenceMs };
  };

  return {
    admin,
    request,
    createDeployment: async (name, replicas) => {
      await waitUntil(`deployment ${name} created`, async () => {
        const answer = await request('POST', `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`, deploymentBody(name, replicas));
        return answer.status === 201 || answer.status === 409;
      }, 60_000);
    },
    updateDeployment,
    waitConverged,
    convergedState,
    liveNodes,
    runRound,
    close: () => admin.disconnect(),
  };
};
