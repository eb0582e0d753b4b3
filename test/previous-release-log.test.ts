/**
 * A log written by the previous release (schema v4, before the generated schemas) replays
 * with today's code to the state hash that release computed, and every object in it
 * reads back (DESIGN: old logs stay readable). The fixture is real: a cluster's whole log
 * (`fixtures/write-previous-release-log.ts`), never regenerated.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../log/embedded/index.ts';
import { TOPICS, type Topic } from '../log/port.ts';
import { replayLog } from '../projections/replay.ts';
import { createEventCodec, loadSchemaRegistry } from '../schemas/index.ts';

interface Fixture {
  readonly writtenBy: string;
  /** The state hash that release's replay gave, over JSON in the member order its schema (v4) decoded objects in. */
  readonly stateHash: string;
  /**
   * The state hash of that release's replay with canonical hashing (object members in key
   * order), computed once with that release's code and the canonical hash applied: today's
   * code hashes canonically, since v5 decodes objects in another member order.
   */
  readonly canonicalStateHash: string;
  readonly events: number;
  readonly records: Record<Topic, { partition: number; key: string; timestamp: number; value: string }[]>;
}

const fixture = JSON.parse(gunzipSync(readFileSync(new URL('./fixtures/previous-release-log.json.gz', import.meta.url))).toString('utf8')) as Fixture;
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('a log written by the previous release', () => {
  it('was written with an older schema version than today’s writer', () => {
    const registry = loadSchemaRegistry();
    const codec = createEventCodec({ registry });
    const writers = new Set(fixture.records.desired.map((record) => registry.find(Buffer.from(record.value, 'base64'))?.name));
    expect([...writers]).toEqual(['v4']);
    expect(registry.current.name).not.toBe('v4');
    // and every event decodes with today's reader, to an object key it can parse
    let decoded = 0;
    for (const topic of TOPICS) {
      for (const record of fixture.records[topic]) {
        const event = codec.decode(Buffer.from(record.value, 'base64'));
        expect(event.key).toMatch(/^[A-Za-z.]+\/[^/]*\/[^/]+$/);
        decoded += 1;
      }
    }
    expect(decoded).toBeGreaterThan(fixture.events);
  });

  it('replays to the state hash the previous release computed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'previous-release-'));
    dirs.push(dir);
    const log = await createEmbeddedLog({ dir: join(dir, 'log'), cluster: 'replay' });
    try {
      for (const topic of TOPICS) {
        const records = fixture.records[topic];
        if (records.length > 0) {
          await log.append(topic, records.map((record) => ({ key: record.key, value: Buffer.from(record.value, 'base64'), timestamp: record.timestamp })));
        }
      }
      const replay = await replayLog({ log, dir: join(dir, 'projection') });
      expect(replay.events).toBe(fixture.events);
      expect(replay.stateHash).toBe(fixture.canonicalStateHash);
      expect(replay.stateHash).not.toBe(fixture.stateHash);
    } finally {
      await log.close();
    }
  });
});
