/**
 * `npm run kafka:start` / `npm run kafka:stop`: the local Kafka broker for dev, CI and
 * users. `start` is idempotent and returns once the broker answers, leaving it running
 * in the background; it prints `KAFKA_BROKERS=127.0.0.1:PORT` on stdout.
 */
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { pino } from 'pino';
import { LocalKafkaError } from './errors.ts';
import { ensureLocalBroker, stopLocalBroker } from './launcher.ts';
import { DEFAULT_DATA_DIR, KAFKA_VERSION, STATE_FILE } from './paths.ts';
import { readState } from './state.ts';

const log = pino({ name: 'kafka-local', level: process.env['LOG_LEVEL'] ?? 'info' }, pino.destination(2));

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('not a port number');
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
  .description(`Local single-node Kafka ${KAFKA_VERSION} broker (KRaft) for logplane dev, CI and tests`);

program.command('start')
  .description('start the broker in the background (or reuse the running one) and print KAFKA_BROKERS=...')
  .option('--port <port>', 'client port on 127.0.0.1 (default: a free port)', parsePort)
  .option('--data-dir <dir>', 'data dir (default: .kafka-local/data)')
  .option('--min-session-timeout-ms <ms>', 'broker group.min.session.timeout.ms', parsePort, 1_000)
  .option('--fresh', 'stop the running broker and delete its data dir first (all topics are lost)')
  .action(async (opts: { port?: number; dataDir?: string; minSessionTimeoutMs: number; fresh?: boolean }) => {
    const t0 = Date.now();
    try {
      if (opts.fresh) {
        await stopLocalBroker();
        rmSync(resolve(opts.dataDir ?? DEFAULT_DATA_DIR), { recursive: true, force: true });
      }
      const broker = await ensureLocalBroker({
        detached: true,
        ...(opts.port === undefined ? {} : { port: opts.port }),
        ...(opts.dataDir === undefined ? {} : { dataDir: opts.dataDir }),
        minSessionTimeoutMs: opts.minSessionTimeoutMs,
      });
      log.info({ brokers: broker.brokers, brokerPid: broker.pid, reused: !broker.started, ms: Date.now() - t0, state: STATE_FILE },
        broker.started ? 'kafka broker started' : 'kafka broker already running');
      process.stdout.write(`KAFKA_BROKERS=${broker.brokers}\n`);
      process.exit(0);
    } catch (err) {
      fail(err);
    }
  });

program.command('stop')
  .description('stop the broker recorded in .kafka-local/state.json')
  .action(async () => {
    try {
      const stopped = await stopLocalBroker();
      log.info(stopped ? { brokerPid: stopped.pid, brokers: stopped.brokers } : {}, stopped ? 'kafka broker stopped' : 'no kafka broker was running');
      process.exit(0);
    } catch (err) {
      fail(err);
    }
  });

program.command('status')
  .description('print the recorded broker, if any (exit 1 if none)')
  .action(() => {
    const state = readState();
    if (!state) {
      process.stderr.write('no local kafka broker recorded\n');
      process.exit(1);
    }
    process.stdout.write(JSON.stringify(state, null, 2) + '\n');
  });

await program.parseAsync(process.argv);
