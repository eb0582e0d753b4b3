/**
 * `POST pods/NAME/eviction` with a policy/v1 (or v1beta1) Eviction: a pod delete that
 * honours the PodDisruptionBudget selecting the pod, as kube's
 * `pkg/registry/core/pod/storage/eviction.go`.
 *
 * A terminal, pending or terminating pod is deleted without consulting a budget. Otherwise
 * the one budget selecting the pod decides (two or more: 500, as kube): an unready pod
 * goes when the budget's policy lets unhealthy pods go (`AlwaysAllow`, or
 * `IfHealthyBudget` while the budget is met); a ready pod needs a disruption allowed,
 * which is taken by a status write of the budget — `disruptionsAllowed` decremented, the
 * pod added to `disruptedPods` — that carries the budget's resourceVersion, so the fold
 * judges it in log order against every other write of that status (budgets and pods share
 * a partition domain); a conflict re-reads the budget and tries again, as kube retries.
 * No disruption allowed, or a budget whose status lags its spec, is 429 TooManyRequests
 * with the `DisruptionBudget` cause. Then, as kube's `addConditionAndDeletePod`, the pod gets
 * the `DisruptionTarget` condition (reason `EvictionByEvictionAPI`) by a status write and is
 * deleted with the Eviction's `deleteOptions` (preconditions, grace period, dryRun). kube
 * records no Event for an eviction, and neither does logplane.
 */
import { labelSelectorToRequirements, matchesLabels } from '../../projections/selectors.ts';
import { kindRef } from '../../schemas/keys.ts';
import type { Condition, KubeObject, Pod, PodCondition, PodDisruptionBudget, PodDisruptionBudgetStatus } from '../../schemas/index.ts';
import { catchUp, json, keyOf, nameOf, objectAfter, throwIfRejected, type Reply, type RequestContext, type ServerContext } from '../context.ts';
import { ApiError, apiErrors } from '../errors.ts';
import { readJsonBody } from '../http.ts';
import { CAUSE_TYPES, failureStatus, successStatus, type Status } from '../status.ts';
import { parseWriteOptions } from '../write-options.ts';
import { deleteCurrent, deleteOptionsFrom, type DeleteOptions } from './write.ts';

/** The API versions an Eviction may be sent as (kube's `AcceptsGroupVersion`). */
const EVICTION_VERSIONS = ['policy/v1', 'policy/v1beta1'] as const;

/** Most entries `status.disruptedPods` may hold before evictions are refused (kube's `MaxDisruptedPodSize`). */
export const MAX_DISRUPTED_POD_SIZE = 2000;

/** Attempts of the budget's status write on conflict (kube's `EvictionsRetry.Steps`). */
export const EVICTION_RETRIES = 20;

const PDB_KIND_REF = kindRef('PodDisruptionBudget');

/** kube's 429 for an eviction the budget refuses. */
const tooManyRequests = (cause: string, retryAfterSeconds: number): ApiError =>
  new ApiError(
    failureStatus("TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.", {
      causes: [{ reason: CAUSE_TYPES.DisruptionBudget, message: cause }],
      ...(retryAfterSeconds > 0 ? { retryAfterSeconds } : {}),
    }),
  );

/** kube's `createTooManyRequestsError`: the budget's status has not caught up with its spec. */
const stillProcessing = (pdbName: string): ApiError => tooManyRequests(`The disruption budget ${pdbName} is still being processed by the server.`, 10);

const budgetForbidden = (pdbName: string, detail: string): ApiError =>
  new ApiError(
    failureStatus('Forbidden', `poddisruptionbudget.policy "${pdbName}" is forbidden: ${detail}`, { name: pdbName, group: 'policy', kind: 'poddisruptionbudget' }),
  );

