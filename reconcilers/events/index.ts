/**
 * Events for the controllers: a controller's decision stays what it was, and a narrator
 * says which of kube's Events that decision records (from its commands and the view it
 * was made on); the recorder correlates them against the Events of the view and adds the
 * commands that write them. Decisions stay pure and level-based: a replay or `debug
 * reconcile` at the same view and `now` records the same Events.
 */
import type { View } from '../../projections/index.ts';
import type { EventBody, KubeObject } from '../../schemas/index.ts';
import { admitCommands } from '../create-admission.ts';
import type { Controller, Decision, DecideContext } from '../runtime.ts';
import { createRecorder, type EventSource, type Recorder } from '../../projections/event-recorder.ts';
import type { EventAllowance, EventBudget } from './budget.ts';

export * from '../../projections/event-correlator.ts';
export * from '../../projections/event-recorder.ts';
export * from './budget.ts';

/** Says which Events the decision of `key` on `view` records. */
export type Narrator = (key: string, view: View, decision: Decision, recorder: Recorder) => void;

/** Requeue of a key whose creates were refused, before its FailedCreate Event has a count (kube's per-item rate limiter starts at 5 ms). */
const REFUSED_BASE_MS = 5;
/** kube's per-item rate limiter's cap (1000 s). */
const REFUSED_MAX_MS = 1_000_000;
/** When the spam filter dropped the FailedCreate Event: its bucket refills one event per 5 minutes. */
const REFUSED_SPAM_MS = 300_000;

/**
 * When to come back to a key whose creates were refused: kube requeues it with its per-item
 * exponential backoff (5 ms · 2^failures, capped at 1000 s); the failures are counted by the
 * FailedCreate Event's `count` this decision writes, so a replay requeues alike.
 */
const refusedRequeueMs = (commands: readonly EventBody[], owner: KubeObject): number => {
  for (const command of commands) {
    if (command.type !== 'ObjectCreated' && command.type !== 'ObjectUpdated') continue;
    const event = command.object;
    if (event.kind !== 'Event' || event.reason !== 'FailedCreate' || event.involvedObject.uid !== owner.metadata.uid) continue;
    return Math.min(REFUSED_MAX_MS, REFUSED_BASE_MS * 2 ** Math.min(40, event.count ?? 1));
  }
  return REFUSED_SPAM_MS;
};

/** The first `allowance.left` of `events` (what the component's Event client still writes), taken from the allowance. */
const withinAllowance = (events: EventBody[], allowance: EventAllowance | undefined): EventBody[] => {
  if (!allowance) return events;
  const kept = events.length <= allowance.left ? events : events.slice(0, allowance.left);
  allowance.left -= kept.length;
  return kept;
};

/**
 * `decision` with the commands of the Events `narrate` records about it appended. With the
 * create path in `context`, the creates are admitted first: a refused one is dropped, and
 * recorded as kube's `FailedCreate` on the object decided, which is requeued. With an
 * `allowance` (the component's Event budget, see budget.ts), Events past it are dropped.
 */
export const narrated = (
  source: EventSource,
  narrate: Narrator,
  key: string,
  view: View,
  context: DecideContext,
  decided: Decision,
  allowance?: EventAllowance,
): Decision => {
  const { decision, refused } = context.admitCreated ? admitCommands(context.admitCreated, view, decided) : { decision: decided, refused: [] };
  if (context.recordEvents === false) return refused.length === 0 ? decision : { ...decision, requeueAfterMs: Math.min(decision.requeueAfterMs ?? REFUSED_SPAM_MS, REFUSED_SPAM_MS) };
  if (decision.commands.length === 0 && refused.length === 0) return decision;
  // A spent budget writes nothing: no need to correlate Events that would all be dropped.
  if (allowance?.left === 0 && refused.length === 0) return decision;
  const recorder = createRecorder(view, context.now, source);
  narrate(key, view, decision, recorder);
  const owner = refused.length > 0 ? view.get(key) : undefined;
  if (owner) for (const refusal of refused) recorder.event(owner, 'Warning', 'FailedCreate', `Error creating: ${refusal.message}`);
  const recorded = recorder.commands();
  const events = withinAllowance(recorded, allowance);
  const commands = events.length === 0 ? decision.commands : [...decision.commands, ...events];
  if (refused.length === 0) return events.length === 0 ? decision : { ...decision, commands };
  // The backoff follows the failures recorded, whether or not the budget let the Event through.
  const requeueMs = owner ? refusedRequeueMs(recorded, owner) : REFUSED_SPAM_MS;
  return { ...decision, commands, requeueAfterMs: Math.min(decision.requeueAfterMs ?? requeueMs, requeueMs) };
};

/** Who records a decision's Events: one source, or one per key (kube-scheduler's recorder per profile). */
export type EventSourceOf = EventSource | ((key: string, view: View) => EventSource);

/**
 * `controller` whose decisions record the Events `narrate` says, as `source` (or the source of
 * the key decided); with a `budget`, only as many as the component's Event pipeline writes.
 */
export const withEvents = (controller: Controller, sourceOf: EventSourceOf, narrate: Narrator, budget?: EventBudget): Controller => {
  const source = (key: string, view: View): EventSource => (typeof sourceOf === 'function' ? sourceOf(key, view) : sourceOf);
  const allowance = (view: View, context: DecideContext): EventAllowance | undefined =>
    budget && context.recordEvents !== false ? budget.allowance(view, context.now) : undefined;
  const { decideAll, attach } = controller;
  return {
    ...controller,
    decide: (key, view, context) => narrated(source(key, view), narrate, key, view, context, controller.decide(key, view, context), allowance(view, context)),
    ...(decideAll
      ? {
          decideAll: (keys, view, context) => {
            const decisions = decideAll(keys, view, context);
            const shared = allowance(view, context);
            return new Map([...decisions].map(([key, decision]) => [key, narrated(source(key, view), narrate, key, view, context, decision, shared)]));
          },
        }
      : {}),
    ...(budget
      ? {
          attach: (projection) => {
            const detachBudget = budget.attach(projection);
            const detach = attach?.(projection);
            return () => {
              detach?.();
              detachBudget();
            };
          },
        }
      : {}),
  };
};

/**
 * kube's RealPodControl Events on the controller `owner` for the pods its decision creates
 * and deletes: SuccessfulCreate "Created pod: NAME", SuccessfulDelete "Deleted pod: NAME".
 */
export const recordPodControl = (owner: KubeObject, decision: Decision, recorder: Recorder): void => {
  for (const command of decision.commands) {
    if (command.type === 'ObjectCreated' && command.object.kind === 'Pod') {
      recorder.event(owner, 'Normal', 'SuccessfulCreate', `Created pod: ${command.object.metadata.name}`);
    } else if (command.type === 'ObjectDeleted' && command.kind === 'Pod') {
      recorder.event(owner, 'Normal', 'SuccessfulDelete', `Deleted pod: ${command.name}`);
    }
  }
};
