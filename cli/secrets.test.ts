/**
 * Secrets on the command line and on disk (the security audit's low findings): the Kafka
 * password need not be in argv (`ps` shows argv to every user), and the data directory,
 * the token file and the apiserver's key are the owner's alone.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { buildProgram, kafkaPassword, logTarget } from './main.ts';
import { adminCredentials, openLog, tlsMaterial } from './wiring.ts';

const temp = mkdtempSync(join(tmpdir(), 'secrets-test-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

const modeOf = (path: string): number => statSync(path).mode & 0o777;

/** The flags `command` would run with for `args` (its action replaced). */
const parsedFlags = async (args: string[]): Promise<Record<string, unknown>> => {
  const program = buildProgram();
  program.exitOverride();
  const sub = program.commands.find((c: Command) => c.name() === 'apiserver')!;
  sub.exitOverride().configureOutput({ writeErr: () => undefined });
  let seen: Record<string, unknown> | undefined;
  sub.action((flags: Record<string, unknown>) => {
    seen = flags;
  });
  await program.parseAsync(['node', 'logplane', 'apiserver', ...args]);
  return seen!;
};

describe('the Kafka password', () => {
  const kafkaFlags = ['--kafka', '127.0.0.1:9092', '--kafka-sasl-mechanism', 'plain', '--kafka-username', 'logplane'];

  it('comes from --kafka-password-file (its first line), so argv holds only the path', async () => {
    const file = join(temp, 'kafka-password');
    writeFileSync(file, 's3cret\n', { mode: 0o600 });
    const args = [...kafkaFlags, '--kafka-password-file', file];
    expect(args.join(' ')).not.toContain('s3cret');
    const flags = await parsedFlags(args);
    const warnings: string[] = [];
    expect(kafkaPassword(flags, {}, (text) => warnings.push(text))).toBe('s3cret');
    expect(warnings).toEqual([]);
    const target = logTarget(flags as unknown as Parameters<typeof logTarget>[0], temp);
    expect(target).toMatchObject({ type: 'kafka', sasl: { mechanism: 'plain', username: 'logplane', password: 's3cret' } });
  });

  it('comes from LOGPLANE_KAFKA_PASSWORD', async () => {
    const flags = await parsedFlags(kafkaFlags);
    expect(kafkaPassword(flags, { LOGPLANE_KAFKA_PASSWORD: 'from-env' }, () => undefined)).toBe('from-env');
  });

  it('still takes --kafka-password, with a warning that ps shows it', async () => {
    const flags = await parsedFlags([...kafkaFlags, '--kafka-password', 'visible']);
    const warnings: string[] = [];
    expect(kafkaPassword(flags, {}, (text) => warnings.push(text))).toBe('visible');
    expect(warnings.join('')).toContain('--kafka-password is visible to every user of this machine');
  });

  it('refuses the flag and the file together', async () => {
    expect(() => kafkaPassword({ kafkaPassword: 'a', kafkaPasswordFile: join(temp, 'kafka-password') }, {}, () => undefined)).toThrow('not both');
  });
});

describe('file modes', () => {
  it('makes the data directory 0700 and the token file 0600, tightening existing ones', () => {
    const fresh = join(temp, 'fresh', 'data');
    adminCredentials(fresh);
    expect(modeOf(fresh)).toBe(0o700);
    expect(modeOf(join(fresh, 'tokens.csv'))).toBe(0o600);
    const loose = join(temp, 'loose');
    mkdirSync(loose, { mode: 0o755 });
    chmodSync(loose, 0o755);
    writeFileSync(join(loose, 'tokens.csv'), 'token,admin,admin,"system:masters"\n', { mode: 0o644 });
    chmodSync(join(loose, 'tokens.csv'), 0o644);
    expect(adminCredentials(loose).token).toBe('token');
    expect(modeOf(loose)).toBe(0o700);
    expect(modeOf(join(loose, 'tokens.csv'))).toBe(0o600);
  });

  it('writes the apiserver key and certificate 0600', () => {
    const dir = join(temp, 'tls');
    tlsMaterial(dir);
    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(join(dir, 'apiserver.key'))).toBe(0o600);
    expect(modeOf(join(dir, 'apiserver.crt'))).toBe(0o600);
  });

  it('makes the embedded log directory 0700', async () => {
    const dir = join(temp, 'log-data', 'log');
    const log = await openLog({ type: 'embedded', dir, cluster: 'modes', partitions: 1, durability: 'committed' }, pino({ level: 'silent' }));
    await log.close();
    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(join(temp, 'log-data'))).toBe(0o700);
  });
});
