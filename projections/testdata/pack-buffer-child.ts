/**
 * Child of pack-buffer.test.ts (a process of its own, so msgpackr's module state is fresh).
 * Records every `Buffer.allocUnsafeSlow` (how msgpackr allocates its write buffer), imports
 * the projection store when argv[2] is "store", then puts a 2.5 MiB value into a msgpack
 * database of a new LMDB environment in argv[3], and prints the allocations made by that put
 * as JSON.
 */
import { open } from 'lmdb';

const allocations: number[] = [];
const allocUnsafeSlow = Buffer.allocUnsafeSlow;
Buffer.allocUnsafeSlow = (size: number) => {
  allocations.push(size);
  return allocUnsafeSlow(size);
};
if (process.argv[2] === 'store') await import('../store.ts');
const root = open({ path: process.argv[3]!, maxDbs: 2 });
const db = root.openDB<unknown, number>({ name: 'values', encoding: 'msgpack', sharedStructuresKey: Symbol.for('structures') });
root.transactionSync(() => db.putSync(1, { note: 'small' }));
const before = allocations.length;
root.transactionSync(() => db.putSync(2, { note: 'x'.repeat(2.5 * 1024 * 1024) }));
const byThePut = allocations.slice(before);
await root.close();
process.stdout.write(JSON.stringify({ byThePut }));
