/**
 * The history API's moment parameters over a real projection of an embedded log: every
 * accepted form resolves to the position it names (an event address and the position
 * `history` prints for it to the same one, which holds the object the event created), and
 * every malformed or future value is a 400 naming the parameter.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../../log/embedded/index.ts';
import type { EventLog } from '../../log/port.ts';
import { appendAndWait, createProjection, formatVector, objectHistory, type Projection } from '../../projections/index.ts';
import type { Actor, Deployment } from '../../schemas/index.ts';
import { HistoryRequestError, resolveBound, resolveMoment, type MomentContext } from './moments.ts';

const admin: Actor = { type: 'user', name: 'admin' };
const NOW = Date.parse('2024-05-01T12:00:00Z');
const T0 = NOW - 600_000;

const deployment = (replicas: number): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'echo', namespace: 'default' },
  spec: { replicas, selector: { matchLabels: { app: 'echo' } }, template: { metadata: { labels: { app: 'echo' } }, spec: { containers: [{ name: 'echo', image: 'logplane/echo:1' }] } } },
});

describe('moment parameters of the history API', () => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-moments-'));
  let log: EventLog;
  let projection: Projection;
  let context: MomentContext;

  beforeAll(async () => {
    log = await createEmbeddedLog({ dir: join(dir, 'log'), cluster: 'moments' });
    projection = createProjection({ dir: join(dir, 'projection'), log });
    // desired/0/0 the namespace (T0), desired/0/1 the Deployment (T0 + 1 min), desired/0/2 its scale (T0 + 2 min).
    await appendAndWait(log, projection, [{ type: 'ObjectCreated', object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } } }], { actor: admin, time: T0 });
    await appendAndWait(log, projection, [{ type: 'ObjectCreated', object: deployment(1) }], { actor: admin, time: T0 + 60_000 });
    await appendAndWait(log, projection, [{ type: 'ObjectUpdated', object: deployment(3), expectedResourceVersion: null, subresource: null }], { actor: admin, time: T0 + 120_000 });
    context = { projection, log, now: NOW, waitMs: 1_000 };
  });

  afterAll(async () => {
    await projection.close();
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const replicasAt = async (input: string): Promise<number | undefined> => {
    const position = await resolveMoment('at', input, context);
    return (projection.viewAt(position).get('Deployment/default/echo') as Deployment | undefined)?.spec.replicas;
  };

  it('resolves the position history prints for the creation to a view holding the Deployment', async () => {
    const [created, scaled] = objectHistory(projection.store, 1, 'Deployment/default/echo');
    expect([created?.position, scaled?.position]).toEqual(['2.0', '3.0']);
    expect(await replicasAt(created!.position)).toBe(1);
    expect(await replicasAt(scaled!.position)).toBe(3);
  });

  it.each<[string, number | undefined]>([
    ['1.0', undefined],
    ['2.0', 1],
    ['3.0', 3],
    [' 2.0 ', 1],
    ['desired/0/0', undefined],
    ['desired/0/1', 1],
    ['desired/0/2', 3],
    [new Date(T0 + 60_000).toISOString(), 1],
    [new Date(T0 + 60_000 - 1).toISOString(), undefined],
    ['2024-05-01T11:52:00+00:00', 3],
    ['2024-05-01 11:51:30Z', 1],
    [String(T0 + 60_000), 1],
    ['9m ago', 1],
    ['-9m', 1],
    ['-8m', 3],
    ['11m ago', undefined],
    ['now', 3],
  ])('%j', async (input, replicas) => {
    expect(await replicasAt(input)).toBe(replicas);
  });

  it('resolves an event address to the position just after the event', async () => {
    expect(formatVector(await resolveMoment('at', 'desired/0/1', context))).toBe('2.0');
  });

  it('keeps a time a time for filters, and resolves positions for them', async () => {
    expect(await resolveBound('since', '5m ago', context)).toEqual({ type: 'time', ms: NOW - 300_000 });
    expect(await resolveBound('since', 'desired/0/1', context)).toEqual({ type: 'position', position: { desired: [2], observed: [0] } });
  });

  it.each<[string, string, RegExp]>([
    ['at', 'yesterday', /^at: Invalid value: "yesterday": "yesterday" is not a moment: expected a position \(a resourceVersion such as 42\.17/],
    ['from', '42.', /^from: Invalid value: "42\.": .*not a moment/],
    ['at', '1.2.3', /^at: Invalid value: "1\.2\.3": .*a position of this cluster has 2 dot-separated offsets \(desired, then observed, one partition each\), not 3$/],
    ['at', 'desired/1/0', /^at: Invalid value: "desired\/1\/0": this cluster's topics have one partition \(0\)$/],
    ['at', 'heartbeats/0/1', /^at: Invalid value: "heartbeats\/0\/1": .*not a moment/],
    ['to', '2024-13-01T00:00:00Z', /^to: Invalid value: .*not a valid RFC 3339 time$/],
    ['at', '4.0', /^at: Invalid value: "4\.0": position 4\.0 is in the future: the log ends at 3\.0$/],
    ['at', '3.1', /^at: Invalid value: "3\.1": position 3\.1 is in the future: the log ends at 3\.0$/],
    ['at', 'desired/0/3', /^at: Invalid value: "desired\/0\/3": event desired\/0\/3 is in the future: the log ends at 3\.0$/],
    ['at', '2024-05-01T12:00:01Z', /^at: Invalid value: "2024-05-01T12:00:01Z": 2024-05-01T12:00:01\.000Z is in the future \(the server's time is 2024-05-01T12:00:00\.000Z\)$/],
    ['until', String(NOW + 1), /^until: Invalid value: .* is in the future/],
  ])('%s=%j is a 400 naming the parameter', async (parameter, input, message) => {
    const error = await resolveBound(parameter, input, context).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HistoryRequestError);
    expect((error as HistoryRequestError).code).toBe(400);
    expect((error as HistoryRequestError).message).toMatch(message);
  });

  it('waits for a position the log has but the projection has not folded, and answers 504 when that takes too long', async () => {
    const behind = createProjection({ dir: join(dir, 'behind') });
    try {
      const error = await resolveMoment('at', '2.0', { ...context, projection: behind, waitMs: 50 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HistoryRequestError);
      expect(error).toMatchObject({ code: 504, message: 'at: position 2.0 is not folded yet (current position: 0.0)' });
    } finally {
      await behind.close();
    }
  });
});
