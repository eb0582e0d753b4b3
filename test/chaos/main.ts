/**
 * `npm run chaos -- [--rounds N] [--seed S] [--clients C] [--lifecycle-every K] [--dir DIR] [--keep]`:
 * the long, random chaos run. The clients' workload includes Deployment lifecycles (every
 * K-th turn, default 3: namespaced creates, scale-ups and -downs, rollouts, Deployment
 * deletes, namespace deletions). Each round injects 1–3 fault types drawn from the seed
 * (printed, so a run is repeated with `--seed`), then repairs and waits for convergence; at
 * the end every Deployment must converge and every deletion finish, and it checks the log
 * and every projection and prints one line of figures. Exits 1 when any acknowledged write
 * is lost, duplicated or out of real-time order, a pod is bound twice, a key is acted on by two
 * members of a controller group in one generation, a projection's hash
 * differs from a fresh replay, a node is over capacity, a Deployment did not converge or a
 * deletion did not finish, a component did not stop cleanly, or (50 rounds or more) a fault
 * type struck fewer than 20 acknowledged writes in flight.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { removeRun, runChaos } from './run.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    seed: { type: 'string' },
    clients: { type: 'string', default: '8' },
    'lifecycle-every': { type: 'string', default: '3' },
    dir: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
const root = mkdtempSync(join(values.dir ?? tmpdir(), 'logplane-chaos-'));
const rounds = Number(values.rounds);
const report = await runChaos({ root, seed, rounds, clients: Number(values.clients), lifecycleEvery: Number(values['lifecycle-every']) });
/** The target for a long run: each fault type struck at least this many acknowledged writes in flight. */
const IN_FLIGHT_TARGET = 20;
const failures = [
  ...report.failedRounds.map((r) => `failed round: ${r}`),
  ...report.acked.lost.map((l) => `lost: ${l}`),
  ...report.acked.duplicated.map((d) => `duplicated: ${d}`),
  ...report.acked.orderViolations.map((o) => `order: ${o}`),
  ...report.apiserverMissing.map((m) => `apiserver: ${m}`),
  ...report.counterMismatches.map((m) => `counter: ${m}`),
  ...report.bindings.doubleBindings.map((d) => `double binding: ${d}`),
  ...report.generations.violations.map((v) => `same generation: ${v}`),
  ...report.settled.unsettled.map((u) => `unsettled: ${u}`),
  ...(rounds >= 50
    ? Object.entries(report.ackedInFlight).filter(([, n]) => n < IN_FLIGHT_TARGET).map(([type, n]) => `${type} struck ${n} acknowledged writes in flight (target ${IN_FLIGHT_TARGET})`)
    : []),
  ...report.projections.filter((p) => p.stateHash !== p.replayHash).map((p) => `replay mismatch: ${p.name} at ${p.position}`),
  ...report.projections.flatMap((p) => [...p.missing.map((m) => `${p.name} misses ${m}`), ...p.overcommitted.map((o) => `${p.name}: ${o}`)]),
  ...report.leaked.map((l) => `leaked process ${l}`),
  ...Object.entries(report.exitCodes).filter(([, code]) => code !== 0).map(([name, code]) => `${name} exited ${code}`),
];
for (const failure of failures) process.stdout.write(`FAIL ${failure}\n`);
if (!values.keep) removeRun(root);
process.exit(failures.length === 0 ? 0 : 1);
