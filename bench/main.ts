/**
 * `npm run bench`: logplane measured where its users feel it, on both log adapters, with
 * each figure beside its target (issue 7) and its outside anchor (Kubernetes, Nomad).
 *
 *   npm run bench [-- --only schedule,replay] [--log embedded|kafka|both] [--quick]
 *                 [--json | --markdown] [--save file.json]
 *
 * Scenarios: schedule, memory (measured after schedule, in the same run), events-cost (the
 * schedule workload again without Events, embedded log only), scheduler-perf
 * (kube's scheduler_perf workloads: anti-affinity, affinity, spreading, extended resources,
 * preemption; BENCH_SCHEDULER_PERF=Name,… picks some), envelope (5,000 nodes and 150,000
 * pods, embedded log only), replay,
 * timetravel (on the replayed projection), api, startup, failover, dashboard (the timeline
 * of one namespace out of a long history, in headless Chromium). Each (scenario, log)
 * runs in its own child process, so one run's memory and JIT state do not leak into the
 * next and a stuck run is ended by its timeout; `--in-process` runs them here instead.
 * `--json` prints the results as JSON instead of tables, `--markdown` as Markdown tables;
 * `--save` also writes the JSON to a file, `--from file.json` prints a saved run again.
 * Kafka comes from KAFKA_BROKERS or `.kafka-local/state.json` (`npm run kafka:start`); if no
 * broker answers, the run says so and starts a single broker of its own from the Apache jars
 * (in a temp directory, stopped at the end); only if that fails too does it measure the
 * embedded log only.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { createKafkaLog } from '../log/kafka/index.ts';
import { startLocalBroker, type LocalBroker } from '../log/kafka/broker/launcher.ts';
import { kafkaBrokers } from '../test/kafka-env.ts';
import { benchKafkaCluster, deleteKafkaClusters } from './kafka-clusters.ts';
import { stopRunningClusters } from './cluster.ts';
import { describeSweep, sweepLeftovers } from './leftovers.ts';
import { apiScenario } from './scenarios/api.ts';
import { dashboardScenario } from './scenarios/dashboard.ts';
import { failoverScenario } from './scenarios/failover.ts';
import { peersScenario } from './scenarios/peers.ts';
import { podStartupScenario } from './scenarios/pod-startup.ts';
import { replayAndTimeTravel } from './scenarios/replay.ts';
import { scheduleScenario } from './scenarios/schedule.ts';
import { schedulerPerfScenario } from './scenarios/scheduler-perf.ts';
import { envelopeScenario } from './scenarios/envelope.ts';
import type { LogKind, ScenarioContext, ScenarioResult } from './support.ts';

// The heap policy of the logplane command (bin/logplane.mjs): the old generation grows to at
// most 2.25x its live size between full GCs, so the scenarios measure the control plane as it runs.
setFlagsFromString('--heap-growing-percent=125');

const SCENARIOS = ['schedule', 'memory', 'events-cost', 'scheduler-perf', 'envelope', 'replay', 'timetravel', 'api', 'peers', 'startup', 'failover', 'dashboard'] as const;
type ScenarioName = (typeof SCENARIOS)[number];

/** What one child process runs: scenarios that share their setup run together. */
interface Unit {
  readonly scenarios: readonly ScenarioName[];
  readonly log: LogKind;
}

/** Scenarios whose figure does not depend on the log adapter run on the embedded log only. */
const LOG_INDEPENDENT: ReadonlySet<ScenarioName> = new Set(['timetravel', 'dashboard']);
/** Scenarios measured on the embedded log only (long runs whose Kafka figure would add little). */
const EMBEDDED_ONLY: ReadonlySet<ScenarioName> = new Set(['events-cost', 'envelope']);

const RESULT_MARKER = '@@bench-result ';

interface KafkaStatus {
  readonly available: boolean;
  readonly brokers: readonly string[];
  readonly reason?: string;
}

const withTimeout = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms).unref()),
  ]);

