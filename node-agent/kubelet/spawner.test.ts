import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { createSpawner } from './spawner.ts';

const dirs: string[] = [];
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

  it('does not crash when its agent is gone while it starts containers (a report to a closed channel)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logplane-spawner-'));
    dirs.push(dir);
    const marker = `orphan-${process.pid}-${Date.now()}`;
    const fixture = spawn(process.execPath, ['--import', 'tsx', new URL('./fixtures/orphan-spawns.ts', import.meta.url).pathname, marker, '20', dir], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // The helper inherits the fixture's stderr: this ends when both are gone.
    let stderr = '';
    fixture.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise((resolve) => fixture.stderr?.on('close', resolve));
    // Before, the first report after the agent had gone threw EPIPE as an unhandled 'error' event.
    expect(stderr).toBe('');
    // Containers whose report could not be written were killed; those reported into the
    // channel just before the agent went are not known to be lost (and are cleaned up here).
    for (const pid of readdirSync('/proc')) {
      try {
        if (/^\d+$/.test(pid) && readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`LOGPLANE_TEST_MARKER=${marker}`)) process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone, or not ours to read
      }
    }
  });

  it('refuses a spawner without helpers', () => {
    expect(() => createSpawner(0)).toThrow(RangeError);
  });
});
