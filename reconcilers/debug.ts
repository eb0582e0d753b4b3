/**
 * Time-travel debugging of reconcilers: re-run a recorded decision on the view at the
 * position it read (`decidedAt`) and compare the commands with what was appended then.
 *
 * A controller decides a round of keys at once (the scheduler's later pods see the
 * capacity earlier pods took), so the round is rebuilt from the log: every event that
 * controller appended with the same `decidedAt` and decision time.
 */
import { type CreateAdmission, withCreateAdmission } from './create-admission.ts';
import { canonicalJson, sameJson } from '../schemas/canonical-json.ts';
import type { EventLog } from '../log/port.ts';
import { FOLDED_TOPICS, formatVector, keyOfBody, type PositionVector, type Projection } from '../projections/index.ts';
import type { EventRecord } from '../projections/store.ts';
import { decodeEvent, type EventBody } from '../schemas/index.ts';
import { ReconcileError } from './errors.ts';
import { decideKeys, type Controller } from './runtime.ts';

export interface DebugResult {
  readonly commands: readonly EventBody[];
  readonly recorded: readonly EventBody[];
  readonly identical: boolean;
}

/** Events of one round: same controller, same decidedAt, same decision time. */
const roundEvents = (projection: Projection, controller: string, decidedAt: string, time: number): EventRecord[] => {
  const found: EventRecord[] = [];
  FOLDED_TOPICS.forEach((_, topicIndex) => {
    for (let partition = 0; partition < projection.partitions; partition++) {
      for (const { value: id } of projection.store.times.getRange({
        start: [topicIndex, partition, time, 0],
        end: [topicIndex, partition, time, Number.MAX_SAFE_INTEGER],
      })) {
        const event = projection.store.events.get(id);
        if (event && event.actor.type === 'controller' && event.actor.name === controller && event.decidedAt === decidedAt) found.push(event);
      }
    }
  });
  return found.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition || a.offset - b.offset);
};

const readBody = async (log: EventLog, event: EventRecord): Promise<EventBody> => {
  const [record] = await log.read(event.topic, event.partition, event.offset, event.offset + 1);
  if (!record) throw new ReconcileError(`event ${event.id} is no longer in the log`, false, { eventId: event.id });
  return decodeEvent(record.value).body;
};

/** `bodies` sorted by their canonical JSON. */
const inCanonicalOrder = (bodies: readonly EventBody[]): EventBody[] =>
  bodies
    .map((body) => ({ body, text: canonicalJson(body) }))
    .sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0))
    .map(({ body }) => body);

/**
 * `recorded` in the order of the `commands` they match, the unmatched after them in log
 * order: events on several partitions have no order of their own to show.
 */
const inCommandOrder = (commands: readonly EventBody[], recorded: readonly EventBody[]): EventBody[] => {
  const left = recorded.map((body) => ({ body, text: canonicalJson(body) }));
  const ordered: EventBody[] = [];
  for (const command of commands) {
    const text = canonicalJson(command);
    const at = left.findIndex((r) => r.text === text);
    if (at >= 0) ordered.push(left.splice(at, 1)[0]!.body);
  }
  return [...ordered, ...left.map((r) => r.body)];
};

/** Creates the debug function the history API calls. */
export const createDebugReconcile =
  (options: { log: EventLog; projection: Projection; controllers: Readonly<Record<string, () => Controller>>; admitCreated?: CreateAdmission }) =>
  async (controllerName: string, key: string, at: PositionVector): Promise<DebugResult> => {
    const factory = options.controllers[controllerName];
    if (!factory) {
      throw new ReconcileError(
        `unknown controller "${controllerName}"; known: ${Object.keys(options.controllers).join(', ')}`,
        false,
      );
    }
    // The controllers' created objects pass through the same create path as when they ran.
    const controller = options.admitCreated ? withCreateAdmission(factory(), options.admitCreated) : factory();
    const decidedAt = formatVector(at);
    const { projection, log } = options;
    // The decision about `key` made on the view at `at`, if the log has one.
    let anchor: EventRecord | undefined;
    for (const { value } of projection.store.history.getRange({ start: [key, 0, 0], end: [key, FOLDED_TOPICS.length, 0] })) {
      const event = projection.store.events.get(value.eventId);
      if (event?.decidedAt === decidedAt && event.actor.name === controllerName) {
        anchor = event;
        break;
      }
    }
    const round = anchor ? roundEvents(projection, controllerName, decidedAt, anchor.time) : [];
    const roundKeys = [...new Set([key, ...round.map((e) => e.key)])];
    const now = anchor?.time ?? Date.now();
    const bodies = await Promise.all(round.map((e) => readBody(log, e)));
    const decisions = decideKeys(controller, roundKeys, projection.viewAt(at), { now, recorded: bodies });
    const commands = decisions.get(key)?.commands ?? [];
    // The round's events about the key, and those about other objects (a scale, an Event)
    // that no other key's decision of the round claims.
    const claimed = new Set([...decisions].filter(([other]) => other !== key).flatMap(([, d]) => d.commands.map(keyOfBody)));
    const recorded = inCommandOrder(
      commands,
      bodies.filter((_, i) => round[i]!.key === key || !claimed.has(round[i]!.key)),
    );
    // Without a recorded decision there is nothing to reproduce, so nothing is identical. The
    // decision's events may lie on several partitions, so their order across them is not compared.
    return { commands, recorded, identical: anchor !== undefined && sameJson(inCanonicalOrder(commands), inCanonicalOrder(recorded)) };
  };
