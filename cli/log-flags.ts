/** The log flags' values, apart from the wiring so that the CLI parses them without loading the logs. */

/** When an embedded-log append is acknowledged: after the disk flush, or after the commit. */
export type Durability = 'flushed' | 'committed';
export const DURABILITIES: readonly Durability[] = ['flushed', 'committed'];

/**
 * Partitions per topic of a new cluster on Kafka when `--partitions` is not given: enough
 * that a second and a third `controllers` process get partitions of their own (with one,
 * every controllers process but one is a hot standby). An existing cluster keeps its count.
 */
export const KAFKA_DEFAULT_PARTITIONS = 3;
