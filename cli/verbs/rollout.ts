/**
 * `logplane rollout status|undo|history deploy/NAME`. `status` follows the Deployment
 * (GET, then a watch) and prints kubectl's progress messages until the rollout is done;
 * `undo` puts the pod template of an earlier revision's ReplicaSet back into the
 * Deployment; `history` lists the revisions.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { Deployment, PodTemplateSpec, ReplicaSet } from '../../schemas/index.ts';
import { ApiError, type Client } from '../client.ts';
import { renderTable } from '../printers.ts';
import { action, connect, optionsOf, out, parseBool, sleep, withConnectionOptions, withNamespaceOption } from './common.ts';
import { collectionPath, objectPath, parseObjectReference, typedName, type Resources, type ResourceType } from './kinds.ts';
import { selectorFromLabels } from './selector.ts';
import { ownedReplicaSets, revisionOf, sameTemplate, stripHash } from './workloads.ts';

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses a Go-style duration (`30s`, `5m`, `1h30m`, `0`) into milliseconds. */
export const parseDuration = (text: string): number => {
  if (text === '0') return 0;
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(text)) throw new InvalidArgumentError(`invalid duration ${JSON.stringify(text)} (e.g. 30s, 5m, 1h)`);
  let total = 0;
  for (const [, amount, , unit] of text.matchAll(/(\d+(\.\d+)?)(ms|s|m|h)/g)) total += Number(amount) * DURATION_UNITS[unit!]!;
  return Math.round(total);
};

/** Where a rollout stands. */
export type RolloutState =
  | { readonly type: 'progressing'; readonly message: string }
  | { readonly type: 'done'; readonly message: string }
  | { readonly type: 'failed'; readonly message: string };

/** kubectl's `DeploymentStatusViewer`: the message for a Deployment's status, and whether it is done. */
export const rolloutStatus = (deployment: Deployment): RolloutState => {
  const name = deployment.metadata.name;
  const status = deployment.status ?? {};
  if ((deployment.metadata.generation ?? 0) > (status.observedGeneration ?? 0)) {
    return { type: 'progressing', message: 'Waiting for deployment spec update to be observed...' };
  }
  const progressing = (status.conditions ?? []).find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') return { type: 'failed', message: `deployment "${name}" exceeded its progress deadline` };
  const desired = deployment.spec.replicas ?? 1;
  const updated = status.updatedReplicas ?? 0;
  const total = status.replicas ?? 0;
  const available = status.availableReplicas ?? 0;
  if (updated < desired) {
    return { type: 'progressing', message: `Waiting for deployment "${name}" rollout to finish: ${updated} out of ${desired} new replicas have been updated...` };
  }
  if (total > updated) {
    return { type: 'progressing', message: `Waiting for deployment "${name}" rollout to finish: ${total - updated} old replicas are pending termination...` };
  }
  if (available < updated) {
    return { type: 'progressing', message: `Waiting for deployment "${name}" rollout to finish: ${available} of ${updated} updated replicas are available...` };
  }
  return { type: 'done', message: `deployment "${name}" successfully rolled out` };
};

/** What `rollout undo` will do. */
export type RollbackPlan =
  | { readonly type: 'rollback'; readonly revision: number; readonly template: PodTemplateSpec }
  | { readonly type: 'skipped'; readonly revision: number; readonly message: string }
  | { readonly type: 'error'; readonly message: string };

/**
 * kubectl's revision choice for `rollout undo`: `toRevision` if given (> 0), else the
 * second-highest revision among the Deployment's ReplicaSets. The template to restore is
 * that ReplicaSet's, without the `pod-template-hash` label; when it already equals the
 * Deployment's, the rollback is skipped.
 */
export const rollbackTemplate = (deployment: Deployment, replicaSets: readonly ReplicaSet[], toRevision = 0): RollbackPlan => {
  let latest: { revision: number; rs: ReplicaSet } | undefined;
  let previous: { revision: number; rs: ReplicaSet } | undefined;
  let chosen: { revision: number; rs: ReplicaSet } | undefined;
  for (const rs of ownedReplicaSets(deployment, replicaSets)) {
    const revision = revisionOf(rs);
    if (revision === undefined) continue;
    if (toRevision > 0) {
      if (revision === toRevision) chosen = { revision, rs };
      continue;
    }
    if (!latest || revision > latest.revision) {
      previous = latest;
      latest = { revision, rs };
    } else if (!previous || revision > previous.revision) previous = { revision, rs };
  }
  if (toRevision > 0 && !chosen) return { type: 'error', message: `unable to find specified revision ${toRevision} in history` };
  if (toRevision === 0) chosen = previous;
  if (!chosen) return { type: 'error', message: `no rollout history found for deployment "${deployment.metadata.name}"` };
  const template = stripHash(chosen.rs.spec.template);
  if (!template) return { type: 'error', message: `revision ${chosen.revision} (replicaset "${chosen.rs.metadata.name}") has no pod template` };
  if (sameTemplate(template, deployment.spec.template)) {
    return { type: 'skipped', revision: chosen.revision, message: `skipped rollback (current template already matches revision ${chosen.revision})` };
  }
  return { type: 'rollback', revision: chosen.revision, template };
};

const listReplicaSets = async (client: Client, resources: Resources, deployment: Deployment): Promise<ReplicaSet[]> => {
  const labels = deployment.spec.selector.matchLabels;
  const list = await client.get<{ items?: ReplicaSet[] }>(collectionPath(resources.forGroupKind('apps', 'ReplicaSet'), deployment.metadata.namespace), {
    labelSelector: labels ? selectorFromLabels(labels) : undefined,
  });
  return list.items ?? [];
};

const deploymentOnly = (type: ResourceType, verb: string): void => {
  if (type.kind !== 'Deployment') throw new Error(`no ${verb} has been implemented for ${type.plural}; only deployments are supported`);
};

