/**
 * One chaos run, start to verdict: the cluster, the workload, N rounds of faults, then the
 * checks (the log through the checker's own consumer; every apiserver's view; every
 * projection directory against a fresh replay) and one line of figures.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cleanup } from '../e2e/process.ts';
import { indexObserved, judgeBindings, type BindingVerdict } from './binding.ts';
import { judgeAcked, judgeProjection, openCheckerLog, readLogIndex, type AckedVerdict, type ProjectionVerdict } from './checker.ts';
import { indexActor, judgeGenerations, type GenerationVerdict } from './generations.ts';
import { startChaosCluster, type ChaosCluster } from './cluster.ts';
import { createRng } from './rng.ts';
import { createChaosDriver, FAULT_TYPES, waitUntil, type FaultType, type RoundResult } from './scenario.ts';
import { settle, type SettleVerdict } from './settle.ts';
import { COUNTER_ANNOTATION, createApiTarget, NAMESPACE, startWorkload } from './workload.ts';

export interface ChaosOptions {
  readonly root: string;
  readonly seed: number;
  readonly rounds: number;
  /** The faults of each round; default: 1–3 fault types drawn from the seed. */
  readonly plan?: (round: number) => readonly FaultType[];
  readonly clients?: number;
  readonly ackedBeforeFaults?: number;
  readonly ackedAfterFaults?: number;
  readonly convergeTimeoutMs?: number;
  /** Every k-th turn of a client is a step of its Deployment lifecycles (creates, scales, rollouts, deletes, namespace deletions); 0: none. */
  readonly lifecycleEvery?: number;
  /** The bound on the final convergence of every Deployment and deletion after the last round. */
  readonly settleTimeoutMs?: number;
  readonly say?: (line: string) => void;
}

export interface ChaosReport {
  /** Rounds that did not converge or finish within their bounds (the run stops at the first). */
  readonly failedRounds: readonly string[];
  readonly seed: number;
  readonly rounds: readonly RoundResult[];
  readonly acked: AckedVerdict;
  readonly writes: { total: number; acked: number; conflicts: number; refused: number; unknown: number };
  /** Acknowledged writes by `<subject> <kind>` (`deployment update`, `lifecycle-namespace delete`, …). */
  readonly ackedBySubject: Record<string, number>;
  /** Per fault type: acknowledged writes that were in flight when a fault of that type struck. */
  readonly ackedInFlight: Record<string, number>;
  readonly bindings: BindingVerdict;
  /** Reconciler commands judged by their actor headers: no key acted on by two members of a group in one generation. */
  readonly generations: GenerationVerdict;
  /** The final convergence of every surviving Deployment and finish of every deletion. */
  readonly settled: SettleVerdict;
  readonly projections: readonly ProjectionVerdict[];
  /** Per client: the value its final read saw, and what each apiserver lists. */
  readonly counterMismatches: readonly string[];
  /** Acknowledged creates an apiserver did not list once caught up. */
  readonly apiserverMissing: readonly string[];
  readonly exitCodes: Record<string, number | null>;
  /** Processes still running after every component stopped whose command line names the run's directory. */
  readonly leaked: readonly string[];
  readonly logEvents: number;
  readonly line: string;
}

/** The longest a round may take (faults, repairs, broker restarts and convergence each have their own, shorter bounds). */
const ROUND_DEADLINE_MS = 15 * 60_000;

