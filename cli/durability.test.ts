import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { buildProgram } from './main.ts';
import { openLog, type Durability } from './wiring.ts';

/** Parses `args` with the action of `command` replaced: resolves with the durability it would run with. */
const parsedDurability = async (command: 'up' | 'apiserver' | 'controllers' | 'agent', args: string[]): Promise<Durability> => {
  const program = buildProgram();
  program.exitOverride();
  let seen: Durability | undefined;
  const sub = program.commands.find((c: Command) => c.name() === command)!;
  sub.exitOverride().configureOutput({ writeErr: () => undefined });
  sub.action((flags: { durability: Durability }) => {
    seen = flags.durability;
  });
  await program.parseAsync(['node', 'logplane', command, ...args]);
  if (seen === undefined) throw new Error(`${command} did not run`);
  return seen;
};

describe('--durability', () => {
  const saved = process.env['LOGPLANE_DURABILITY'];
  afterEach(() => {
    if (saved === undefined) delete process.env['LOGPLANE_DURABILITY'];
    else process.env['LOGPLANE_DURABILITY'] = saved;
  });

  it('defaults to flushed for up and the distributed components', async () => {
    delete process.env['LOGPLANE_DURABILITY'];
    expect(await parsedDurability('up', [])).toBe('flushed');
    expect(await parsedDurability('apiserver', [])).toBe('flushed');
    expect(await parsedDurability('agent', ['--node', 'n1'])).toBe('flushed');
  });

  it('takes the flag, or LOGPLANE_DURABILITY when the flag is absent', async () => {
    delete process.env['LOGPLANE_DURABILITY'];
    expect(await parsedDurability('up', ['--durability', 'committed'])).toBe('committed');
    process.env['LOGPLANE_DURABILITY'] = 'committed';
    expect(await parsedDurability('up', [])).toBe('committed');
    expect(await parsedDurability('controllers', [])).toBe('committed');
    expect(await parsedDurability('up', ['--durability', 'flushed'])).toBe('flushed');
  });

  it('refuses a value that is not flushed or committed', async () => {
    delete process.env['LOGPLANE_DURABILITY'];
    await expect(parsedDurability('up', ['--durability', 'eventually'])).rejects.toThrow(/Allowed choices are flushed, committed/);
    process.env['LOGPLANE_DURABILITY'] = 'eventually';
    await expect(parsedDurability('up', [])).rejects.toThrow(/Allowed choices are flushed, committed/);
  });

  it('reaches the embedded log that openLog opens', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'logplane-cli-durability-'));
    try {
      const logger = pino({ level: 'silent' });
      const target = { type: 'embedded', dir: join(dir, 'log'), cluster: 'c', partitions: 1 } as const;
      // A value the embedded log refuses shows that openLog hands the option on.
      await expect(openLog({ ...target, durability: 'eventually' as Durability }, logger)).rejects.toThrow(/durability must be flushed or committed/);
      const log = await openLog({ ...target, durability: 'committed' }, logger);
      const [position] = await log.append('desired', [{ key: 'k', value: Buffer.from('v') }]);
      expect(position).toEqual({ partition: 0, offset: 0 });
      await log.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
