/**
 * The history verbs of the `logplane` command, over the `/logplane/v1` API: `history`,
 * `diff`, `why`, `audit`, `replay` and `debug reconcile` (`get --at` lives with `get`).
 * Every one takes `-o json` to print the server's reply for scripts.
 */
import { resolve } from 'node:path';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import type { KubeObject } from '../../schemas/index.ts';
import { ApiError } from '../client.ts';
import { action, connect, optionsOf, out, parseCount, ReportedError, withConnectionOptions, withNamespaceOption, type Session } from '../verbs/common.ts';
import { historyKey, historyKindRef, objectPath } from '../verbs/kinds.ts';
import { historyApi, type ReplayLine } from './api.ts';
import { formatAudit, formatClusterDiff, formatHistory, formatKey, formatReconcile, formatReplayResult, formatWhy, objectState, replayMatches } from './format.ts';
import { historyReference, resolveHistoryType } from './resource-types.ts';
import { momentArgument } from './time.ts';

const withOutputOption = (command: Command): Command => command.option('-o, --output <format>', 'json: print the raw reply');

const jsonOutput = (command: Command): boolean => {
  const output = optionsOf<{ output?: string }>(command).output;
  if (output === undefined) return false;
  if (output === 'json') return true;
  throw new Error(`unable to match a printer suitable for the output format "${output}", allowed formats are: json`);
};

const printJson = (value: unknown): void => {
  out(`${JSON.stringify(value, null, 2)}\n`);
};

const referenceKey = async (command: Command, session: Session): Promise<{ key: string; path: string }> => {
  const { type, name } = await historyReference(session, command.processedArgs[0] as string[], 'KIND/NAME or KIND NAME');
  return { key: historyKey(type, session.namespace, name), path: objectPath(type, type.namespaced ? session.namespace : undefined, name) };
};

/** A verb with the connection, namespace and `-o json` options. */
const verb = (parent: Command, name: string, description: string): Command => {
  const command = parent.command(name).description(description);
  withOutputOption(command);
  return command;
};

const finish = (command: Command, namespaced = true): Command => {
  if (namespaced) withNamespaceOption(command);
  return withConnectionOptions(command);
};