const tcpReachable = (broker: string, timeoutMs: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const [host, port] = [broker.slice(0, broker.lastIndexOf(':')), Number(broker.slice(broker.lastIndexOf(':') + 1))];
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no TCP connection to ${broker} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.end();
      resolve();
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot connect to ${broker}: ${error.message}`));
    });
  });

/** Finds a Kafka broker and checks that it answers (TCP, then a log setup), without hanging. */
const probeKafka = async (): Promise<KafkaStatus> => {
  let brokers: string[];
  try {
    brokers = kafkaBrokers();
  } catch (error) {
    return { available: false, brokers: [], reason: error instanceof Error ? error.message : String(error) };
  }
  try {
    await tcpReachable(brokers[0]!, 2_000);
    const log = await withTimeout(
      createKafkaLog({ brokers, cluster: benchKafkaCluster('bench-probe'), connectionTimeoutMs: 2_000, logLevel: 'nothing' }),
      20_000,
      'Kafka',
    );
    await log.close();
    await deleteKafkaClusters(brokers);
    return { available: true, brokers };
  } catch (error) {
    return { available: false, brokers, reason: error instanceof Error ? error.message : String(error) };
  }
};

/** Runs one unit in this process, then deletes the Kafka clusters it wrote (kafka-clusters.ts). */
const runUnit = async (unit: Unit, quick: boolean, brokers: readonly string[]): Promise<ScenarioResult[]> => {
  try {
    return await runScenarios(unit, quick, brokers);
  } finally {
    if (unit.log === 'kafka') {
      const started = performance.now();
      await deleteKafkaClusters(brokers).then(
        (topics) => topics > 0 && process.stderr.write(`  deleted the unit's ${topics} Kafka topics in ${Math.round(performance.now() - started)} ms\n`),
        (error: unknown) => process.stderr.write(`  could not delete the unit's Kafka topics: ${error instanceof Error ? error.message : String(error)}\n`),
      );
    }
  }
};

/** The scenarios of one unit, in this process. */
const runScenarios = async (unit: Unit, quick: boolean, brokers: readonly string[]): Promise<ScenarioResult[]> => {
  const context: ScenarioContext = { log: unit.log, quick, brokers, progress: (line) => process.stderr.write(`  ${line}\n`) };
  const wanted = new Set(unit.scenarios);
  const results: ScenarioResult[] = [];
  if (wanted.has('schedule') || wanted.has('memory') || wanted.has('events-cost')) {
    results.push(...(await scheduleScenario(context, { eventsCost: wanted.has('events-cost') })).filter((r) => wanted.has(r.scenario as ScenarioName)));
  }
  if (wanted.has('scheduler-perf')) results.push(await schedulerPerfScenario(context));
  if (wanted.has('envelope')) results.push(await envelopeScenario(context));
  if (wanted.has('replay') || wanted.has('timetravel')) {
    const parts = new Set([...wanted].filter((s): s is 'replay' | 'timetravel' => s === 'replay' || s === 'timetravel'));
    results.push(...(await replayAndTimeTravel(context, parts)));
  }
  if (wanted.has('api')) results.push(await apiScenario(context));
  if (wanted.has('peers')) results.push(await peersScenario(context));
  if (wanted.has('startup')) results.push(await podStartupScenario(context));
  if (wanted.has('failover')) results.push(await failoverScenario(context));
  if (wanted.has('dashboard')) results.push(await dashboardScenario(context));
  return results;
};

