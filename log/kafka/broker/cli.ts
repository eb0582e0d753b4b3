/**
 * `npm run kafka:start` / `npm run kafka:stop`: the local Kafka cluster for dev, CI and
 * users, one broker by default or `--brokers 3` (KRaft, a 3-voter controller quorum).
 * `start` is idempotent and returns once every broker answers, leaving them running in
 * the background; it prints `KAFKA_BROKERS=127.0.0.1:PORT[,...]` on stdout. `stop` stops
 * every broker the state file records.
 */
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { pino } from 'pino';
import { LocalKafkaError } from './errors.ts';
import { ensureLocalBroker, stopLocalBroker } from './launcher.ts';
import { KAFKA_VERSION, STATE_FILE, defaultDataDir } from './paths.ts';
import { readState } from './state.ts';

const log = pino({ name: 'kafka-local', level: process.env['LOG_LEVEL'] ?? 'info' }, pino.destination(2));

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('not a port number');
  return n;
}

function parseBrokerCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 9) throw new InvalidArgumentError('a broker count from 1 to 9');
  return n;
}

function fail(err: unknown): never {
  if (err instanceof LocalKafkaError) {
    log.error({ code: err.code, retriable: err.retriable, context: err.context }, err.code);
    process.stderr.write(`\n${err.message}\n`);
  } else {
    log.error({ err }, 'failed');
  }
  process.exit(1);
}

const program = new Command('kafka-local')
  .description(`Local Kafka ${KAFKA_VERSION} cluster (KRaft, one broker or several) for logplane dev, CI and tests`);

const stateFileOption = ['--state-file <file>', `where the running cluster is recorded (default: ${STATE_FILE})`] as const;

program.command('start')
  .description('start the cluster in the background (or reuse the running one) and print KAFKA_BROKERS=...')
  .option('--brokers <n>', 'brokers in the cluster; 3 gives topics replication factor 3 and min.insync.replicas 2 (default: the running cluster\'s, else 1)', parseBrokerCount)
  .option('--port <port>', 'client port of the first broker on 127.0.0.1, the others take the next ones (default: free ports)', parsePort)
  .option('--data-dir <dir>', 'data dir (default: data, or data-<n> for n brokers, beside the state file in .kafka-local/)')
  .option('--min-session-timeout-ms <ms>', 'broker group.min.session.timeout.ms', parsePort, 1_000)
  .option('--fresh', 'stop the running cluster and delete its data dir first (all topics are lost)')
  .option(...stateFileOption)
  .action(async (opts: { brokers?: number; port?: number; dataDir?: string; minSessionTimeoutMs: number; fresh?: boolean; stateFile?: string }) => {
    const t0 = Date.now();
    const stateFile = resolve(opts.stateFile ?? STATE_FILE);
    try {
      if (opts.fresh) {
        const stopped = await stopLocalBroker({ stateFile });
        rmSync(resolve(opts.dataDir ?? stopped?.dataDir ?? defaultDataDir(opts.brokers ?? 1, stateFile)), { recursive: true, force: true });
      }
      const broker = await ensureLocalBroker({
        detached: true,
        stateFile,
        ...(opts.brokers === undefined ? {} : { brokers: opts.brokers }),
        ...(opts.port === undefined ? {} : { port: opts.port }),
        ...(opts.dataDir === undefined ? {} : { dataDir: opts.dataDir }),
        minSessionTimeoutMs: opts.minSessionTimeoutMs,
      });
      log.info({ brokers: broker.brokers, brokerCount: broker.brokerCount, brokerPid: broker.pid, reused: !broker.started, ms: Date.now() - t0, state: stateFile },
        broker.started ? 'kafka cluster started' : 'kafka cluster already running');
      process.stdout.write(`KAFKA_BROKERS=${broker.brokers}\n`);
      process.exit(0);
    } catch (err) {
      fail(err);
    }
  });

program.command('stop')
  .description('stop every broker of the cluster recorded in .kafka-local/state.json')
  .option(...stateFileOption)
  .action(async (opts: { stateFile?: string }) => {
    try {
      const stopped = await stopLocalBroker({ stateFile: resolve(opts.stateFile ?? STATE_FILE) });
      log.info(stopped ? { brokerPids: stopped.nodes.map((node) => node.pid), brokers: stopped.brokers } : {},
        stopped ? 'kafka cluster stopped' : 'no kafka cluster was running');
      process.exit(0);
    } catch (err) {
      fail(err);
    }
  });

program.command('status')
  .description('print the recorded cluster, if any (exit 1 if none)')
  .option(...stateFileOption)
  .action((opts: { stateFile?: string }) => {
    const state = readState(resolve(opts.stateFile ?? STATE_FILE));
    if (!state) {
      process.stderr.write('no local kafka cluster recorded\n');
      process.exit(1);
    }
    process.stdout.write(JSON.stringify(state, null, 2) + '\n');
  });

await program.parseAsync(process.argv);
