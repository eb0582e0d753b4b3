/**
 * `logplane delete KIND NAME… | KIND/NAME… | KIND -l SELECTOR | KIND --all | -f FILE`:
 * DELETE with a DeleteOptions body, printing `pod "x" deleted`; then, like kubectl's
 * default `--wait=true`, waits until each object is really gone (graceful pod shutdown,
 * finalizers).
 */
import type { Command } from 'commander';
import type { KubeObject } from '../../schemas/index.ts';
import { ApiError, type Client } from '../client.ts';
import { readManifests, targetOf } from './apply.ts';
import {
  action,
  connect,
  optionsOf,
  out,
  parseBool,
  parseCount,
  printError,
  ReportedError,
  sleep,
  withConnectionOptions,
  withNamespaceOption,
} from './common.ts';
import { collectionPath, objectPath, qualifiedKind, type ResourceType } from './kinds.ts';
import { parseDuration } from './rollout.ts';

interface DeleteOptions {
  readonly filename?: string[];
  readonly recursive?: boolean;
  readonly selector?: string;
  readonly all?: boolean;
  readonly allNamespaces?: boolean;
  readonly wait: boolean;
  readonly timeout?: string;
  readonly gracePeriod?: number;
  readonly now?: boolean;
  readonly cascade: string;
  readonly ignoreNotFound?: boolean;
}

/** One object to delete. */
interface Victim {
  readonly type: ResourceType;
  readonly namespace: string | undefined;
  readonly name: string;
}

const PROPAGATION: Readonly<Record<string, string>> = { background: 'Background', true: 'Background', foreground: 'Foreground', orphan: 'Orphan', false: 'Orphan' };

/** The DeleteOptions body for the flags. */
export const deleteOptionsBody = (cascade: string, gracePeriodSeconds: number | undefined): Record<string, unknown> => {
  const propagationPolicy = PROPAGATION[cascade.toLowerCase()];
  if (!propagationPolicy) throw new Error(`invalid cascade value (${cascade}). Must be "background", "foreground", or "orphan"`);
  return {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    propagationPolicy,
    ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}),
  };
};

const waitUntilGone = async (client: Client, victim: Victim, uid: string | undefined, deadline: number): Promise<void> => {
  const path = objectPath(victim.type, victim.namespace, victim.name);
  for (;;) {
    try {
      const object = await client.get<KubeObject>(path);
      if (uid && object.metadata.uid && object.metadata.uid !== uid) return;
    } catch (error) {
      if (error instanceof ApiError && error.code === 404) return;
      throw error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for the condition on ${qualifiedKind(victim.type)}/${victim.name}`);
    await sleep(250);
  }
};

/** Registers `delete`. */
export const registerDelete = (program: Command): void => {
  const command = program
    .command('delete')
    .description('Delete objects by kind and name, label selector, or manifest')
    .argument('[resource...]', 'KIND NAME..., KIND/NAME..., or KIND with -l/--all')
    .option('-f, --filename <path...>', 'delete the objects of these manifests')
    .option('-R, --recursive', 'also read sub-directories of a -f directory')
    .option('-l, --selector <selector>', 'delete every object of KIND matching this label selector')
    .option('--all', 'delete every object of KIND in the namespace')
    .option('-A, --all-namespaces', 'with -l or --all: in every namespace')
    .option('--wait [bool]', 'wait until the objects are gone (true|false)', parseBool, true)
    .option('--timeout <duration>', 'give up waiting after this long (e.g. 60s, 5m; 0 waits forever)', '0s')
    .option('--grace-period <seconds>', 'seconds a pod gets to shut down', parseCount('--grace-period'))
    .option('--now', 'same as --grace-period=1')
    .option('--cascade <policy>', 'background, foreground or orphan', 'background')
    .option('--ignore-not-found', 'treat objects that do not exist as deleted');
  withNamespaceOption(command);
  withConnectionOptions(command);
  command.action(
    action(async (cmd) => {
      const args = cmd.processedArgs[0] as string[];
      const options = optionsOf<DeleteOptions>(cmd);
      const session = connect(cmd);
      const resources = await session.resources();
      const victims: Victim[] = [];
      if (options.filename) {
        if (args.length > 0) throw new Error('cannot specify both -f and resources as arguments');
        for (const manifest of await readManifests(options.filename, options.recursive === true)) {
          victims.push(targetOf(manifest, resources, session.namespace, session.explicitNamespace));
        }
      } else if (args[0]?.includes('/')) {
        for (const arg of args) {
          const slash = arg.indexOf('/');
          if (slash < 0) throw new Error(`there is no need to specify a resource type as a separate argument when passing arguments in resource/name form`);
          const type = resources.resolve(arg.slice(0, slash));
          victims.push({ type, namespace: type.namespaced ? session.namespace : undefined, name: arg.slice(slash + 1) });
        }
      } else if (args[0] !== undefined) {
        const type = resources.resolve(args[0]);
        const names = args.slice(1);
        if (names.length > 0) {
          if (options.selector || options.all) throw new Error('names cannot be combined with -l or --all');
          for (const name of names) victims.push({ type, namespace: type.namespaced ? session.namespace : undefined, name });
        } else {
          if (!options.selector && !options.all) throw new Error('resource(s) were provided, but no name was specified (use a name, -l SELECTOR or --all)');
          const list = await session.client.get<{ items?: KubeObject[] }>(collectionPath(type, options.allNamespaces ? undefined : session.namespace), {
            labelSelector: options.selector,
          });
          for (const item of list.items ?? []) victims.push({ type, namespace: type.namespaced ? item.metadata.namespace : undefined, name: item.metadata.name });
          if (victims.length === 0) process.stderr.write('No resources found\n');
        }
      } else {
        throw new Error('you must provide one or more resources by argument or filename');
      }
      const body = deleteOptionsBody(options.cascade, options.now ? 1 : options.gracePeriod);
      const deleted: { victim: Victim; uid: string | undefined }[] = [];
      let failures = 0;
      for (const victim of victims) {
        try {
          const reply = await session.client.request<Partial<KubeObject> | undefined>('DELETE', objectPath(victim.type, victim.namespace, victim.name), { body });
          out(`${qualifiedKind(victim.type)} "${victim.name}" deleted\n`);
          deleted.push({ victim, uid: reply?.metadata?.uid });
        } catch (error) {
          if (options.ignoreNotFound && error instanceof ApiError && error.code === 404) continue;
          if (!(error instanceof ApiError)) throw error;
          printError(error);
          failures++;
        }
      }
      if (options.wait) {
        const timeout = parseDuration(options.timeout ?? '0s');
        const deadline = timeout === 0 ? Number.POSITIVE_INFINITY : Date.now() + timeout;
        for (const { victim, uid } of deleted) await waitUntilGone(session.client, victim, uid, deadline);
      }
      if (failures > 0) throw new ReportedError(failures);
    }),
  );
};