/** Runs one unit in a child process of the same runtime (tsx loader, profiler flags and all). */
const runChild = (unit: Unit, quick: boolean, brokers: readonly string[], timeoutMs: number): Promise<ScenarioResult[]> =>
  new Promise((resolve, reject) => {
    const args = [
      ...process.execArgv,
      fileURLToPath(import.meta.url),
      '--child',
      '--only',
      unit.scenarios.join(','),
      '--log',
      unit.log,
      ...(quick ? ['--quick'] : []),
    ];
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, KAFKA_BROKERS: brokers.join(',') },
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    let hardStop: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      // SIGTERM first: the child stops its clusters (and their pods); SIGKILL if it hangs.
      child.kill('SIGTERM');
      hardStop = setTimeout(() => child.kill('SIGKILL'), 15_000);
      reject(new Error(`${unit.scenarios.join('+')} on ${unit.log} did not finish within ${timeoutMs / 1000} s and was stopped`));
    }, timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(hardStop);
      const line = stdout.split('\n').find((l) => l.startsWith(RESULT_MARKER));
      if (line) resolve(JSON.parse(line.slice(RESULT_MARKER.length)) as ScenarioResult[]);
      else reject(new Error(`${unit.scenarios.join('+')} on ${unit.log} exited (${signal ?? `code ${code}`}) without a result`));
    });
  });

/** A figure's value with its unit; NaN (JSON null) when it could not be measured. */
const formatValue = (value: number | null, unit: string): string =>
  value === null || Number.isNaN(value) ? 'n/a' : `${value.toLocaleString('en-US', { maximumFractionDigits: 3 })} ${unit}`;

/** Prints one table per scenario: figure, log, value, target, met; anchors under it. */
const printTables = (results: readonly ScenarioResult[]): void => {
  for (const scenario of SCENARIOS) {
    const rows = results.filter((r) => r.scenario === scenario);
    if (rows.length === 0) continue;
    const table = rows.flatMap((r) =>
      r.figures.map((f) => ({
        log: r.log,
        figure: f.name,
        value: formatValue(f.value, f.unit),
        target: f.target ?? '',
        met: f.met === undefined ? '' : f.met ? 'met' : 'NOT MET',
      })),
    );
    const columns = ['figure', 'log', 'value', 'target', 'met'] as const;
    const widths = columns.map((c) => Math.max(c.length, ...table.map((row) => row[c].length)));
    const line = (cells: readonly string[]): string => cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' │ ');
    console.log(`\n${scenario}`);
    console.log(line(columns));
    console.log(widths.map((w) => '─'.repeat(w)).join('─┼─'));
    for (const row of table) console.log(line(columns.map((c) => row[c])));
    const anchors = [...new Set(rows.flatMap((r) => r.figures.flatMap((f) => (f.anchor ? [f.anchor] : []))))];
    for (const anchor of anchors) console.log(`  anchor: ${anchor}`);
    for (const r of rows) {
      console.log(`  ${r.log}: ${Object.entries(r.setup).map(([k, v]) => `${k}=${v}`).join(', ')}`);
      for (const note of r.notes) console.log(`  ${r.log}: ${note}`);
    }
  }
};

/** The same tables as Markdown, one per scenario, anchors in their own column. */
const printMarkdown = (results: readonly ScenarioResult[]): void => {
  for (const scenario of SCENARIOS) {
    const rows = results.filter((r) => r.scenario === scenario);
    if (rows.length === 0) continue;
    console.log(`\n### ${scenario}\n`);
    console.log('| figure | log | value | target | met | anchor |');
    console.log('|---|---|---|---|---|---|');
    for (const r of rows) {
      for (const f of r.figures) {
        const met = f.met === undefined ? '' : f.met ? 'met' : '**not met**';
        console.log(`| ${f.name} | ${r.log} | ${formatValue(f.value, f.unit)} | ${f.target ?? ''} | ${met} | ${f.anchor ?? ''} |`);
      }
    }
    for (const r of rows) console.log(`\n${r.log}: ${Object.entries(r.setup).map(([k, v]) => `${k}=${v}`).join(', ')}. ${r.notes.join(' ')}`);
  }
};

const machine = () => ({
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? 'unknown',
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  freeMemoryGiB: Math.round(freemem() / 2 ** 30),
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  /** 1-minute load average at the end of the run. */
  loadAverage1m: Math.round(loadavg()[0]! * 100) / 100,
});

