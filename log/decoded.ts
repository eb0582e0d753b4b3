/**
 * Events on top of the byte-level `EventLog`: decode each record with `schemas/`, and
 * quarantine what cannot be decoded instead of stopping the stream. A quarantined record
 * is reported twice: as a `quarantined` item in the stream (so a projection can record it
 * in the same transaction as the events around it) and as a structured pino error line.
 */
import { type Observable, map, mergeMap } from 'rxjs';
import { type Logger, pino } from 'pino';
import { decodeEvent, encodeEvent, type EventEnvelope } from '../schemas/index.ts';
import type { EventLog, LogRecord, Position, RecordBatch, StartPositions, Topic } from './port.ts';

/** One record of the log, decoded or quarantined. */
export type DecodedItem =
  | { readonly type: 'event'; readonly record: LogRecord; readonly event: EventEnvelope }
  | { readonly type: 'quarantined'; readonly record: LogRecord; readonly error: Error };

/** The decoded form of one `RecordBatch`: same topic, partition and order, one item per record. */
export interface DecodedBatch {
  readonly topic: Topic;
  readonly partition: number;
  readonly items: readonly DecodedItem[];
}

/** Options of the decoding streams. */
export interface DecodeOptions {
  /** Where quarantined records are reported (default: a pino logger named `log.decoded`, to stderr). */
  readonly logger?: Logger;
}

/** An event to append and the key that picks its partition (see `partitionFor`). */
export interface EventToAppend {
  readonly partitionKey: string;
  readonly event: EventEnvelope;
}

let defaultLogger: Logger | undefined;
const fallbackLogger = (): Logger => (defaultLogger ??= pino({ name: 'log.decoded' }, pino.destination(2)));

/** Decodes one record; a record that does not decode becomes `quarantined` and is logged. */
export const decodeRecord = (record: LogRecord, logger: Logger = fallbackLogger()): DecodedItem => {
  try {
    return { type: 'event', record, event: decodeEvent(record.value) };
  } catch (caught) {
    const error = caught instanceof Error ? caught : new Error(String(caught));
    logger.error(
      { topic: record.topic, partition: record.partition, offset: record.offset, key: record.key, err: error },
      'quarantined a log record that cannot be decoded',
    );
    return { type: 'quarantined', record, error };
  }
};

/** Decodes every record of a batch, keeping the batch together. */
export const decodeBatch = (batch: RecordBatch, logger?: Logger): DecodedBatch => ({
  topic: batch.topic,
  partition: batch.partition,
  items: batch.records.map((record) => decodeRecord(record, logger)),
});

/**
 * `log.subscribe(topic, from)` decoded batch by batch, for consumers that apply a whole
 * batch in one transaction (projections). Live, like `subscribe`; order per partition.
 */
export const decodedBatches = (
  log: EventLog,
  topic: Topic,
  from?: StartPositions,
  options: DecodeOptions = {},
): Observable<DecodedBatch> => log.subscribe(topic, from).pipe(map((batch) => decodeBatch(batch, options.logger)));

/** `decodedBatches` flattened to one item per record. */
export const decodedEvents = (
  log: EventLog,
  topic: Topic,
  from?: StartPositions,
  options: DecodeOptions = {},
): Observable<DecodedItem> => decodedBatches(log, topic, from, options).pipe(mergeMap((batch) => batch.items));

/**
 * Encodes and appends events as one batch; resolves with their positions in input order.
 * Each record is stamped with its event's `time`, so `offsetsForTime` agrees with event time.
 * Throws the schemas' `EncodeError` (nothing appended) if any event does not fit the schema.
 */
export const appendEvents = async (log: EventLog, topic: Topic, events: readonly EventToAppend[]): Promise<Position[]> => {
  const records = events.map(({ partitionKey, event }) => ({
    key: partitionKey,
    value: encodeEvent(event),
    timestamp: event.time,
  }));
  return log.append(topic, records);
};
