/**
 * etcd beside the logs in the bench: starts Debian's etcd-server (`bench/setup.sh`
 * installs it) on loopback ports with a data directory of its own, and talks to it over
 * gRPC with the `etcd3` client (one HTTP/2 channel, as kube-apiserver's etcd client uses).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { freePort } from '../log/kafka/broker/launcher.ts';

/** A running etcd started by {@link startLocalEtcd}. */
export interface LocalEtcd {
  /** `http://127.0.0.1:PORT` of its client listener. */
  readonly endpoint: string;
  /** Its version (`etcd --version`), for the printout. */
  readonly version: string;
  /** SIGTERM (SIGKILL after 10 s) and removes the data directory. */
  stop(): Promise<void>;
}

/** A watch opened by {@link EtcdClient.watch}. */
export interface EtcdWatch {
  close(): Promise<void>;
}

/** The few etcd v3 calls the bench makes. */
export interface EtcdClient {
  /** One put; resolves with the revision it created. */
  put(key: string, value: Buffer): Promise<number>;
  /** All puts in one transaction (one revision, one raft entry, one fsync). */
  putAll(entries: readonly { readonly key: string; readonly value: Buffer }[]): Promise<number>;
  /** Watches every key under `prefix` from `startRevision`; `onEvents` gets each response's event count. Resolves once etcd created it. */
  watch(prefix: string, startRevision: number, onEvents: (count: number) => void): Promise<EtcdWatch>;
  close(): void;
}

/** Largest gRPC message either side takes: one batch of the log bench is a few MB. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** A client of the etcd at `endpoint`. */
export const etcdClient = (endpoint: string): EtcdClient => {
  const etcd = new Etcd3({
    hosts: endpoint,
    grpcOptions: { 'grpc.max_receive_message_length': MAX_MESSAGE_BYTES, 'grpc.max_send_message_length': MAX_MESSAGE_BYTES },
  });
  return {
    put: async (key, value) => Number((await etcd.kv.put({ key: Buffer.from(key), value })).header.revision),
    putAll: async (entries) =>
      Number((await etcd.kv.txn({ success: entries.map(({ key, value }) => ({ request_put: { key: Buffer.from(key), value } })) })).header.revision),
    watch: async (prefix, startRevision, onEvents) => {
      const watcher = await etcd.watch().prefix(prefix).startRevision(String(startRevision)).create();
      watcher.on('data', (response) => onEvents(response.events.length));
      return { close: () => watcher.cancel() };
    },
    close: () => etcd.close(),
  };
};

const waitForExit = (child: ChildProcess, ms: number): Promise<boolean> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });

/**
 * Starts `etcd` (from PATH: run `bash bench/setup.sh` first) as a single member on two
 * free loopback ports, in a fresh temp data directory, with transactions of up to 10,000
 * operations and requests of up to 16 MiB (so one batch of the log bench is one
 * transaction); resolves once it answers a put.
 */
export const startLocalEtcd = async (): Promise<LocalEtcd> => {
  const dir = await mkdtemp(join(tmpdir(), 'logplane-bench-etcd-'));
  const clientPort = await freePort();
  let peerPort = await freePort();
  while (peerPort === clientPort) peerPort = await freePort();
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  let output = '';
  const child = spawn('etcd', [
    '--name', 'bench', '--data-dir', join(dir, 'data'),
    '--listen-client-urls', client, '--advertise-client-urls', client,
    '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer,
    '--initial-cluster', `bench=${peer}`, '--initial-cluster-state', 'new',
    '--max-txn-ops', '10000', '--max-request-bytes', String(16 * 1024 * 1024),
    '--quota-backend-bytes', String(8 * 1024 * 1024 * 1024),
    '--log-level', 'warn',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4_000)));
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4_000)));
  const spawned = await new Promise<Error | undefined>((resolve) => {
    child.once('error', resolve);
    child.once('spawn', () => resolve(undefined));
  });
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM');
    if (!(await waitForExit(child, 10_000))) {
      child.kill('SIGKILL');
      await waitForExit(child, 10_000);
    }
    await rm(dir, { recursive: true, force: true });
  };
  if (spawned) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`could not start etcd (${spawned.message}); run 'bash bench/setup.sh' to install Debian's etcd-server`);
  }
  const probe = etcdClient(client);
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await probe.put('bench-ready', Buffer.from('1'));
        break;
      } catch (error) {
        if (child.exitCode !== null || Date.now() > deadline) {
          await stop();
          throw new Error(`etcd did not answer at ${client}: ${(error as Error).message}\n${output}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } finally {
    probe.close();
  }
  const versionOutput = await new Promise<string>((resolve) => {
    const version = spawn('etcd', ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let text = '';
    version.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    version.on('close', () => resolve(text));
  });
  return { endpoint: client, version: /etcd Version: (\S+)/.exec(versionOutput)?.[1] ?? 'unknown', stop };
};