/** `work`, or a failure naming `what` once `ms` have passed without it settling (a hang fails the run instead of stalling it). */
const withDeadline = async <T>(work: Promise<T>, ms: number, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 60_000} min`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
};

/** `pid: command line` of every process whose command line mentions `text`. */
const processesMentioning = (text: string): string[] =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .flatMap((pid) => {
      try {
        const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
        return command.includes(text) ? [`${pid}: ${command.slice(0, 200)}`] : [];
      } catch {
        return [];
      }
    });

/** The round plans of `npm run chaos`: 1–3 distinct fault types. */
export const randomPlan = (seed: number) => (round: number): FaultType[] => {
  const rng = createRng(seed * 7919 + round);
  const count = 1 + rng.int(3);
  const types = new Set<FaultType>();
  while (types.size < count) types.add(rng.pick(FAULT_TYPES));
  return [...types];
};

const countBy = <T extends string>(items: readonly T[]): Record<string, number> =>
  items.reduce<Record<string, number>>((acc, item) => ({ ...acc, [item]: (acc[item] ?? 0) + 1 }), {});

export const runChaos = async (options: ChaosOptions): Promise<ChaosReport> => {
  const say = options.say ?? ((line: string) => process.stdout.write(`${line}\n`));
  const rng = createRng(options.seed);
  const plan = options.plan ?? randomPlan(options.seed);
  mkdirSync(options.root, { recursive: true });
  say(`chaos: seed ${options.seed}, ${options.rounds} round(s), in ${options.root}`);
  const started = Date.now();
  let cluster: ChaosCluster | undefined;
  try {
    cluster = await startChaosCluster({ root: options.root });
    say(`  cluster up in ${Date.now() - started} ms: brokers ${cluster.brokers}, ${cluster.components.length} components, cluster ${cluster.clusterName}`);
    const targets = cluster.apiservers.map(createApiTarget);
    const driver = await createChaosDriver(cluster, targets, say);
    const c = cluster;
    try {
      await waitUntil('namespace chaos', async () => {
        const answer = await driver.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
        return answer.status === 201 || answer.status === 409;
      }, 60_000);
      await waitUntil('3 Ready nodes', async () => {
        const answer = await driver.request('GET', '/api/v1/nodes');
        const nodes = (answer.body as { items?: { status?: { conditions?: { type: string; status: string }[] } }[] }).items ?? [];
        return nodes.filter((n) => n.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True')).length === 3;
      }, 120_000);
      await driver.createDeployment('web', 6);
      await driver.waitConverged('web', 120_000);
      const workload = startWorkload({ targets, clients: options.clients ?? 4, lifecycleEvery: options.lifecycleEvery ?? 0, usable: (t) => c.apiservers.find((a) => a.component.name === t.name)!.component.up() });
      const rounds: RoundResult[] = [];
      /** A round that did not converge (or finish) in its bound: the run stops injecting, still checks everything, and fails. */
      const failedRounds: string[] = [];
      try {
        for (let round = 0; round < options.rounds; round++) {
          const ackedBefore = workload.acked().length;
          await waitUntil(`${options.ackedBeforeFaults ?? 50} writes acknowledged before round ${round + 1}`,
            () => workload.acked().length >= ackedBefore + (options.ackedBeforeFaults ?? 50), 120_000);
          say(`round ${round + 1}/${options.rounds}: ${workload.acked().length} writes acknowledged so far`);
          const result = await withDeadline(
            driver.runRound(plan(round), {
              rng,
              workload,
              ackedAfterFaults: options.ackedAfterFaults ?? 50,
              convergeTimeoutMs: options.convergeTimeoutMs ?? 120_000,
              deployment: 'web',
            }),
            ROUND_DEADLINE_MS,
            `round ${round + 1} (faults ${plan(round).join(', ')})`,
          ).catch((error: unknown) => {
            failedRounds.push(`round ${round + 1} (faults ${plan(round).join(', ')}): ${error instanceof Error ? error.message : String(error)}`);
            return undefined;
          });
          if (!result) {
            say(`  round ${round + 1} FAILED: ${failedRounds.at(-1)}`);
            // What a failed round left stopped or dead comes back, so the checks see a whole cluster.
            for (const component of c.components) if (component.paused()) component.resume();
            for (const component of c.components) if (!component.daemon().running()) await component.start().catch(() => undefined);
            break;
          }
          say(`  converged after ${result.convergenceMs} ms; writes in flight at each fault (then acknowledged): ${result.faults.map((f) => `${f.type} ${f.inFlight} (${f.ackedInFlight})`).join(', ')}`);
          rounds.push(result);
        }
      } finally {
        // A round that failed may have left a component stopped: the workload's last reads need an apiserver.
        for (const component of c.components) if (component.paused()) component.resume();
        await workload.stop();
      }
      const writes = workload.writes;
      say(`  workload stopped at ${Date.now() - started} ms`);
      const settled = await settle(driver, workload.ledger, [{ namespace: NAMESPACE, name: 'web' }], options.settleTimeoutMs ?? 180_000);
      say(`  ${settled.deployments} deployments converged, ${settled.namespaceDeletions} namespace and ${settled.deploymentDeletions} deployment deletions finished in ${settled.ms} ms; unsettled: ${settled.unsettled.length}`);

      const checkerLog = await openCheckerLog(c.brokers, c.clusterName, c.partitions);
      try {
        const index = await readLogIndex(checkerLog);
        const acked = judgeAcked(writes, index);
        const observedEvents = await indexObserved(index.bindings, checkerLog, index.end.observed, (record) => indexActor(index.generations, record));
        const generations = judgeGenerations(index.generations);
        say(`  read the log through the checker's consumer at ${Date.now() - started} ms`);
        // Every apiserver lists every acknowledged create once it has folded to the log's end.
        const apiserverMissing: string[] = [];
        const counterMismatches: string[] = [];
        const ackedCreates = writes.filter((w) => w.outcome === 'acked' && w.kind === 'create' && w.subject !== 'deployment' && !w.transient);
        for (const target of targets) {
          let absent: string[] = [];
          let counters: string[] = [];
          const caughtUp = await waitUntil(`${target.name} lists every acknowledged create and the final counters`, async () => {
            const answer = await target.request('GET', '/api/v1/namespaces');
            if (answer.status !== 200) return false;
            const items = (answer.body as { items: { metadata: { name: string; uid: string; annotations?: Record<string, string> } }[] }).items;
            const byName = new Map(items.map((i) => [i.metadata.name, i]));
            absent = ackedCreates.filter((w) => byName.get(w.name)?.metadata.uid !== w.uid).map((w) => `${target.name}: ${w.op} ${w.name} (uid ${w.uid}, listed ${byName.get(w.name)?.metadata.uid ?? 'none'})`);
            counters = [...workload.counters()]
              .map(([id, value]) => ({ id, value, listed: byName.get(`chaos-counter-${id}`)?.metadata.annotations?.[COUNTER_ANNOTATION] }))
              .filter(({ value, listed }) => Number(listed) !== value)
              .map(({ id, value, listed }) => `${target.name}: chaos-counter-${id} lists ${listed ?? 'none'}, the client's last read ${value}`);
            return absent.length === 0 && counters.length === 0;
          }, 30_000).catch(() => false);
          if (!caughtUp) {
            apiserverMissing.push(...absent);
            counterMismatches.push(...counters);
          }
        }
        for (const [id, value] of workload.counters()) {
          const ackedValues = writes.filter((w) => w.client === id && w.subject === 'counter' && w.kind === 'update' && w.outcome === 'acked').map((w) => w.value!);
          if (ackedValues.length > 0 && value < Math.max(...ackedValues)) counterMismatches.push(`client ${id}: final ${value} < acknowledged ${Math.max(...ackedValues)}`);
        }

        say(`  checked the log (${index.events} desired, ${observedEvents} observed events) and the apiservers' lists at ${Date.now() - started} ms`);
        const exitCodes = await c.stopComponents();
        // No process of a component outlives it (the brokers are still up: their command lines name root/kafka).
        const leaked = processesMentioning(options.root).filter((p) => !p.includes(join(options.root, 'kafka')));
        // Every projection directory, now that its process has exited, against a fresh replay.
        const scratch = join(options.root, 'replays');
        mkdirSync(scratch, { recursive: true });
        const projections: ProjectionVerdict[] = [];
        for (const component of c.components) {
          for (const entry of readdirSync(component.dataDir).filter((e) => e.startsWith('projection-'))) {
            const verdict = await judgeProjection(`${component.name}/${entry}`, join(component.dataDir, entry), checkerLog, writes, index, scratch);
            projections.push(verdict);
            for (const [id, value] of workload.counters()) {
              const held = verdict.counters.get(id);
              if (verdict.notYetFolded === 0 && held !== value) counterMismatches.push(`${verdict.name}: chaos-counter-${id} = ${held}, the client read ${value}`);
            }
          }
        }
        const bindings = judgeBindings(index.bindings, new Map(projections.map((p) => [p.name, p.podNodes])));
        const faults = rounds.flatMap((r) => r.faults);
        const byType = countBy(faults.map((f) => f.type));
        const ackedInFlight = faults.reduce<Record<string, number>>((acc, f) => ({ ...acc, [f.type]: (acc[f.type] ?? 0) + f.ackedInFlight }), {});
        const outcomes = countBy(writes.map((w) => w.outcome ?? 'unknown'));
        const mismatches = projections.filter((p) => p.stateHash !== p.replayHash).length;
        const overcommits = projections.reduce((n, p) => n + p.overcommitted.length, 0);
        const line =
          `chaos seed=${options.seed} rounds=${rounds.length} failed-rounds=${failedRounds.length} faults=${Object.entries(byType).map(([t, n]) => `${t}:${n}`).join(',') || 'none'} ` +
          `acked-in-flight=${Object.entries(ackedInFlight).map(([t, n]) => `${t}:${n}`).join(',') || 'none'} ` +
          `writes=${writes.length} acked=${acked.acked + writes.filter((w) => w.kind === 'delete' && w.outcome === 'acked').length} conflicts=${outcomes['conflict'] ?? 0} refused=${outcomes['refused'] ?? 0} unknown=${outcomes['unknown'] ?? 0} ` +
          `lost=${acked.lost.length} duplicated=${acked.duplicated.length} order-violations=${acked.orderViolations.length} ` +
          `double-bindings=${bindings.doubleBindings.length} contested-bindings=${bindings.contested} same-generation-actions=${generations.violations.length} stamped-commands=${generations.stamped} group-generations=${generations.generations} ` +
          `overcommits=${overcommits} deployments=${settled.deployments} namespace-deletions=${settled.namespaceDeletions} deployment-deletions=${settled.deploymentDeletions} unsettled=${settled.unsettled.length} ` +
          `longest-convergence=${Math.max(settled.ms, ...rounds.map((r) => r.convergenceMs))}ms ` +
          `projections=${projections.length} replay-mismatches=${mismatches} leaked-processes=${leaked.length} log-events=${index.events} wall=${Math.round((Date.now() - started) / 1000)}s`;
        say(line);
        const problems = [...failedRounds, ...acked.lost, ...acked.duplicated, ...acked.orderViolations, ...apiserverMissing, ...counterMismatches, ...bindings.doubleBindings, ...generations.violations, ...settled.unsettled,
          ...projections.flatMap((p) => [...p.missing, ...p.overcommitted, ...(p.stateHash === p.replayHash ? [] : [`${p.name}: hash ${p.stateHash} ≠ replay ${p.replayHash}`])])];
        for (const problem of problems.slice(0, 20)) say(`  PROBLEM ${problem}`);
        const unknownDetails = countBy(writes.filter((w) => w.outcome === 'unknown').map((w) => `${w.apiserver}: ${(w.detail ?? '').slice(0, 120)}`));
        for (const [detail, n] of Object.entries(unknownDetails).sort((a, b) => b[1] - a[1]).slice(0, 5)) say(`  unknown outcome ×${n}: ${detail}`);
        return {
          seed: options.seed,
          rounds,
          failedRounds,
          acked,
          writes: { total: writes.length, acked: acked.acked, conflicts: outcomes['conflict'] ?? 0, refused: outcomes['refused'] ?? 0, unknown: outcomes['unknown'] ?? 0 },
          ackedInFlight,
          ackedBySubject: countBy(writes.filter((w) => w.outcome === 'acked').map((w) => `${w.subject} ${w.kind}`)),
          bindings,
          generations,
          settled,
          projections,
          counterMismatches,
          apiserverMissing,
          exitCodes,
          leaked,
          logEvents: index.events,
          line,
        };
      } finally {
        await checkerLog.close();
      }
    } finally {
      await driver.close().catch(() => undefined);
    }
  } finally {
    if (cluster) {
      for (const component of cluster.components) await component.kill();
      await cluster.kafka.stop();
    }
    cleanup();
  }
};

/** Removes a run's directory (brokers' data, projections). */
export const removeRun = (root: string): void => rmSync(root, { recursive: true, force: true });