/**
 * Follows a Deployment until its rollout is done, printing each new message. Returns
 * the last state (not done only with `watch` off).
 */
const followRollout = async (client: Client, path: string, watch: boolean, signal: AbortSignal): Promise<RolloutState> => {
  let last = '';
  const report = (state: RolloutState): RolloutState => {
    if (state.type === 'failed') throw new Error(state.message);
    if (state.message !== last) out(`${state.message}\n`);
    last = state.message;
    return state;
  };
  const collection = path.slice(0, path.lastIndexOf('/'));
  const name = decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
  for (;;) {
    const deployment = await client.get<Deployment>(path);
    const state = report(rolloutStatus(deployment));
    if (state.type === 'done' || !watch) return state;
    try {
      for await (const event of client.watch<Deployment>(collection, { fieldSelector: `metadata.name=${name}`, resourceVersion: deployment.metadata.resourceVersion }, signal)) {
        if (event.type === 'DELETED') throw new Error(`deployment "${name}" was deleted`);
        if (event.type !== 'ADDED' && event.type !== 'MODIFIED') continue;
        const next = report(rolloutStatus(event.object));
        if (next.type === 'done') return next;
      }
    } catch (error) {
      if (signal.aborted) throw new Error('timed out waiting for the condition');
      if (!(error instanceof ApiError) || error.code !== 410) throw error;
    }
    await sleep(200);
  }
};

/** Registers `rollout status`, `rollout undo` and `rollout history`. */
export const registerRollout = (program: Command): void => {
  const rollout = program.command('rollout').description('Manage the rollout of a Deployment');

  const status = rollout
    .command('status')
    .description('Watch a rollout until it completes')
    .argument('<resource...>', 'deployment/NAME or deployment NAME')
    .option('-w, --watch [bool]', 'keep watching until the rollout is done (true|false)', parseBool, true)
    .option('--timeout <duration>', 'give up after this long (0: never)', '0s');
  withNamespaceOption(status);
  withConnectionOptions(status);
  status.action(
    action(async (cmd) => {
      const options = optionsOf<{ watch: boolean; timeout: string }>(cmd);
      const timeout = parseDuration(options.timeout);
      const session = connect(cmd);
      const { type, name } = parseObjectReference(cmd.processedArgs[0] as string[], 'deployment/NAME', await session.resources());
      deploymentOnly(type, 'status viewer');
      const controller = new AbortController();
      const timer = timeout > 0 ? setTimeout(() => controller.abort(), timeout) : undefined;
      try {
        await followRollout(session.client, objectPath(type, session.namespace, name), options.watch, controller.signal);
      } finally {
        if (timer) clearTimeout(timer);
      }
    }),
  );

  const undo = rollout
    .command('undo')
    .description('Roll a Deployment back to its previous (or a given) revision')
    .argument('<resource...>', 'deployment/NAME or deployment NAME')
    .option('--to-revision <revision>', 'the revision to roll back to (default: the previous one)', (v: string) => {
      if (!/^\d+$/.test(v)) throw new InvalidArgumentError('must be a revision number');
      return Number(v);
    });
  withNamespaceOption(undo);
  withConnectionOptions(undo);
  undo.action(
    action(async (cmd) => {
      const options = optionsOf<{ toRevision?: number }>(cmd);
      const session = connect(cmd);
      const resources = await session.resources();
      const { type, name } = parseObjectReference(cmd.processedArgs[0] as string[], 'deployment/NAME', resources);
      deploymentOnly(type, 'rollbacker');
      const path = objectPath(type, session.namespace, name);
      for (let attempt = 0; ; attempt++) {
        const deployment = await session.client.get<Deployment>(path);
        if (deployment.spec.paused) {
          throw new Error(`you cannot rollback a paused deployment; resume it first with 'logplane rollout resume' and try again`);
        }
        const plan = rollbackTemplate(deployment, await listReplicaSets(session.client, resources, deployment), options.toRevision ?? 0);
        if (plan.type === 'error') throw new Error(plan.message);
        if (plan.type === 'skipped') {
          out(`${typedName(type, name)} ${plan.message}\n`);
          return;
        }
        const updated: Deployment = { ...deployment, spec: { ...deployment.spec, template: plan.template } };
        try {
          await session.client.request<Deployment>('PUT', path, { body: updated });
          out(`${typedName(type, name)} rolled back\n`);
          return;
        } catch (error) {
          if (error instanceof ApiError && error.code === 409 && attempt === 0) continue;
          throw error;
        }
      }
    }),
  );

  const history = rollout
    .command('history')
    .description('List the revisions of a Deployment')
    .argument('<resource...>', 'deployment/NAME or deployment NAME');
  withNamespaceOption(history);
  withConnectionOptions(history);
  history.action(
    action(async (cmd) => {
      const session = connect(cmd);
      const resources = await session.resources();
      const { type, name } = parseObjectReference(cmd.processedArgs[0] as string[], 'deployment/NAME', resources);
      deploymentOnly(type, 'history viewer');
      const deployment = await session.client.get<Deployment>(objectPath(type, session.namespace, name));
      const revisions = ownedReplicaSets(deployment, await listReplicaSets(session.client, resources, deployment))
        .map((rs) => ({ revision: revisionOf(rs), cause: rs.metadata.annotations?.['kubernetes.io/change-cause'] ?? '<none>' }))
        .filter((r): r is { revision: number; cause: string } => r.revision !== undefined)
        .sort((a, b) => a.revision - b.revision);
      out(`${typedName(type, name)} \n`);
      out(renderTable([['REVISION', 'CHANGE-CAUSE'], ...revisions.map((r) => [String(r.revision), r.cause])]));
    }),
  );
};
