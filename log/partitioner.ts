/**
 * Key → partition, identical in every adapter, so a key lands on the same partition
 * whether the log is Kafka or embedded. Uses Kafka's own murmur2 (as the Java client's
 * default partitioner does) so records keyed here agree with Java producers too.
 */
import { assertNever } from '../schemas/assert-never.ts';
import { customResourceGroupKey, unregisteredDomainOf } from '../schemas/kinds/domains.ts';
import { kindRefOfKey } from '../schemas/kinds/refs.ts';
import { kindByRef } from '../schemas/kinds/registry.ts';

/**
 * Where `murmur2` writes a key's UTF-8 bytes when they surely fit (at most 3 bytes per
 * UTF-16 unit), instead of allocating a Buffer per key: keys are hashed once per append.
 */
const SCRATCH_UNITS = 512;
const scratch = Buffer.allocUnsafe(3 * SCRATCH_UNITS);

/** murmur2 of a UTF-8 string, as Kafka's `Utils.murmur2`. */
export const murmur2 = (key: string): number => {
  let data: Buffer;
  let length: number;
  if (key.length <= SCRATCH_UNITS) {
    data = scratch;
    length = scratch.write(key, 0, 'utf8');
  } else {
    data = Buffer.from(key, 'utf8');
    length = data.length;
  }
  const seed = 0x9747b28c;
  const m = 0x5bd1e995;
  const r = 24;
  let h = seed ^ length;
  const length4 = length >> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k = (data[i4]! & 0xff) + ((data[i4 + 1]! & 0xff) << 8) + ((data[i4 + 2]! & 0xff) << 16) + ((data[i4 + 3]! & 0xff) << 24);
    k = Math.imul(k, m);
    k ^= k >>> r;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const tail = length4 * 4;
  const remaining = length % 4;
  if (remaining >= 3) h ^= (data[tail + 2]! & 0xff) << 16;
  if (remaining >= 2) h ^= (data[tail + 1]! & 0xff) << 8;
  if (remaining >= 1) {
    h ^= data[tail]! & 0xff;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
};

/**
 * The partition for `key` among `partitions` (Kafka: `toPositive(murmur2(key)) % n`); with a
 * single partition (the embedded log's default) that is 0 without hashing.
 */
export const partitionFor = (key: string, partitions: number): number =>
  partitions === 1 ? 0 : (murmur2(key) & 0x7fffffff) % partitions;

/**
 * The partition key of an object key (`<kindRef>/namespace/name`): the shared key of its
 * kind's partition domain (Pods and Nodes share "scheduling", Services "services", custom
 * resources their group's; the table and why are in `schemas/kinds/domains.ts`), else the
 * object key itself.
 */
export const partitionKeyOf = (objectKey: string): string => {
  const ref = kindRefOfKey(objectKey);
  const domain = kindByRef(ref)?.partitionDomain ?? unregisteredDomainOf(ref);
  switch (domain.type) {
    case 'shared':
      return domain.key;
    case 'object':
      return objectKey;
    case 'customResourceGroup':
      return customResourceGroupKey(objectKey);
    default:
      return assertNever(domain, 'partition domain');
  }
};

/** The partition holding every event of the object `objectKey`. */
export const partitionOfKey = (objectKey: string, partitions: number): number =>
  partitionFor(partitionKeyOf(objectKey), partitions);
