/**
 * `logplane logs POD|pod/NAME|deploy/NAME|rs/NAME [CONTAINER] [-c C] [-f] [--tail N]
 * [--previous]`: streams `/api/v1/namespaces/NS/pods/NAME/log` to stdout. For a workload
 * it picks one of its pods (a running one first), and without `-c` it picks the default
 * container like kubectl (annotation `kubectl.kubernetes.io/default-container`, else the
 * first, saying so when there are several).
 */
import type { Command } from 'commander';
import type { Deployment, Pod, ReplicaSet } from '../../schemas/index.ts';
import { action, connect, optionsOf, out, parseCount, withConnectionOptions, withNamespaceOption } from './common.ts';
import { collectionPath, objectPath } from './kinds.ts';
import { selectorFromLabels } from './selector.ts';

/** The annotation naming a pod's default container for logs and exec. */
export const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';

/** The container `logs` reads: the requested one, else the pod's default; with a notice when it had to choose. */
export const chooseContainer = (pod: Pod, requested: string | undefined): { container: string; notice?: string } => {
  const names = pod.spec.containers.map((c) => c.name);
  if (requested !== undefined) {
    if (!names.includes(requested)) throw new Error(`container ${requested} is not valid for pod ${pod.metadata.name}`);
    return { container: requested };
  }
  const annotated = pod.metadata.annotations?.[DEFAULT_CONTAINER_ANNOTATION];
  if (annotated && names.includes(annotated)) return { container: annotated };
  const [first] = names;
  if (first === undefined) throw new Error(`pod ${pod.metadata.name} has no containers`);
  return names.length > 1 ? { container: first, notice: `Defaulted container "${first}" out of: ${names.join(', ')}` } : { container: first };
};

/** Registers `logs`. */
export const registerLogs = (program: Command): void => {
  const command = program
    .command('logs')
    .description('Print the logs of a container of a pod')
    .argument('<pod>', 'POD, pod/NAME, deployment/NAME or replicaset/NAME')
    .argument('[container]', 'container name (same as -c)')
    .option('-c, --container <name>', 'container to read (default: the pod\'s default container)')
    .option('-f, --follow', 'keep streaming new lines')
    .option('--tail <lines>', 'only the last N lines (-1: all)', (value: string) => (value === '-1' ? undefined : parseCount('--tail')(value)))
    .option('-p, --previous', 'the previous, terminated instance of the container')
    .option('--timestamps', 'prefix each line with its time');
  withNamespaceOption(command);
  withConnectionOptions(command);
  command.action(
    action(async (cmd) => {
      const [target, containerArg] = cmd.processedArgs as [string, string | undefined];
      const options = optionsOf<{ container?: string; follow?: boolean; tail?: number; previous?: boolean; timestamps?: boolean }>(cmd);
      const session = connect(cmd);
      const resources = await session.resources();
      const podType = resources.forGroupKind('', 'Pod');
      let podName = target;
      const slash = target.indexOf('/');
      if (slash >= 0) {
        const type = resources.resolve(target.slice(0, slash));
        const name = target.slice(slash + 1);
        if (type.kind === 'Pod') podName = name;
        else if (type.kind === 'Deployment' || type.kind === 'ReplicaSet') {
          const workload = await session.client.get<Deployment | ReplicaSet>(objectPath(type, session.namespace, name));
          const labels = workload.spec.selector.matchLabels ?? {};
          const pods = (
            await session.client.get<{ items?: Pod[] }>(collectionPath(podType, session.namespace), { labelSelector: selectorFromLabels(labels) })
          ).items ?? [];
          const chosen = pods.find((p) => p.status?.phase === 'Running') ?? pods[0];
          if (!chosen) throw new Error(`no pods found for ${type.singular} "${name}"`);
          if (pods.length > 1) process.stderr.write(`Found ${pods.length} pods, using pod/${chosen.metadata.name}\n`);
          podName = chosen.metadata.name;
        } else throw new Error(`cannot get logs of ${type.plural}`);
      }
      const pod = await session.client.get<Pod>(objectPath(podType, session.namespace, podName));
      const { container, notice } = chooseContainer(pod, options.container ?? containerArg);
      if (notice) process.stderr.write(`${notice}\n`);
      const stream = session.client.bytes('GET', objectPath(podType, session.namespace, podName, 'log'), {
        accept: '*/*',
        query: {
          container,
          follow: options.follow === true,
          tailLines: options.tail,
          previous: options.previous === true,
          timestamps: options.timestamps === true,
        },
      });
      for await (const chunk of stream) {
        if (!out(chunk)) await new Promise((resolve) => process.stdout.once('drain', resolve));
      }
    }),
  );
};
