/**
 * Crash safety (DESIGN invariant 4): a projection SIGKILLed in the middle of folding a
 * large log resumes from its stored cursor and ends in exactly the state of a clean
 * replay from position 0.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../log/embedded/index.ts';
import { encodeEvent, type EventEnvelope, type Pod } from '../schemas/index.ts';
import { createProjection } from './projection.ts';
import { makeEvent } from './testing.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = (name: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `logplane-${name}-`));
  dirs.push(dir);
  return dir;
};

const POD_COUNT = 6_000;

const workload = (): { desired: EventEnvelope[]; observed: EventEnvelope[] } => {
  const desired: EventEnvelope[] = [
    makeEvent('Namespace//default', { type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } } }),
  ];
  const observed: EventEnvelope[] = [];
  for (let i = 0; i < POD_COUNT; i++) {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `p${i}`, namespace: 'default', labels: { app: `a${i % 7}` } },
      spec: { containers: [{ name: 'main', image: 'logplane/echo' }] },
    };
    desired.push(makeEvent(`Pod/default/p${i}`, { type: 'ObjectCreated', object: pod }));
    if (i % 3 === 0) {
      desired.push(makeEvent(`Pod/default/p${i}`, { type: 'ObjectUpdated', object: { ...pod, metadata: { ...pod.metadata, labels: { app: 'moved' } } }, expectedResourceVersion: null, subresource: null }));
    }
    if (i % 5 === 0) {
      observed.push(makeEvent(`Pod/default/p${i}`, { type: 'PodStatusChanged', namespace: 'default', name: `p${i}`, uid: null, status: { phase: 'Running' } }));
    }
  }
  return { desired, observed };
};

describe('projection crash safety (embedded log)', () => {
  it('a projection killed with SIGKILL mid-fold resumes to the same state hash as a clean replay', async () => {
    const logDir = tempDir('crash-log');
    const events = workload();
    const writer = await createEmbeddedLog({ dir: logDir, cluster: 'crash' });
    await writer.append('desired', events.desired.map((e) => ({ key: e.key, value: encodeEvent(e), timestamp: e.time })));
    await writer.append('observed', events.observed.map((e) => ({ key: e.key, value: encodeEvent(e), timestamp: e.time })));
    const end = { desired: await writer.endOffsets('desired'), observed: await writer.endOffsets('observed') };
    await writer.close();

    const crashedDir = tempDir('crash-projection');
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./testdata/crash-child.ts', import.meta.url)), logDir, crashedDir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    const killedAt = await new Promise<string>((resolve, reject) => {
      let buffered = '';
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        // Kill after the first batches are in, well before the end of the log.
        const lines = buffered.split('\n').filter((l) => l.startsWith('applied '));
        const last = lines.at(-1);
        if (last && lines.length >= 3) {
          child.kill('SIGKILL');
          resolve(last.slice('applied '.length));
        }
      });
      child.on('exit', () => reject(new Error('child exited before it was killed')));
    });
    expect(await exited).toBe('SIGKILL');
    const [killedDesired] = killedAt.split('.').map(Number);
    expect(killedDesired).toBeLessThan(end.desired[0]!);

    const log = await createEmbeddedLog({ dir: logDir, cluster: 'crash' });
    try {
      const resumed = createProjection({ dir: crashedDir, log });
      // Its commits did not wait for the disk, but the process died, not the machine: the
      // directory resumes from what it committed instead of being refolded from offset 0.
      expect(resumed.cursor().desired[0]).toBeGreaterThanOrEqual(killedDesired!);
      await resumed.waitFor(end, 120_000);
      const resumedHash = resumed.stateHash();
      const resumedCursor = resumed.cursor();
      await resumed.close();

      const clean = createProjection({ dir: tempDir('clean-projection'), log });
      await clean.waitFor(end, 120_000);
      expect(clean.cursor()).toEqual(resumedCursor);
      expect(resumedHash).toBe(clean.stateHash());
      expect(clean.view().list('Pod')).toHaveLength(POD_COUNT);
      await clean.close();
    } finally {
      await log.close();
    }
  }, 180_000);
});
