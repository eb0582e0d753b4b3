/**
 * The kubelet Event reporter on an embedded log and a projection following it: Events are
 * written as core/v1 Events from kubelet on the node about the pod's container; a repeat in a
 * later batch counts on the Event it repeats; a full queue drops instead of waiting.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../log/embedded/embedded-log.ts';
import type { EventLog } from '../log/port.ts';
import { appendAndWait, createProjection, type Projection } from '../projections/index.ts';
import type { Event, Pod } from '../schemas/index.ts';
import { createEventReporter } from './event-reporter.ts';
import type { KubeletEvent } from './kubelet/events.ts';

const logger = pino({ level: 'silent' });
const pod: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'crashy', namespace: 'default', uid: 'uid-1' },
  spec: { containers: [{ name: 'crash', image: 'logplane/crasher' }], nodeName: 'node-1' },
};
const backOff: KubeletEvent = {
  uid: 'uid-1',
  namespace: 'default',
  name: 'crashy',
  container: 'crash',
  type: 'Warning',
  reason: 'BackOff',
  message: 'Back-off restarting failed container crash in pod crashy_default(uid-1)',
};

describe('createEventReporter', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const open = async (): Promise<{ log: EventLog; projection: Projection }> => {
    const dir = mkdtempSync(join(tmpdir(), 'logplane-event-reporter-'));
    const log = await createEmbeddedLog({ dir: join(dir, 'log'), cluster: 'reporter' });
    const projection = createProjection({ dir: join(dir, 'projection'), log, logger });
    cleanups.push(async () => {
      await projection.close();
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    });
    await appendAndWait(log, projection, [{ type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } } }], {
      actor: { type: 'user', name: 'admin' },
    });
    return { log, projection };
  };
  const events = (projection: Projection): Event[] => projection.view().list('Event', 'default') as Event[];

  it('writes kubelet Events about the container and counts a repeat from a later batch', async () => {
    const { log, projection } = await open();
    let now = Date.parse('2026-12-06T20:00:00Z');
    const reporter = createEventReporter({ log, projection, logger, batchMs: 1, now: () => now });
    reporter.record('node-1', pod, backOff);
    await reporter.close();
    const [first] = events(projection);
    expect(first).toMatchObject({
      type: 'Warning',
      reason: 'BackOff',
      message: backOff.message,
      count: 1,
      source: { component: 'kubelet', host: 'node-1' },
      reportingComponent: 'kubelet',
      reportingInstance: 'node-1',
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'crashy', namespace: 'default', uid: 'uid-1', fieldPath: 'spec.containers{crash}' },
    });
    expect(first!.metadata.name).toMatch(/^crashy\.[0-9a-f]+$/);

    now += 20_000;
    const again = createEventReporter({ log, projection, logger, batchMs: 1, now: () => now });
    again.record('node-1', pod, backOff);
    again.record('node-1', pod, backOff);
    await again.close();
    expect(events(projection)).toHaveLength(1);
    expect(events(projection)[0]).toMatchObject({ count: 3, firstTimestamp: '2026-12-06T20:00:00Z', lastTimestamp: '2026-12-06T20:00:20Z' });
  });

  it('drops what exceeds its queue instead of waiting', async () => {
    const { log, projection } = await open();
    const reporter = createEventReporter({ log, projection, logger, maxQueued: 2, batchMs: 60_000 });
    for (let i = 0; i < 5; i++) reporter.record('node-1', pod, { ...backOff, message: `m${i}` });
    expect(reporter.dropped()).toBe(3);
    await reporter.close();
    expect(events(projection).map((e) => e.message).sort()).toEqual(['m0', 'm1']);
  });
});
