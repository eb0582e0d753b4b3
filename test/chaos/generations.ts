/**
 * "No key acted on by two members of a group in the same generation", judged from the topics
 * alone: every command a reconciler appends carries record headers naming its consumer group,
 * the member, the group's generation it decided in (the broker's generation id, the same for
 * every member of one rebalance) and the key it decided (`reconcilers/actor-headers.ts`). The
 * checker's own consumer reads them; two members stamping one (group, generation, key) is a
 * violation: the group's assignment gave one partition to two members at once, or a member
 * acted on a key outside what it owned.
 */
import type { LogRecord } from '../../log/port.ts';
import { actorOfHeaders } from '../../reconcilers/actor-headers.ts';

export interface GenerationIndex {
  /** `group generation key` → the members that acted on it. */
  readonly actedBy: Map<string, Set<string>>;
  /** Commands that carried the headers. */
  stamped: number;
  /** Distinct (group, generation) pairs seen. */
  readonly generations: Set<string>;
}

export const createGenerationIndex = (): GenerationIndex => ({ actedBy: new Map(), stamped: 0, generations: new Set() });

/** Indexes one record read from any topic. */
export const indexActor = (index: GenerationIndex, record: LogRecord): void => {
  const actor = actorOfHeaders(record.headers);
  if (!actor) return;
  index.stamped++;
  index.generations.add(`${actor.group} ${actor.generation}`);
  const slot = `${actor.group} ${actor.generation} ${actor.decidedKey}`;
  const members = index.actedBy.get(slot) ?? new Set<string>();
  members.add(actor.member);
  index.actedBy.set(slot, members);
};

export interface GenerationVerdict {
  readonly stamped: number;
  readonly generations: number;
  readonly violations: readonly string[];
}

export const judgeGenerations = (index: GenerationIndex): GenerationVerdict => ({
  stamped: index.stamped,
  generations: index.generations.size,
  violations: [...index.actedBy]
    .filter(([, members]) => members.size > 1)
    .map(([slot, members]) => {
      const [group, generation, ...key] = slot.split(' ');
      return `${group}: key ${key.join(' ')} acted on by ${members.size} members in generation ${generation} (${[...members].join(', ')})`;
    }),
});
