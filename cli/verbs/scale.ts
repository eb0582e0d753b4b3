/**
 * `logplane scale KIND/NAME --replicas N`: a merge patch of the `scale` subresource of a
 * Deployment or ReplicaSet, optionally guarded by `--current-replicas`.
 */
import type { Command } from 'commander';
import { action, connect, optionsOf, out, parseCount, withConnectionOptions, withNamespaceOption } from './common.ts';
import { objectPath, parseObjectReference, typedName } from './kinds.ts';

interface Scale {
  readonly spec?: { readonly replicas?: number };
  readonly status?: { readonly replicas?: number };
}

/** Registers `scale`. */
export const registerScale = (program: Command): void => {
  const command = program
    .command('scale')
    .description('Set the number of replicas of a Deployment or ReplicaSet')
    .argument('<resource...>', 'KIND/NAME or KIND NAME')
    .requiredOption('--replicas <count>', 'the new number of replicas', parseCount('--replicas'))
    .option('--current-replicas <count>', 'only scale if the current number of replicas is this', parseCount('--current-replicas'));
  withNamespaceOption(command);
  withConnectionOptions(command);
  command.action(
    action(async (cmd) => {
      const options = optionsOf<{ replicas: number; currentReplicas?: number }>(cmd);
      const session = connect(cmd);
      const { type, name } = parseObjectReference(cmd.processedArgs[0] as string[], 'KIND/NAME or KIND NAME', await session.resources());
      if (!type.subresources.includes('scale')) throw new Error(`cannot scale ${type.plural}: they have no scale subresource`);
      const path = objectPath(type, session.namespace, name, 'scale');
      if (options.currentReplicas !== undefined) {
        const current = await session.client.get<Scale>(path);
        const replicas = current.spec?.replicas ?? 0;
        if (replicas !== options.currentReplicas) throw new Error(`Expected replicas to be ${options.currentReplicas}, was ${replicas}`);
      }
      await session.client.request<Scale>('PATCH', path, {
        body: { spec: { replicas: options.replicas } },
        contentType: 'application/merge-patch+json',
      });
      out(`${typedName(type, name)} scaled\n`);
    }),
  );
};
