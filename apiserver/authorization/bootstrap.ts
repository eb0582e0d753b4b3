/**
 * Creates the bootstrap ClusterRoles and ClusterRoleBindings that are missing, as kube's
 * `rbac/bootstrap-roles` post-start hook does: ordinary ObjectCreated events by
 * `system:apiserver`, so the fold stays a function of the log. An existing one annotated
 * `rbac.authorization.kubernetes.io/autoupdate: "true"` is reconciled additively, as kube
 * does: missing labels, annotations, rules, aggregation selectors and subjects are added
 * (an ObjectUpdated at its resourceVersion); nothing is removed, and one set to "false" is
 * left alone. Safe to run from several apiservers at once and at every start: the fold lets
 * one write win (AlreadyExists and Conflict are expected), and an object that already has
 * everything appends nothing.
 */
import type { Logger } from 'pino';
import { sameJson } from '../../schemas/canonical-json.ts';
import type { Kind, KubeObject } from '../../schemas/index.ts';
import { catchUp, keyOf, type ServerContext } from '../context.ts';
import { resourceOfKind } from '../resources.ts';
import { admitCreate, admitUpdate } from '../validation/admit.ts';
import { bootstrapClusterRoleBindings, bootstrapClusterRoles } from './bootstrap-policy.ts';

const AUTO_UPDATE = 'rbac.authorization.kubernetes.io/autoupdate';

type Json = Record<string, unknown>;

/** `current`'s members plus those of `wanted` it lacks (by value), in order. */
const union = (current: unknown, wanted: unknown): unknown[] => {
  const merged = Array.isArray(current) ? [...(current as unknown[])] : [];
  for (const item of Array.isArray(wanted) ? (wanted as unknown[]) : []) if (!merged.some((m) => sameJson(m, item))) merged.push(item);
  return merged;
};

/** The object with what the bootstrap object has and `current` lacks, or undefined when nothing is missing. */
const reconciled = (kind: Kind, current: KubeObject, wanted: Json): Json | undefined => {
  const existing = JSON.parse(JSON.stringify(current)) as Json;
  const metadata = existing['metadata'] as Json;
  if ((metadata['annotations'] as Record<string, string> | undefined)?.[AUTO_UPDATE] !== 'true') return undefined;
  const wantedMetadata = wanted['metadata'] as Json;
  const next: Json = {
    ...existing,
    metadata: {
      ...metadata,
      labels: { ...(wantedMetadata['labels'] as Json), ...(metadata['labels'] as Json | undefined) },
      annotations: { ...(wantedMetadata['annotations'] as Json), ...(metadata['annotations'] as Json | undefined) },
    },
  };
  if (kind === 'ClusterRole') {
    const rules = union(existing['rules'], wanted['rules']);
    if (rules.length > 0) next['rules'] = rules;
    const wantedSelectors = (wanted['aggregationRule'] as Json | undefined)?.['clusterRoleSelectors'];
    if (wantedSelectors !== undefined) {
      next['aggregationRule'] = { clusterRoleSelectors: union((existing['aggregationRule'] as Json | undefined)?.['clusterRoleSelectors'], wantedSelectors) };
    }
  } else {
    const subjects = union(existing['subjects'], wanted['subjects']);
    if (subjects.length > 0) next['subjects'] = subjects;
  }
  return sameJson(next, existing) ? undefined : next;
};

const BOOTSTRAP_IDENTITY = { actor: { type: 'user', name: 'system:apiserver' }, causationId: null, correlationId: null } as const;

/** Creates one bootstrap object, or reconciles it; true when it appended a change that took effect. */
const ensureObject = async (server: ServerContext, kind: Kind, body: Json): Promise<boolean> => {
  const resource = resourceOfKind(kind);
  const name = (body['metadata'] as { name: string }).name;
  const key = keyOf(resource, undefined, name);
  const current = server.projection.view().get(key);
  if (current) {
    const next = reconciled(kind, current, body);
    if (!next) return false;
    const { object } = admitUpdate({ resource, body: next, fieldValidation: 'Strict', namespace: undefined, name, current });
    const result = await server.writer.submit({
      topic: 'desired',
      key,
      body: { type: 'ObjectUpdated', object, expectedResourceVersion: current.metadata.resourceVersion ?? null, subresource: null },
      identity: BOOTSTRAP_IDENTITY,
    });
    const verdict = result.record.verdict;
    if (verdict.type === 'rejected' && verdict.reason !== 'Conflict' && verdict.reason !== 'NotFound') {
      throw new Error(`could not reconcile bootstrap ${kind} ${name}: ${verdict.reason}: ${verdict.message}`);
    }
    return verdict.type !== 'rejected';
  }
  const { object } = admitCreate({ resource, body, fieldValidation: 'Strict', namespace: undefined });
  const result = await server.writer.submit({ topic: 'desired', key, body: { type: 'ObjectCreated', object }, identity: BOOTSTRAP_IDENTITY });
  const verdict = result.record.verdict;
  if (verdict.type === 'rejected' && verdict.reason !== 'AlreadyExists') {
    throw new Error(`could not create bootstrap ${kind} ${name}: ${verdict.reason}: ${verdict.message}`);
  }
  return verdict.type !== 'rejected';
};

/** Ensures the bootstrap roles, then the bindings (a binding never names a role not there yet). */
export const ensureBootstrapPolicy = async (server: ServerContext, logger: Logger): Promise<void> => {
  await catchUp(server);
  const roles = await Promise.all(bootstrapClusterRoles().map((body) => ensureObject(server, 'ClusterRole', body)));
  const bindings = await Promise.all(bootstrapClusterRoleBindings().map((body) => ensureObject(server, 'ClusterRoleBinding', body)));
  const changed = [...roles, ...bindings].filter(Boolean).length;
  logger.info({ changed, total: roles.length + bindings.length }, 'ensured the bootstrap RBAC policy');
};