/** The Eviction body, checked field by field (400 naming the field, as kube's decoding and Create). */
const parseEviction = (body: unknown, name: string, queryDryRun: readonly string[]): DeleteOptions => {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw apiErrors.badRequest('an Eviction must be a JSON object');
  const eviction = body as { apiVersion?: unknown; kind?: unknown; metadata?: unknown; deleteOptions?: unknown };
  if (eviction.kind !== undefined && eviction.kind !== 'Eviction') {
    throw apiErrors.badRequest(`kind: Invalid value: ${JSON.stringify(eviction.kind)}: not a Eviction object`);
  }
  if (eviction.apiVersion !== undefined && !(EVICTION_VERSIONS as readonly unknown[]).includes(eviction.apiVersion)) {
    throw apiErrors.badRequest(`apiVersion: Unsupported value: ${JSON.stringify(eviction.apiVersion)}: supported values: ${EVICTION_VERSIONS.map((v) => `"${v}"`).join(', ')}`);
  }
  if (eviction.metadata !== undefined && (typeof eviction.metadata !== 'object' || eviction.metadata === null || Array.isArray(eviction.metadata))) {
    throw apiErrors.badRequest('metadata: Invalid value: must be an object');
  }
  const bodyName = (eviction.metadata as { name?: unknown } | undefined)?.name ?? '';
  if (bodyName !== name) throw apiErrors.badRequest('name in URL does not match name in Eviction object');
  const raw = eviction.deleteOptions ?? {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw apiErrors.badRequest('deleteOptions: Invalid value: must be an object');
  const deleteOptions = raw as Record<string, unknown>;
  const preconditions = deleteOptions['preconditions'];
  if (preconditions !== undefined && preconditions !== null) {
    if (typeof preconditions !== 'object' || Array.isArray(preconditions)) throw apiErrors.badRequest('deleteOptions.preconditions: Invalid value: must be an object');
    for (const field of ['uid', 'resourceVersion'] as const) {
      const value = (preconditions as Record<string, unknown>)[field];
      if (value !== undefined && value !== null && typeof value !== 'string') {
        throw apiErrors.badRequest(`deleteOptions.preconditions.${field}: Invalid value: ${JSON.stringify(value)}: must be a string`);
      }
    }
  }
  const grace = deleteOptions['gracePeriodSeconds'];
  if (grace !== undefined && grace !== null && (typeof grace !== 'number' || !Number.isInteger(grace))) {
    throw apiErrors.badRequest(`deleteOptions.gracePeriodSeconds: Invalid value: ${JSON.stringify(grace)}: must be an integer`);
  }
  const bodyDryRun = deleteOptions['dryRun'];
  if (bodyDryRun !== undefined && bodyDryRun !== null && !Array.isArray(bodyDryRun)) {
    throw apiErrors.badRequest(`deleteOptions.dryRun: Invalid value: ${JSON.stringify(bodyDryRun)}: must be a list of strings`);
  }
  // kube's propagateDryRun: the query's dryRun fills an empty one of the body; two different ones are an error.
  const listed = (bodyDryRun ?? []) as unknown[];
  if (listed.length > 0 && queryDryRun.length > 0 && JSON.stringify(listed) !== JSON.stringify(queryDryRun)) {
    throw apiErrors.badRequest(`Non-matching dry-run options in request and content: [${queryDryRun.join(' ')}] and [${listed.map(String).join(' ')}]`);
  }
  return deleteOptionsFrom({ ...deleteOptions, dryRun: listed.length > 0 ? listed : [...queryDryRun] }, new URLSearchParams());
};

const isPodReady = (pod: Pod): boolean => (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** kube's `canIgnorePDB`: a terminal, pending or terminating pod disrupts nothing more by going. */
const canIgnoreBudget = (pod: Pod): boolean => {
  const phase = pod.status?.phase ?? 'Pending';
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || Boolean(pod.metadata.deletionTimestamp);
};

/** kube's `shouldEnforceResourceVersion`: pin the delete to the pod read, unless it is terminal or terminating. */
const shouldPinVersion = (pod: Pod): boolean => {
  const phase = pod.status?.phase;
  return !(phase === 'Succeeded' || phase === 'Failed' || pod.metadata.deletionTimestamp);
};

/** The budgets of the pod's namespace whose (present, valid) selector matches it, as kube's `getPodDisruptionBudgets`. */
const budgetsFor = (server: ServerContext, pod: Pod): PodDisruptionBudget[] =>
  (server.projection.view().list('PodDisruptionBudget', pod.metadata.namespace) as PodDisruptionBudget[]).filter((pdb) => {
    if (!pdb.spec?.selector) return false;
    const parsed = labelSelectorToRequirements(pdb.spec.selector);
    return parsed.type === 'ok' && matchesLabels(parsed.requirements, pod.metadata.labels);
  });

const isoNow = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/** pdbhelper's `UpdateDisruptionAllowedCondition` for a budget with no disruption left. */
const insufficientPods = (status: PodDisruptionBudgetStatus): Condition[] => {
  const conditions = status.conditions ?? [];
  const next = { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '', observedGeneration: status.observedGeneration ?? 0 };
  const existing = conditions.find((c) => c.type === next.type);
  if (!existing) return [...conditions, { ...next, lastTransitionTime: isoNow() }];
  const lastTransitionTime = existing.status === next.status ? existing.lastTransitionTime : isoNow();
  return conditions.map((c) => (c === existing ? { ...next, lastTransitionTime } : c));
};

/**
 * kube's `checkAndDecrement`: refuses when the budget allows no disruption, else takes one
 * by a status write judged against `pdb`'s resourceVersion. Returns false when the fold
 * found the budget changed since it was read (a conflict: re-read and try again).
 */
const checkAndDecrement = async (server: ServerContext, ctx: RequestContext, pdb: PodDisruptionBudget, podName: string, dryRun: boolean): Promise<boolean> => {
  const status = pdb.status ?? { currentHealthy: 0, desiredHealthy: 0, expectedPods: 0, disruptionsAllowed: 0 };
  const name = pdb.metadata.name;
  if ((status.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) throw stillProcessing(name);
  if (status.disruptionsAllowed < 0) throw budgetForbidden(name, 'pdb disruptions allowed is negative');
  if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_POD_SIZE) {
    throw budgetForbidden(name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  }
  if (status.disruptionsAllowed === 0) {
    throw tooManyRequests(`The disruption budget ${name} needs ${status.desiredHealthy} healthy pods and has ${status.currentHealthy} currently`, 0);
  }
  if (dryRun) return true;
  const allowed = status.disruptionsAllowed - 1;
  const next: PodDisruptionBudgetStatus = { ...status, disruptionsAllowed: allowed, disruptedPods: { ...status.disruptedPods, [podName]: isoNow() } };
  if (allowed === 0) next.conditions = insufficientPods(next);
  const object = structuredClone(pdb) as KubeObject & { status?: PodDisruptionBudgetStatus };
  delete object.metadata.resourceVersion;
  object.status = next;
  const result = await server.writer.submit({
    topic: 'observed',
    key: `${PDB_KIND_REF}/${pdb.metadata.namespace ?? ''}/${name}`,
    body: { type: 'ObjectUpdated', object, expectedResourceVersion: pdb.metadata.resourceVersion ?? null, subresource: 'status' },
    identity: ctx.identity,
  });
  const verdict = result.record.verdict;
  if (verdict.type === 'accepted') return true;
  if (verdict.reason === 'Conflict') return false;
  throw apiErrors.internal(`the status write of PodDisruptionBudget ${name} was rejected: ${verdict.message}`);
};

/** The current pod, after catching up with the log; 404 when absent. */
const currentPod = async (server: ServerContext, ctx: RequestContext): Promise<Pod> => {
  const name = nameOf(ctx.target);
  await catchUp(server);
  const pod = server.projection.view().get(keyOf(ctx.target.resource, ctx.target.namespace, name));
  if (pod?.kind !== 'Pod') throw apiErrors.notFound(ctx.target.resource, name);
  return pod;
};

const pinnedTo = (options: DeleteOptions, pod: Pod): DeleteOptions => ({ ...options, resourceVersion: pod.metadata.resourceVersion ?? null });

/** The DisruptionTarget condition kube's eviction sets on the pod it evicts (its transition time aside). */
const EVICTION_CONDITION = { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' } as const;

/**
 * podutil's `UpdatePodCondition` with the eviction's condition: added, or replacing one of
 * its type in place (the transition time kept while the status holds). Undefined when the
 * pod already has it exactly, so nothing is written.
 */
const withEvictionCondition = (pod: Pod, now: string): NonNullable<Pod['status']> | undefined => {
  const conditions = pod.status?.conditions ?? [];
  const existing = conditions.find((c) => c.type === EVICTION_CONDITION.type);
  const lastTransitionTime = existing?.status === EVICTION_CONDITION.status ? existing.lastTransitionTime : now;
  const condition: PodCondition = { ...EVICTION_CONDITION, ...(lastTransitionTime === undefined ? {} : { lastTransitionTime }) };
  if (existing && JSON.stringify(existing) === JSON.stringify(condition)) return undefined;
  return { ...pod.status, conditions: existing ? conditions.map((c) => (c === existing ? condition : c)) : [...conditions, condition] };
};

/**
 * The first half of kube's `addConditionAndDeletePod`: the latest pod, checked against the
 * delete's preconditions (uid, resourceVersion), gets the eviction's DisruptionTarget
 * condition by a status write conditional on the pod read; a conflict with another status
 * write reads the pod again (kube's guaranteed update). Returns the pod as written, and the
 * options with their resourceVersion pin moved to it (the write bumped the version).
 */
const markDisruptionTarget = async (server: ServerContext, ctx: RequestContext, options: DeleteOptions): Promise<{ pod: Pod; options: DeleteOptions }> => {
  for (let attempt = 1; ; attempt++) {
    const latest = await currentPod(server, ctx);
    const { name, uid, resourceVersion } = latest.metadata;
    if (options.uid !== null && options.uid !== uid) {
      throw apiErrors.conflict(ctx.target.resource, name, `the UID in the precondition (${options.uid}) does not match the UID in record (${uid ?? ''}). The object might have been deleted and then recreated`);
    }
    if (options.resourceVersion !== null && options.resourceVersion !== resourceVersion) {
      throw apiErrors.conflict(
        ctx.target.resource,
        name,
        `the ResourceVersion in the precondition (${options.resourceVersion}) does not match the ResourceVersion in record (${resourceVersion ?? ''}). The object might have been modified`,
      );
    }
    const status = withEvictionCondition(latest, isoNow());
    if (!status) return { pod: latest, options };
    const object = structuredClone(latest);
    delete object.metadata.resourceVersion;
    object.status = status;
    const key = keyOf(ctx.target.resource, latest.metadata.namespace, name);
    const result = await server.writer.submit({
      topic: 'observed',
      key,
      body: { type: 'ObjectUpdated', object, expectedResourceVersion: resourceVersion ?? null, subresource: 'status' },
      identity: ctx.identity,
    });
    const verdict = result.record.verdict;
    if (verdict.type === 'rejected' && verdict.reason === 'Conflict' && attempt < EVICTION_RETRIES) continue;
    throwIfRejected(result, ctx.target.resource, name);
    const written = objectAfter(server, result, key);
    if (written?.kind !== 'Pod') throw apiErrors.notFound(ctx.target.resource, name);
    return { pod: written, options: options.resourceVersion === null ? options : pinnedTo(options, written) };
  }
};

/**
 * Deletes the pod as an eviction does: marked a disruption target first (not on a dry run);
 * a pin the eviction added itself (not the client's) also checks the pod's status part
 * here, so a pod that became ready since is not deleted.
 */
const deletePod = async (server: ServerContext, ctx: RequestContext, read: Pod, readOptions: DeleteOptions, pinned: boolean): Promise<void> => {
  const { pod, options } = readOptions.dryRun ? { pod: read, options: readOptions } : await markDisruptionTarget(server, ctx, readOptions);
  if (pinned) {
    const now = server.projection.view().get(keyOf(ctx.target.resource, ctx.target.namespace, pod.metadata.name));
    if (now?.metadata.resourceVersion !== pod.metadata.resourceVersion) {
      throw apiErrors.conflict(ctx.target.resource, pod.metadata.name, 'the object has been modified; please apply your changes to the latest version and try again');
    }
  }
  await deleteCurrent(server, ctx, pod, options);
};

const succeeded = (): Reply => json(201, successStatus(201));

/** POST `pods/NAME/eviction`. */
export const evictPod = async (server: ServerContext, ctx: RequestContext): Promise<Reply> => {
  const name = nameOf(ctx.target);
  const createOptions = parseWriteOptions('CreateOptions', ctx.query);
  const options = parseEviction(await readJsonBody(ctx.req), name, createOptions.dryRun ? ctx.query.getAll('dryRun') : []);
  const clientPinned = options.resourceVersion !== null;

  // A pod that can go without a budget's say goes; conflicts are retried unless the client pinned a version.
  let pod: Pod;
  for (let attempt = 1; ; attempt++) {
    pod = await currentPod(server, ctx);
    if (!canIgnoreBudget(pod)) break;
    const pin = shouldPinVersion(pod) && !clientPinned;
    try {
      await deletePod(server, ctx, pod, pin ? pinnedTo(options, pod) : options, pin);
      return succeeded();
    } catch (error) {
      const conflict = error instanceof ApiError && error.status.reason === 'Conflict';
      if (!conflict || clientPinned || attempt >= EVICTION_RETRIES) throw error;
    }
  }

  const budgets = budgetsFor(server, pod);
  if (budgets.length > 1) {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
      code: 500,
    };
    return json(500, status);
  }
  let pinDelete = false;
  const [first] = budgets;
  if (first) {
    const status = first.status;
    const unhealthyMayGo =
      !isPodReady(pod) &&
      (first.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow' || ((status?.currentHealthy ?? 0) >= (status?.desiredHealthy ?? 0) && (status?.desiredHealthy ?? 0) > 0));
    if (unhealthyMayGo) {
      pinDelete = true;
    } else {
      let pdb: PodDisruptionBudget | undefined = first;
      for (let attempt = 1; ; attempt++) {
        if (await checkAndDecrement(server, ctx, pdb, pod.metadata.name, options.dryRun)) break;
        if (attempt >= EVICTION_RETRIES) {
          throw new ApiError(
            failureStatus('Timeout', `Timeout: couldn't update PodDisruptionBudget "${first.metadata.name}" due to conflicts`, { retryAfterSeconds: 10 }),
          );
        }
        await catchUp(server);
        const refreshed = server.projection.view().get(`${PDB_KIND_REF}/${first.metadata.namespace ?? ''}/${first.metadata.name}`);
        if (refreshed?.kind !== 'PodDisruptionBudget') {
          throw new ApiError(failureStatus('NotFound', `poddisruptionbudgets.policy "${first.metadata.name}" not found`, { name: first.metadata.name, group: 'policy', kind: 'poddisruptionbudgets' }));
        }
        pdb = refreshed;
      }
    }
  }

  const pin = pinDelete && !clientPinned;
  try {
    await deletePod(server, ctx, pod, pin ? pinnedTo(options, pod) : options, pin);
  } catch (error) {
    // The pod changed since its health was judged: the client may try again (kube's 429).
    if (error instanceof ApiError && error.status.reason === 'Conflict' && pin && first) throw stillProcessing(first.metadata.name);
    throw error;
  }
  return succeeded();
};
