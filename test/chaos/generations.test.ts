/**
 * The chaos checker's same-generation check on a real Kafka log: commands appended with the
 * reconciler runtime's actor headers are read back through the checker's own consumer; two
 * members acting on one key in one generation is a violation, one member per key per
 * generation (or the same key in a later generation) is not, and records without headers
 * (user writes) are not judged.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createKafkaLog } from '../../log/kafka/index.ts';
import type { EventLog } from '../../log/port.ts';
import { commandHeaders, type GroupActor } from '../../reconcilers/actor-headers.ts';
import { appendEnvelopes, envelope } from '../../projections/writer.ts';
import { namespace } from '../../schemas/fixtures/samples.ts';
import { kafkaBrokers } from '../kafka-env.ts';
import { readLogIndex } from './checker.ts';
import { judgeGenerations } from './generations.ts';

const logs: EventLog[] = [];
afterAll(async () => {
  await Promise.all(logs.map((log) => log.close()));
});

const openLog = async (): Promise<EventLog> => {
  const log = await createKafkaLog({ brokers: kafkaBrokers(), cluster: `gen-${randomUUID().slice(0, 8)}`, partitions: 2, logLevel: 'error' });
  logs.push(log);
  return log;
};

const command = (name: string) =>
  envelope({ type: 'ObjectCreated', object: { ...namespace, metadata: { ...namespace.metadata, name, uid: randomUUID() } } }, { actor: { type: 'controller', name: 'namespace-controller' } });

/** Appends one command per `[actor, decided key]`, stamped as the runtime stamps them. */
const actOn = async (log: EventLog, acts: readonly [GroupActor | undefined, string][]): Promise<void> => {
  const commands = acts.map(([, key], i) => ({ event: command(`ns-${i}-${key.toLowerCase().replace(/[^a-z0-9]/g, '')}`), key }));
  const actors = new Map(commands.map(({ event }, i) => [event.id, acts[i]!] as const));
  await appendEnvelopes(log, commands.map((c) => c.event), (event) => {
    const [actor, key] = actors.get(event.id)!;
    return actor ? commandHeaders(actor, key) : undefined;
  });
};

const a = (generation: number): GroupActor => ({ group: 'c.deployment-controller', member: 'member-a', generation });
const b = (generation: number): GroupActor => ({ group: 'c.deployment-controller', member: 'member-b', generation });

describe('the chaos same-generation check', () => {
  it('finds no violation when each key has one member per generation, and counts what it judged', async () => {
    const log = await openLog();
    await actOn(log, [
      [a(3), 'Deployment/shop/web'],
      [b(3), 'Deployment/shop/api'],
      [a(3), 'Deployment/shop/web'],
      // The key moved to b at the next rebalance.
      [b(4), 'Deployment/shop/web'],
      // A user's write carries no headers.
      [undefined, 'Namespace//shop'],
    ]);
    const verdict = judgeGenerations((await readLogIndex(log)).generations);
    expect(verdict).toEqual({ stamped: 4, generations: 2, violations: [] });
  });

  it('names the key, the generation and both members when two members acted on one key in one generation', async () => {
    const log = await openLog();
    await actOn(log, [
      [a(5), 'Deployment/shop/web'],
      [b(5), 'Deployment/shop/web'],
      [{ ...b(5), group: 'c.replicaset-controller' }, 'Deployment/shop/web'],
    ]);
    const verdict = judgeGenerations((await readLogIndex(log)).generations);
    expect(verdict.violations).toEqual(['c.deployment-controller: key Deployment/shop/web acted on by 2 members in generation 5 (member-a, member-b)']);
  });
});
