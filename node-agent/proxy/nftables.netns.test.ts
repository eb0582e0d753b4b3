/**
 * The nftables applier against the real kernel, inside a network namespace this test
 * creates (so the host's rules are never touched), with loopback-range addresses only:
 * pods on 127.100.0.2/3:8080, Services on 127.96.0.x, a NodePort on 127.0.0.1.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProxyApplyError } from './errors.ts';
import { createNftablesProxy } from './nftables.ts';
import type { ForwardingTable } from './table.ts';
import { idle, web } from './testdata/rules.ts';

/**
 * Creating a network namespace and loading nftables rules need root. CI runs as root, so
 * there this suite always runs, and fails loudly if `ip`, `nft` or `curl` is missing
 * (apt packages iproute2, nftables, curl). For a developer without root it is reported as
 * skipped (not applicable). This is the suite's only conditional.
 */
const isRoot = process.getuid?.() === 0;

interface RunResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: readonly string[]): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') {
        reject(new Error(`cannot run ${command}: ${error.message}`, { cause: error }));
        return;
      }
      resolve({ exitCode: error === null ? 0 : Number(error.code), stdout, stderr });
    });
  });
}

async function mustRun(command: string, args: readonly string[]): Promise<string> {
  const result = await run(command, args);
  if (result.exitCode !== 0) {
    throw new Error(`${[command, ...args].join(' ')} exited ${result.exitCode}: ${result.stderr.trim()}`);
  }
  return result.stdout;
}

const POD_SERVERS = `
const http = require('node:http');
const pods = [['pod-a', '127.100.0.2'], ['pod-b', '127.100.0.3']];
let listening = 0;
for (const [name, ip] of pods) {
  http.createServer((req, res) => res.end(name)).listen(8080, ip, () => {
    listening += 1;
    if (listening === pods.length) console.log('ready');
  });
}
`;


/** curl's exit code when it could not connect (refused). */
const CURL_COULDNT_CONNECT = 7;

describe('nftables proxy in a network namespace (root only)', () => {
  const netns = `lp-test-${randomBytes(4).toString('hex')}`;
  const cleanups: (() => Promise<unknown>)[] = [];
  const proxy = createNftablesProxy({ netns });
  const inNetns = (command: string, ...args: string[]): Promise<RunResult> => run('ip', ['netns', 'exec', netns, command, ...args]);
  const curl = (url: string): Promise<RunResult> => inNetns('curl', '-s', '--max-time', '5', url);

  beforeAll(async () => {
    await mustRun('ip', ['-V']);
    await mustRun('nft', ['--version']);
    await mustRun('curl', ['--version']);

    await mustRun('ip', ['netns', 'add', netns]);
    cleanups.push(() => mustRun('ip', ['netns', 'delete', netns]));
    await mustRun('ip', ['netns', 'exec', netns, 'ip', 'link', 'set', 'lo', 'up']);
    // DNAT from `nat output` to a 127.x address is routed only with route_localnet.
    await mustRun('ip', ['netns', 'exec', netns, 'sysctl', '-q', '-w', 'net.ipv4.conf.all.route_localnet=1']);

    const pods: ChildProcess = spawn('ip', ['netns', 'exec', netns, process.execPath, '-e', POD_SERVERS], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<void>((resolve) => pods.once('exit', () => resolve()));
    cleanups.push(async () => {
      pods.kill();
      await exited;
    });
    await new Promise<void>((resolve, reject) => {
      pods.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString('utf8').includes('ready')) resolve();
      });
      pods.once('exit', (code) => reject(new Error(`pod servers exited with ${code} before listening`)));
    });
  });

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it.runIf(isRoot)('forwards a ClusterIP through DNAT, spreading connections over both endpoints', async () => {
    await proxy.apply({ rules: [web, idle] });
    const seen = new Set<string>();
    for (let attempt = 0; attempt < 64 && seen.size < 2; attempt++) {
      const answer = await curl('http://127.96.0.10:80/');
      expect(answer.exitCode).toBe(0);
      seen.add(answer.stdout);
    }
    expect([...seen].sort()).toEqual(['pod-a', 'pod-b']);
  });

  it.runIf(isRoot)('forwards a NodePort on a local address', async () => {
    const answer = await curl('http://127.0.0.1:30080/');
    expect(answer).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/^pod-[ab]$/) });
  });

  it.runIf(isRoot)('refuses a service without endpoints at once', async () => {
    const answer = await curl('http://127.96.0.11:80/');
    expect(answer.exitCode).toBe(CURL_COULDNT_CONNECT);
  });

  it.runIf(isRoot)('replaces the ruleset atomically: changed endpoints apply, removed services vanish', async () => {
    const onlyPodB: ForwardingTable = { rules: [{ ...web, endpoints: [{ ip: '127.100.0.3', port: 8080 }] }] };
    await proxy.apply(onlyPodB);
    for (let attempt = 0; attempt < 8; attempt++) {
      expect((await curl('http://127.96.0.10:80/')).stdout).toBe('pod-b');
    }
    const listed = await inNetns('nft', 'list', 'table', 'ip', 'logplane');
    expect(listed.stdout).toContain('127.96.0.10');
    expect(listed.stdout).not.toContain('127.96.0.11');
    expect(listed.stdout).not.toContain('127.100.0.2');
  });

  it.runIf(isRoot)("reports nft's stderr when nft cannot run the ruleset", async () => {
    const elsewhere = createNftablesProxy({ netns: `${netns}-missing` });
    const failure = await elsewhere.apply({ rules: [web] }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProxyApplyError);
    expect(failure).toMatchObject({ context: { stderr: expect.stringContaining(`${netns}-missing`) } });
  });

  it.runIf(isRoot)('deletes its table on close, after which the ClusterIP no longer answers', async () => {
    await proxy.close();
    const tables = await inNetns('nft', 'list', 'tables');
    expect(tables.stdout).not.toContain('logplane');
    expect((await curl('http://127.96.0.10:80/')).exitCode).toBe(CURL_COULDNT_CONNECT);
    await proxy.close();
  });
});
