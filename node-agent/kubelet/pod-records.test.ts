import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPodRecords, podRecordsFile, readPodRecords } from './pod-records.ts';
import { tempDir, testLogger } from './testing.ts';

const open = (dataDir: string) => openPodRecords(dataDir, join(dataDir, 'pods'), testLogger);
const lines = (dataDir: string) => readFileSync(podRecordsFile(dataDir), 'utf8').split('\n').filter((line) => line !== '');

describe('pod records', () => {
  it('keeps the last record of each pod, forgets removed ones, and restores them when opened again', async () => {
    const dataDir = tempDir();
    const store = open(dataDir);
    expect(store.restored.size).toBe(0);
    await store.write('a', JSON.stringify({ n: 1 }));
    await store.write('b', JSON.stringify({ n: 1 }));
    await store.write('a', JSON.stringify({ n: 2 }));
    await store.remove('b');
    await store.close();
    expect(readPodRecords(dataDir)).toEqual(new Map([['a', { n: 2 }]]));

    const reopened = open(dataDir);
    expect(reopened.restored).toEqual(new Map([['a', { n: 2 }]]));
    // Opening rewrote the file with the live records only.
    expect(lines(dataDir)).toEqual(['{"uid":"a","record":{"n":2}}']);
    await reopened.close();
  });

  it('writes the lines appended while a write is under way together, in the order they were appended', async () => {
    const dataDir = tempDir();
    const store = open(dataDir);
    const written = Array.from({ length: 50 }, (_, i) => store.write(`pod-${i % 5}`, JSON.stringify({ i })));
    written.push(store.remove('pod-0'));
    await Promise.all(written);
    expect(lines(dataDir)).toHaveLength(51);
    expect(readPodRecords(dataDir)).toEqual(new Map([1, 2, 3, 4].map((p) => [`pod-${p}`, { i: 45 + p }])));
    await store.close();
  });

  it('skips a line cut short by a crash (the earlier record of that pod stands)', async () => {
    const dataDir = tempDir();
    const store = open(dataDir);
    await store.write('a', JSON.stringify({ n: 1 }));
    await store.close();
    appendFileSync(podRecordsFile(dataDir), '{"uid":"a","record":{"n":');
    expect(open(dataDir).restored).toEqual(new Map([['a', { n: 1 }]]));
  });

  it('moves the record files of an older agent (pods/<uid>/record.json) in, and deletes them', async () => {
    const dataDir = tempDir();
    const uid = 'old/uid';
    const dir = join(dataDir, 'pods', encodeURIComponent(uid));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'record.json'), JSON.stringify({ version: 1, n: 7 }));
    mkdirSync(join(dataDir, 'pods', 'broken'));
    writeFileSync(join(dataDir, 'pods', 'broken', 'record.json'), '{"version":');
    const store = open(dataDir);
    expect(store.restored).toEqual(new Map([[uid, { version: 1, n: 7 }]]));
    expect(readPodRecords(dataDir)).toEqual(store.restored);
    expect(existsSync(join(dir, 'record.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'pods', 'broken', 'record.json'))).toBe(false);
    await store.close();
  });

  it('rewrites the file with the live records once it has grown past four times their size (and 1 MiB)', async () => {
    const dataDir = tempDir();
    const store = open(dataDir);
    const record = JSON.stringify({ padding: 'x'.repeat(10_000) });
    let largest = 0;
    for (let i = 0; i < 200; i++) {
      await store.write(`pod-${i % 2}`, record);
      largest = Math.max(largest, statSync(podRecordsFile(dataDir)).size);
    }
    expect(largest).toBeGreaterThan(1024 * 1024);
    expect(statSync(podRecordsFile(dataDir)).size).toBeLessThan(1024 * 1024 + 20_100);
    expect(readPodRecords(dataDir)).toEqual(new Map(['pod-0', 'pod-1'].map((uid) => [uid, JSON.parse(record)])));
    // Still appending to the rewritten file.
    await store.remove('pod-0');
    await store.close();
    expect([...readPodRecords(dataDir).keys()]).toEqual(['pod-1']);
  });

  it('opens the file again for lines appended after close', async () => {
    const dataDir = tempDir();
    const store = open(dataDir);
    await store.write('a', '{}');
    await store.close();
    await store.write('b', '{}');
    await store.close();
    expect([...readPodRecords(dataDir).keys()]).toEqual(['a', 'b']);
  });
});
