/**
 * What the Event objects of a run cost in the log: the appends between two sets of end
 * offsets read back and decoded, counted by whether they write a core/v1 Event (created or
 * updated) and by their encoded bytes. For `npm run bench`'s "what Events cost per pod".
 */
import type { EventLog, Topic } from '../log/port.ts';
import { decodeEvent } from '../schemas/index.ts';

const TOPICS: readonly Topic[] = ['desired', 'observed'];

/** End offsets of the topics whose appends are counted, per topic. */
export type Offsets = ReadonlyMap<Topic, readonly number[]>;

export interface AppendCounts {
  readonly appends: number;
  readonly bytes: number;
  /** Appends that create or update an Event object. */
  readonly eventAppends: number;
  readonly eventBytes: number;
}

export const endOffsetsOf = async (log: EventLog): Promise<Offsets> =>
  new Map(await Promise.all(TOPICS.map(async (topic) => [topic, await log.endOffsets(topic)] as const)));

/** Counts the appends after `from` up to the current end of each topic. */
export const appendsSince = async (log: EventLog, from: Offsets): Promise<AppendCounts> => {
  const counts = { appends: 0, bytes: 0, eventAppends: 0, eventBytes: 0 };
  for (const topic of TOPICS) {
    const ends = await log.endOffsets(topic);
    for (let partition = 0; partition < ends.length; partition++) {
      const end = ends[partition] ?? 0;
      for (let offset = from.get(topic)?.[partition] ?? 0; offset < end; ) {
        const records = await log.read(topic, partition, offset, Math.min(end, offset + 5_000));
        if (records.length === 0) break;
        for (const record of records) {
          counts.appends += 1;
          counts.bytes += record.value.length;
          const { body } = decodeEvent(record.value);
          if ((body.type === 'ObjectCreated' || body.type === 'ObjectUpdated') && body.object.kind === 'Event') {
            counts.eventAppends += 1;
            counts.eventBytes += record.value.length;
          }
        }
        offset = (records.at(-1)?.offset ?? offset) + 1;
      }
    }
  }
  return counts;
};
