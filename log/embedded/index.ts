/** The embedded (LMDB, single-process) adapter of the `EventLog` port. */
export { createEmbeddedLog, type EmbeddedEventLog, type EmbeddedLogOptions } from './embedded-log.ts';
