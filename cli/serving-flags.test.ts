/**
 * The apiserver's serving limits on the command line, named as kube-apiserver's flags:
 * `--request-timeout` (a Go duration), `--max-requests-inflight`,
 * `--max-mutating-requests-inflight`, and logplane's `--max-connections`.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, parseDuration } from './main.ts';

/** The flags `command` would run with for `args` (its action replaced). */
const parsedFlags = async (command: 'up' | 'apiserver', args: string[]): Promise<Record<string, unknown>> => {
  const program = buildProgram();
  program.exitOverride();
  const sub = program.commands.find((c: Command) => c.name() === command)!;
  sub.exitOverride().configureOutput({ writeErr: () => undefined });
  let seen: Record<string, unknown> | undefined;
  sub.action((flags: Record<string, unknown>) => {
    seen = flags;
  });
  await program.parseAsync(['node', 'logplane', command, ...args]);
  return seen!;
};

describe('serving limit flags', () => {
  it.each([['up' as const], ['apiserver' as const]])('%s has kube-apiserver\'s defaults', async (command) => {
    expect(await parsedFlags(command, [])).toMatchObject({
      requestTimeout: 60_000,
      maxConnections: 10_000,
      maxRequestsInflight: 400,
      maxMutatingRequestsInflight: 200,
    });
  });

  it('takes them as kube spells them', async () => {
    const flags = await parsedFlags('apiserver', ['--request-timeout', '1m30s', '--max-requests-inflight', '10', '--max-mutating-requests-inflight', '0', '--max-connections', '50']);
    expect(flags).toMatchObject({ requestTimeout: 90_000, maxRequestsInflight: 10, maxMutatingRequestsInflight: 0, maxConnections: 50 });
  });

  it.each([
    ['1m0s', 60_000],
    ['30s', 30_000],
    ['1.5h', 5_400_000],
    ['500ms', 500],
    ['45', 45_000],
    ['0', 0],
  ])('reads the duration %s as %i ms', (text, ms) => {
    expect(parseDuration('--request-timeout')(text)).toBe(ms);
  });

  it.each(['', 'soon', '1x', '-5s', '1m 0s'])('refuses the duration %j', (text) => {
    expect(() => parseDuration('--request-timeout')(text)).toThrow('must be a duration');
  });
});
