import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { type SpawnRequest, createSpawner } from './spawner.ts';

const dirs: string[] = [];
const range = (length: number): number[] => Array.from({ length }, (_, i) => i);
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the container spawner', () => {
  it('spreads a burst over its helpers and reports every exit code', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logplane-spawner-'));
    dirs.push(dir);
    const spawner = createSpawner(2);
    const count = 8;
    const results = await Promise.all(
      Array.from({ length: count }, (_, index) => {
        const logFile = join(dir, `c${index}`, 'log');
        return new Promise<{ code: number | null; pid: number; logFile: string }>((resolve, reject) => {
          let pid = -1;
          spawner.spawn(
            // $PPID is the process that forked the shell: the helper that started it.
            { file: '/bin/sh', args: ['-c', `echo $PPID; exit ${index}`], cwd: dir, env: { PATH: '/usr/bin:/bin' }, logFile, mkdirs: [join(dir, `c${index}`)] },
            {
              spawned: (spawnedPid) => (pid = spawnedPid),
              failed: (message) => reject(new Error(message)),
              error: (message) => reject(new Error(message)),
              exited: (code) => resolve({ code, pid, logFile }),
            },
          );
        });
      }),
    );
    expect(results.map((r) => r.code)).toEqual(Array.from({ length: count }, (_, index) => index));
    expect(results.every((r) => r.pid > 0)).toBe(true);
    const parents = new Set(results.map((r) => readFileSync(r.logFile, 'utf8').trim()));
    expect(parents.size).toBe(2);
    expect(parents.has(String(process.pid))).toBe(false);
  });

  it('runs a process as the requested user in a directory it owns, and never opens its log file through a symlink', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logplane-spawner-'));
    dirs.push(dir);
    const spawner = createSpawner(1);
    const run = (request: { logFile: string; user?: { uid: number; gid: number }; ownedDir?: SpawnRequest['ownedDir']; cwd?: string }) =>
      new Promise<{ type: 'exited'; code: number | null } | { type: 'failed'; message: string }>((resolve, reject) =>
        spawner.spawn(
          { file: '/bin/sh', args: ['-c', 'echo "$(id -u):$(id -g):$(id -G)"; touch owned'], cwd: request.cwd ?? dir, env: { PATH: '/usr/bin:/bin' }, mkdirs: [dir], ...request },
          { spawned: () => {}, failed: (message) => resolve({ type: 'failed', message }), error: (message) => reject(new Error(message)), exited: (code) => resolve({ type: 'exited', code }) },
        ),
      );
    const ownedDir = join(dir, 'work');
    const logFile = join(dir, 'user.log');
    expect(await run({ logFile, user: { uid: 4321, gid: 4322 }, ownedDir: { path: ownedDir, owner: { uid: 4321, gid: 4322 } }, cwd: ownedDir })).toEqual({ type: 'exited', code: 0 });
    expect(readFileSync(logFile, 'utf8')).toBe('4321:4322:4322\n');
    expect(statSync(ownedDir)).toMatchObject({ uid: 4321, gid: 4322, mode: 0o40700 });
    // The directory of a pod with an fsGroup: group-owned, group-writable, setgid, whoever it was made for.
    const shared = join(dir, 'shared');
    expect(await run({ logFile, user: { uid: 4000, gid: 4000 }, ownedDir: { path: shared, owner: { uid: 4000, gid: 4500 }, mode: 0o2770 }, cwd: shared })).toEqual({ type: 'exited', code: 0 });
    expect(statSync(shared)).toMatchObject({ uid: 4000, gid: 4500, mode: 0o42770 });
    expect(statSync(join(shared, 'owned'))).toMatchObject({ uid: 4000, gid: 4500 });
    expect(statSync(join(ownedDir, 'owned')).uid).toBe(4321);
    expect(statSync(logFile)).toMatchObject({ uid: process.getuid?.(), mode: 0o100640 });

    // A log file swapped for a symlink (by whoever could write its directory) is not followed.
    const target = join(dir, 'target');
    writeFileSync(target, 'untouched\n');
    const linked = join(dir, 'linked.log');
    symlinkSync(target, linked);
    expect(await run({ logFile: linked })).toMatchObject({ type: 'failed', message: expect.stringMatching(/ELOOP/) });
    expect(readFileSync(target, 'utf8')).toBe('untouched\n');
  });

  it('warm() resolves once every helper has started and listens', async () => {
    /** This process's children running the helper. */
    const helpers = () =>
      readdirSync(`/proc/${process.pid}/task`)
        .flatMap((task) => readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').trim().split(' ').filter(Boolean))
        .filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('spawner-process.mjs');
          } catch {
            return false;
          }
        });
    const before = new Set(helpers());
    const spawner = createSpawner(3);
    await spawner.warm();
    const started = helpers().filter((pid) => !before.has(pid));
    expect(started).toHaveLength(3);
    // Warm already: at once.
    await spawner.warm();
    expect(helpers().filter((pid) => !before.has(pid))).toEqual(started);
  });

  it('does not crash when its agent is gone while it starts containers, and kills those it could not report', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logplane-spawner-'));
    dirs.push(dir);
    const marker = `orphan-${process.pid}-${Date.now()}`;
    const count = 40;
    /** Container index → pid of the live (not zombie) containers of this test. */
    const alive = (): Map<number, number> => {
      const found = new Map<number, number>();
      for (const pid of readdirSync('/proc')) {
        if (!/^\d+$/.test(pid)) continue;
        try {
          const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
          const index = env.find((entry) => entry.startsWith('LOGPLANE_TEST_INDEX='));
          if (env.includes(`LOGPLANE_TEST_MARKER=${marker}`) && index !== undefined) found.set(Number(index.split('=')[1]), Number(pid));
        } catch {
          // gone, or not ours to read
        }
      }
      return found;
    };
    try {
      const fixture = spawn(process.execPath, ['--import', 'tsx', new URL('./fixtures/orphan-spawns.ts', import.meta.url).pathname, marker, String(count), dir], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => fixture.on('exit', (code) => resolve(code)));
      // The helper inherits the fixture's stderr: this ends when both are gone.
      let stderr = '';
      fixture.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      await new Promise((resolve) => fixture.stderr?.on('close', resolve));
      expect(await exited).toBe(0);
      // Before, the first report after the agent had gone threw EPIPE as an unhandled 'error' event.
      expect(stderr).toBe('');

      // The helper creates a container's log file right before it starts it, one at a time in order.
      const started = range(count).filter((i) => existsSync(join(dir, `${i}.log`)));
      expect(started).toEqual(range(started.length));
      // Reports are written in start order: the first k went into the channel before the agent
      // went (not known to be lost, so left running); every later one could not be written, and
      // that container was killed. SIGKILL takes a moment to land: wait for the survivors to settle.
      const deadline = Date.now() + 10_000;
      let survivors = [...alive().keys()].sort((a, b) => a - b);
      while (survivors.join() !== range(survivors.length).join() && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        survivors = [...alive().keys()].sort((a, b) => a - b);
      }
      expect(survivors, 'the survivors are the containers reported before the agent went').toEqual(range(survivors.length));
      // The agent left at once, while the helper was still forking: some started containers went unreported.
      expect(survivors.length, `${started.length} started, ${survivors.length} alive: unreported containers were not killed`).toBeLessThan(started.length);
    } finally {
      for (const pid of alive().values()) process.kill(pid, 'SIGKILL');
    }
  });

  it('refuses a spawner without helpers', () => {
    expect(() => createSpawner(0)).toThrow(RangeError);
  });
});
