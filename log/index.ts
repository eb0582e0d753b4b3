/** The log package: the `EventLog` port, its helpers and adapters. */
export * from './port.ts';
export * from './partitioner.ts';
export * from './errors.ts';
export * from './decoded.ts';
export * from './embedded/index.ts';