const main = async (): Promise<void> => {
  const { values } = parseArgs({
    options: {
      only: { type: 'string', multiple: true },
      log: { type: 'string', default: 'both' },
      quick: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      markdown: { type: 'boolean', default: false },
      save: { type: 'string' },
      from: { type: 'string' },
      'in-process': { type: 'boolean', default: false },
      child: { type: 'boolean', default: false },
    },
  });
  const only = (values.only ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  for (const name of only) {
    if (!(SCENARIOS as readonly string[]).includes(name)) throw new Error(`--only: unknown scenario "${name}"; choose from ${SCENARIOS.join(', ')}`);
  }
  const selected = (only.length > 0 ? only : [...SCENARIOS]) as ScenarioName[];
  if (!['embedded', 'kafka', 'both'].includes(values.log)) throw new Error(`--log must be embedded, kafka or both, got ${values.log}`);
  const quick = values.quick;

  // Told to stop (a unit's timeout, Ctrl-C): stop the clusters running in this process, so
  // no pod outlives the run (process-runtime pods run in sessions of their own).
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      void stopRunningClusters().finally(() => process.exit(128 + (signal === 'SIGTERM' ? 15 : 2)));
    });
  }

  if (values.child) {
    const log = values.log as LogKind;
    const brokers = log === 'kafka' ? kafkaBrokers() : [];
    const results = await runUnit({ scenarios: selected, log }, quick, brokers);
    process.stdout.write(`${RESULT_MARKER}${JSON.stringify(results)}\n`);
    return;
  }

  if (values.from) {
    // Render a saved run (--save) again, e.g. as Markdown, without measuring.
    const saved = JSON.parse(readFileSync(values.from, 'utf8')) as { command: string; machine: ReturnType<typeof machine> & { loadAverage1mAtStart: number }; results: ScenarioResult[] };
    const m = saved.machine;
    console.log(`Command: \`${saved.command}\`. Machine: ${m.cpus} cores (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}; load average ${m.loadAverage1mAtStart} → ${m.loadAverage1m}.`);
    if (values.markdown) printMarkdown(saved.results);
    else printTables(saved.results);
    return;
  }

  // What a killed run left (its pods still running, its directory): gone before anything is measured.
  const swept = describeSweep(await sweepLeftovers());
  if (swept !== null) process.stderr.write(`${swept}\n`);

  const startedAt = new Date();
  const loadAtStart = Math.round(loadavg()[0]! * 100) / 100;
  const report = (line: string): void => {
    process.stderr.write(`${line}\n`);
  };
  let logs: LogKind[] = values.log === 'both' ? ['embedded', 'kafka'] : [values.log as LogKind];
  let kafka: KafkaStatus = { available: false, brokers: [], reason: 'not requested' };
  let ownBroker: LocalBroker | undefined;
  if (logs.includes('kafka')) {
    kafka = await probeKafka();
    if (!kafka.available) {
      // None answers: start a single broker of our own for this run (stopped at the end).
      report(`Kafka: none answers (${kafka.reason}); starting a local broker for this run ...`);
      try {
        const dir = mkdtempSync(join(tmpdir(), 'logplane-bench-kafka-'));
        ownBroker = await startLocalBroker({ dataDir: join(dir, 'data'), stateFile: null, readyTimeoutMs: 180_000 });
        ownBrokerDir = dir;
        process.env['KAFKA_BROKERS'] = ownBroker.brokers;
        kafka = await probeKafka();
        if (kafka.available) report(`Kafka: started ${ownBroker.brokers} for this run`);
      } catch (error) {
        kafka = { available: false, brokers: [], reason: `no broker answered and starting one failed: ${error instanceof Error ? error.message : String(error)}` };
      }
    }
    if (!kafka.available) {
      report(`Kafka: NOT AVAILABLE (${kafka.reason}). Measuring the embedded log only.`);
      logs = logs.filter((l) => l !== 'kafka');
      if (logs.length === 0) logs = ['embedded'];
    } else {
      report(`Kafka: ${kafka.brokers.join(',')}`);
    }
  }

  // Units: scenarios that share a setup run together (schedule+memory+events-cost, replay+timetravel).
  const groups: ScenarioName[][] = [
    selected.filter((s) => s === 'schedule' || s === 'memory' || s === 'events-cost'),
    selected.filter((s) => s === 'replay' || s === 'timetravel'),
    ...selected.filter((s) => s === 'scheduler-perf' || s === 'envelope' || s === 'api' || s === 'peers' || s === 'startup' || s === 'failover' || s === 'dashboard').map((s) => [s]),
  ].filter((g) => g.length > 0);
  const units: Unit[] = groups.flatMap((group) =>
    logs.flatMap((log) => {
      const scenarios = log === 'embedded' ? group : group.filter((s) => !LOG_INDEPENDENT.has(s) && !EMBEDDED_ONLY.has(s));
      return scenarios.length > 0 ? [{ scenarios, log }] : [];
    }),
  );

  const timeoutMs = (quick ? 5 : 30) * 60_000;
  const results: ScenarioResult[] = [];
  const failures: { unit: string; error: string }[] = [];
  const inProcess = values['in-process'] || units.length === 1;
  for (const unit of units) {
    const label = `${unit.scenarios.join('+')} on ${unit.log}`;
    report(`▶ ${label}`);
    const started = performance.now();
    try {
      const unitResults = inProcess ? await runUnit(unit, quick, kafka.brokers) : await runChild(unit, quick, kafka.brokers, timeoutMs);
      results.push(...unitResults);
      report(`  done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      failures.push({ unit: label, error: message });
      report(`  FAILED: ${message}`);
    }
  }

  const command = `npm run bench --${process.argv.slice(2).length > 0 ? ` ${process.argv.slice(2).join(' ')}` : ''}`;
  const summary = {
    command,
    startedAt: startedAt.toISOString(),
    seconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    machine: { ...machine(), loadAverage1mAtStart: loadAtStart },
    quick,
    kafka,
    results,
    failures,
  };
  if (values.save) writeFileSync(values.save, `${JSON.stringify(summary, null, 2)}\n`);
  if (values.json) {
    console.log(JSON.stringify(summary, null, 2));
  } else if (values.markdown) {
    const m = summary.machine;
    console.log(`Command: \`${command}\`. Machine: ${m.cpus} cores (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}; load average ${m.loadAverage1mAtStart} → ${m.loadAverage1m}.`);
    printMarkdown(results);
  } else {
    const m = summary.machine;
    console.log(`logplane benchmarks — ${command}`);
    console.log(`machine: ${m.cpus} cores (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, ${m.platform}; load average ${m.loadAverage1mAtStart} at the start, ${m.loadAverage1m} at the end (other work on the machine slows every figure)`);
    console.log(`Kafka: ${kafka.available ? kafka.brokers.join(',') : `not measured (${kafka.reason})`}${quick ? '; QUICK sizes' : ''}`);
    printTables(results);
    const withTargets = results.flatMap((r) => r.figures.filter((f) => f.met !== undefined).map((f) => ({ ...f, log: r.log, scenario: r.scenario })));
    const met = withTargets.filter((f) => f.met).length;
    console.log(`\ntargets met: ${met} of ${withTargets.length}`);
    for (const f of withTargets.filter((x) => !x.met)) console.log(`  not met: ${f.scenario}/${f.log}: ${f.name} = ${formatValue(f.value, f.unit)} (target ${f.target})`);
    for (const failure of failures) console.log(`  FAILED: ${failure.unit}: ${failure.error}`);
  }
  if (ownBroker) {
    await ownBroker.stop();
    rmSync(ownBrokerDir!, { recursive: true, force: true });
  }
  process.exitCode = failures.length > 0 ? 1 : 0;
};

/** The directory of the broker this run started, if it started one. */
let ownBrokerDir: string | undefined;

main().then(
  () => process.exit(),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(2);
  },
);
