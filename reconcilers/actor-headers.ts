/**
 * The record headers a reconciler puts on every command it appends: which consumer group,
 * which member of it, in which generation of the group's assignment, and for which decided key
 * (kube has no such thing: its controllers write through the apiserver and leader election
 * keeps one writer; here every member writes the log, so the log says who wrote what).
 * Transport metadata only: the fold never reads headers, and the embedded log does not keep
 * them. The chaos checker reads them to judge that no key was acted on by two members of one
 * group in the same generation.
 */
import type { RecordHeaders } from '../log/port.ts';

export const ACTOR_HEADERS = {
  group: 'logplane-group',
  member: 'logplane-member',
  generation: 'logplane-generation',
  decidedKey: 'logplane-decided-key',
} as const;

/** Who is acting: a member of a group in one generation of its assignment (−1 before the first). */
export interface GroupActor {
  readonly group: string;
  readonly member: string;
  readonly generation: number;
}

/** The headers of one command decided for `decidedKey` (none before the member's first assignment). */
export const commandHeaders = (actor: GroupActor, decidedKey: string | undefined): RecordHeaders | undefined =>
  actor.generation < 0 || decidedKey === undefined
    ? undefined
    : {
        [ACTOR_HEADERS.group]: actor.group,
        [ACTOR_HEADERS.member]: actor.member,
        [ACTOR_HEADERS.generation]: String(actor.generation),
        [ACTOR_HEADERS.decidedKey]: decidedKey,
      };

/** The actor and decided key a record's headers name, if it has them. */
export const actorOfHeaders = (headers: RecordHeaders | undefined): (GroupActor & { decidedKey: string }) | undefined => {
  if (!headers) return undefined;
  const group = headers[ACTOR_HEADERS.group];
  const member = headers[ACTOR_HEADERS.member];
  const generation = Number(headers[ACTOR_HEADERS.generation]);
  const decidedKey = headers[ACTOR_HEADERS.decidedKey];
  if (group === undefined || member === undefined || decidedKey === undefined || !Number.isInteger(generation)) return undefined;
  return { group, member, generation, decidedKey };
};
