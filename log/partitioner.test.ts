import { describe, expect, it } from 'vitest';
import { murmur2, partitionFor, partitionKeyOf, partitionOfKey } from './partitioner.ts';

describe('partitioner', () => {
  // Vectors from Kafka's UtilsTest.testMurmur2.
  it.each([
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
  ])('murmur2(%s) = %i as in Kafka', (key, expected) => {
    expect(murmur2(key)).toBe(expected);
  });

  it('hashes the UTF-8 bytes of any key, short or long, ASCII or not', () => {
    // Kafka's murmur2 over Buffer.from(key), written out once more as the reference.
    const reference = (key: string): number => {
      const data = Buffer.from(key, 'utf8');
      let h = 0x9747b28c ^ data.length;
      const whole = data.length - (data.length % 4);
      for (let i = 0; i < whole; i += 4) {
        let k = Math.imul(data.readInt32LE(i), 0x5bd1e995);
        k = Math.imul(k ^ (k >>> 24), 0x5bd1e995);
        h = Math.imul(h, 0x5bd1e995) ^ k;
      }
      const rest = data.length % 4;
      if (rest >= 3) h ^= data[whole + 2]! << 16;
      if (rest >= 2) h ^= data[whole + 1]! << 8;
      if (rest >= 1) h = Math.imul(h ^ data[whole]!, 0x5bd1e995);
      h = Math.imul(h ^ (h >>> 13), 0x5bd1e995);
      return (h ^ (h >>> 15)) | 0;
    };
    const keys = ['', 'Pod/default/web-1', 'ConfigMap/é/ü', 'Pod/ns/名前', 'x\u{1F600}y', 'lone \ud800 surrogate', 'a'.repeat(512), 'é'.repeat(512), '名'.repeat(512), 'a'.repeat(513), '名'.repeat(2000)];
    for (const key of keys) expect(murmur2(key), key.slice(0, 20)).toBe(reference(key));
    // A long key between short ones leaves nothing behind for the next short key.
    expect(murmur2('abc')).toBe(479470107);
  });

  it('puts every key on partition 0 of a single partition', () => {
    expect(partitionFor('Pod/default/p1', 1)).toBe(0);
    expect(partitionFor('Node//n1', 1)).toBe(0);
  });

  it('spreads keys over all partitions and is stable', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 100; i++) seen.add(partitionFor(`Pod/default/p${i}`, 3));
    expect([...seen].sort()).toEqual([0, 1, 2]);
    expect(partitionFor('Node//n1', 3)).toBe(partitionFor('Node//n1', 3));
  });
});

describe('partition keys', () => {
  // The partition keys that keys of every kind served before the kind registry mapped to
  // (the rule was: Pod/ and Node/ -> "scheduling", Service/ -> "services", else the key):
  // an old log must replay onto the same partitions.
  it.each([
    ['Pod/default/web-1', 'scheduling'],
    ['Node//node-1', 'scheduling'],
    ['Service/default/echo', 'services'],
    ['Namespace//default', 'Namespace//default'],
    ['Endpoints/default/echo', 'Endpoints/default/echo'],
    ['ReplicaSet/default/echo-5d8f', 'ReplicaSet/default/echo-5d8f'],
    ['Deployment/default/echo', 'Deployment/default/echo'],
  ])('%s keeps the partition key %s', (key, expected) => {
    expect(partitionKeyOf(key)).toBe(expected);
    expect(partitionOfKey(key, 3)).toBe(partitionFor(expected, 3));
  });

  it.each([
    // judged with pods: quota charges and evictions
    ['ResourceQuota/default/compute', 'scheduling'],
    ['PodDisruptionBudget.policy/default/web', 'scheduling'],
    // a volume bound to at most one claim
    ['PersistentVolume//pv-1', 'storage'],
    ['PersistentVolumeClaim/default/data', 'storage'],
    // everything else built in spreads by its own key, grouped or not
    ['ConfigMap/default/settings', 'ConfigMap/default/settings'],
    ['Event.events.k8s.io/default/e1', 'Event.events.k8s.io/default/e1'],
    ['Job.batch/default/pi', 'Job.batch/default/pi'],
    // custom resources: a CRD, its kinds' objects (namespaced or not) share their group's key
    ['CustomResourceDefinition.apiextensions.k8s.io//crontabs.stable.example.com', 'customresources/stable.example.com'],
    ['CronTab.stable.example.com/default/ct', 'customresources/stable.example.com'],
    ['Backup.stable.example.com//nightly', 'customresources/stable.example.com'],
    ['CronTab.other.example.com/default/ct', 'customresources/other.example.com'],
    // a kind named like a shared one in another group is not in that domain
    ['Pod.example.com/default/p', 'customresources/example.com'],
  ])('%s has the partition key %s', (key, expected) => {
    expect(partitionKeyOf(key)).toBe(expected);
  });
});