/** Adds `history`, `diff`, `why`, `audit`, `replay` and `debug reconcile` to the program. */
export const registerHistoryVerbs = (program: Command): void => {
  const history = verb(program, 'history', 'Every version of an object: position, time, actor, event, verdict and diff').argument(
    '<resource...>',
    'KIND/NAME or KIND NAME',
  );
  finish(history).action(
    action(async (cmd) => {
      const json = jsonOutput(cmd);
      const session = connect(cmd);
      const { key } = await referenceKey(cmd, session);
      const reply = await historyApi(session.client).history(key);
      if (json) return printJson(reply);
      if (reply.versions.length === 0) throw new Error(`no history for ${formatKey(key)}`);
      out(formatHistory(reply.versions));
    }),
  );

  const diff = verb(program, 'diff', 'What was created, changed and deleted between two moments')
    .requiredOption('--from <moment>', 'start: position (a resourceVersion such as 42.17), time (RFC 3339, epoch ms) or relative time (-5m, 5m ago)')
    .option('--to <moment>', 'end: position or time', 'now');
  finish(diff, false).action(
    action(async (cmd) => {
      const json = jsonOutput(cmd);
      const options = optionsOf<{ from: string; to: string }>(cmd);
      const from = momentArgument('--from', options.from).text;
      const to = momentArgument('--to', options.to).text;
      const session = connect(cmd);
      const reply = await historyApi(session.client).diff(from, to);
      if (json) return printJson(reply);
      out(formatClusterDiff(reply));
    }),
  );

  const why = verb(program, 'why', 'The causation chain behind an object, back to the request that started it').argument(
    '<resource...>',
    'KIND/NAME or KIND NAME',
  );
  finish(why).action(
    action(async (cmd) => {
      const json = jsonOutput(cmd);
      const session = connect(cmd);
      const { key, path } = await referenceKey(cmd, session);
      const reply = await historyApi(session.client).why(key);
      if (json) return printJson(reply);
      let live: KubeObject | undefined;
      try {
        live = await session.client.get<KubeObject>(path);
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 404) throw error;
      }
      const nodeName = live?.kind === 'Pod' ? live.spec.nodeName : undefined;
      out(formatWhy(`${formatKey(key)} ${objectState(live)}`.trimEnd(), { key, ...(nodeName ? { nodeName } : {}) }, reply.chains));
    }),
  );

  const audit = verb(program, 'audit', 'Who changed what, when (newest first)')
    .option('--user <name>', 'only this user\'s requests')
    .option('--since <moment>', 'from this time (RFC 3339, epoch ms, -1h, 1h ago), or only events after this position (42.17)')
    .option('--until <moment>', 'up to this time, or only events in this position')
    .option('--kind <kind>', 'only objects of this kind (pod, deploy, …)')
    .option('--all', 'include controllers and nodes, not only users')
    .option('--limit <count>', 'at most this many events', parseCount('--limit'));
  finish(audit, false).action(
    action(async (cmd) => {
      const json = jsonOutput(cmd);
      const options = optionsOf<{ user?: string; since?: string; until?: string; kind?: string; all?: boolean; limit?: number }>(cmd);
      const since = options.since ? momentArgument('--since', options.since).text : undefined;
      const until = options.until ? momentArgument('--until', options.until).text : undefined;
      const session = connect(cmd);
      const query = {
        ...(options.user ? { user: options.user } : {}),
        ...(since !== undefined ? { since } : {}),
        ...(until !== undefined ? { until } : {}),
        ...(options.kind ? { kind: historyKindRef(await resolveHistoryType(session, options.kind)) } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        ...(options.all ? { all: true } : {}),
      };
      const reply = await historyApi(session.client).audit(query);
      if (json) return printJson(reply);
      if (reply.events.length === 0) {
        process.stderr.write('No events found\n');
        return;
      }
      out(formatAudit(reply));
    }),
  );

  const replay = verb(program, 'replay', 'Rebuild a projection from the log and compare its state hash with the live one')
    .option('--to <moment>', 'stop at this position (42.17) or time (default: the live position; the live hash is only compared then)')
    .option('--into <dir>', 'keep the rebuilt projection in this new directory on the server\'s machine (default: a temporary one, removed)');
  finish(replay, false).action(
    action(async (cmd) => {
      const json = jsonOutput(cmd);
      const options = optionsOf<{ to?: string; into?: string }>(cmd);
      const to = options.to !== undefined ? momentArgument('--to', options.to).text : undefined;
      const session = connect(cmd);
      const bar = new cliProgress.SingleBar(
        { format: 'replaying [{bar}] {percentage}% | {value}/{total} events | {rate} events/s | {eta_formatted} left', stream: process.stderr, hideCursor: true },
        cliProgress.Presets.shades_classic,
      );
      const startedAt = Date.now();
      const rate = (applied: number): { rate: number } => ({ rate: Math.round(applied / Math.max(0.001, (Date.now() - startedAt) / 1000)) });
      let started = false;
      let result: Extract<ReplayLine, { type: 'result' }> | undefined;
      try {
        const query = { ...(to !== undefined ? { to } : {}), ...(options.into !== undefined ? { into: resolve(options.into) } : {}) };
        for await (const line of historyApi(session.client).replay(query)) {
          if (line.type === 'progress') {
            if (json) continue;
            if (!started) {
              bar.start(line.total, line.applied, rate(line.applied));
              started = true;
            } else {
              bar.setTotal(line.total);
              bar.update(line.applied, rate(line.applied));
            }
          } else if (line.type === 'result') result = line;
          else if (line.type === 'error') throw new Error(`replay failed: ${line.message}`);
        }
      } finally {
        if (started) bar.stop();
      }
      if (!result) throw new Error('the server ended the replay without a result');
      if (json) printJson(result);
      else out(formatReplayResult(result));
      if (replayMatches(result) === false) throw new ReportedError(1);
    }),
  );

  const debug = program.command('debug').description('Debugging tools for controllers');
  const reconcile = verb(debug, 'reconcile', 'Re-run a controller\'s decision on the view at a past position and compare with what it appended then')
    .argument('<controller>', 'controller name, e.g. scheduler')
    .argument('<resource...>', 'KIND/NAME or KIND NAME')
    .requiredOption('--at <moment>', 'the position whose view the decision sees (the "decided at" of why), or a time');
  finish(reconcile).action(
    action(async (cmd) => {
      const json = jsonOutput(cmd);
      const [controller, args] = cmd.processedArgs as [string, string[]];
      const options = optionsOf<{ at: string }>(cmd);
      const at = momentArgument('--at', options.at).text;
      const session = connect(cmd);
      const { type, name } = await historyReference(session, args, 'KIND/NAME or KIND NAME');
      const reply = await historyApi(session.client).reconcile({ controller, key: historyKey(type, session.namespace, name), at });
      if (json) printJson(reply);
      else out(formatReconcile(reply));
      if (!reply.identical) throw new ReportedError(1);
    }),
  );
};
