/**
 * Events for the controllers: a controller's decision stays what it was, and a narrator
 * says which of kube's Events that decision records (from its commands and the view it
 * was made on); the recorder correlates them against the Events of the view and adds the
 * commands that write them. Decisions stay pure and level-based: a replay or `debug
 * reconcile` at the same view and `now` records the same Events.
 */
import type { View } from '../../projections/index.ts';
import type { KubeObject } from '../../schemas/index.ts';
import type { Controller, Decision } from '../runtime.ts';
import { createRecorder, type EventSource, type Recorder } from '../../projections/event-recorder.ts';

export * from '../../projections/event-correlator.ts';
export * from '../../projections/event-recorder.ts';

/** Says which Events the decision of `key` on `view` records. */
export type Narrator = (key: string, view: View, decision: Decision, recorder: Recorder) => void;

/** `decision` with the commands of the Events `narrate` records about it appended. */
export const narrated = (source: EventSource, narrate: Narrator, key: string, view: View, now: number, decision: Decision): Decision => {
  if (decision.commands.length === 0) return decision;
  const recorder = createRecorder(view, now, source);
  narrate(key, view, decision, recorder);
  const events = recorder.commands();
  return events.length === 0 ? decision : { ...decision, commands: [...decision.commands, ...events] };
};

/** `controller` whose decisions record the Events `narrate` says, as `source`. */
export const withEvents = (controller: Controller, source: EventSource, narrate: Narrator): Controller => {
  const { decideAll } = controller;
  return {
    ...controller,
    decide: (key, view, context) => narrated(source, narrate, key, view, context.now, controller.decide(key, view, context)),
    ...(decideAll
      ? {
          decideAll: (keys, view, context) =>
            new Map([...decideAll(keys, view, context)].map(([key, decision]) => [key, narrated(source, narrate, key, view, context.now, decision)])),
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
