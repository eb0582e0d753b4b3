/**
 * The short chaos scenario of the suite (fixed seed; `npm run chaos` runs long random
 * ones): a real 3-broker Kafka cluster and logplane in distributed mode as real processes
 * (2 apiservers, 3 controllers, 3 sim agents). In one moment it SIGKILLs the broker that
 * leads the desired topic's partition 0, an apiserver with writes in flight, a node agent
 * and a controllers process, and scales the Deployment up while the controllers fail over;
 * a light share of the clients' turns runs Deployment lifecycles (namespaced creates, scales,
 * rollouts, Deployment deletes and namespace deletions; `npm run chaos` runs a heavier share).
 * Then: every acknowledged write is in the log at its acknowledged position, once, in
 * real-time order; both apiservers list them; every projection (apiservers, controllers,
 * agents) hashes to a fresh replay of the log to its position; no pod is bound twice; no key
 * is acted on by two members of a controller group in one generation; every
 * Deployment converges with its pods Running on the live nodes and every deletion finishes;
 * every component stops cleanly.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { removeRun, runChaos, type ChaosReport } from './run.ts';

describe('chaos on 3 brokers: a broker, an apiserver mid-write, an agent and a controllers process SIGKILLed at once', () => {
  const root = mkdtempSync(join(process.env['LOGPLANE_CHAOS_DIR'] ?? tmpdir(), 'logplane-chaos-'));
  afterAll(() => removeRun(root));

  it('loses no acknowledged write, replays every projection to its hash and converges', async () => {
    const report: ChaosReport = await runChaos({
      root,
      seed: 22,
      rounds: 1,
      plan: () => ['broker-kill', 'apiserver-kill', 'agent-kill', 'controllers-kill'],
      ackedBeforeFaults: 60,
      ackedAfterFaults: 60,
      lifecycleEvery: 16,
    });
    const [round] = report.rounds;
    expect(round!.faults.map((f) => f.type)).toEqual(['broker-kill', 'apiserver-kill', 'agent-kill', 'controllers-kill']);
    // The broker and the apiserver were killed with writes in flight.
    expect(round!.faults.find((f) => f.type === 'broker-kill')!.inFlight).toBeGreaterThan(0);
    expect(round!.faults.find((f) => f.type === 'apiserver-kill')!.inFlight).toBeGreaterThan(0);
    expect(report.writes.acked).toBeGreaterThanOrEqual(120);
    expect(report.failedRounds).toEqual([]);
    expect(report.acked.lost).toEqual([]);
    expect(report.acked.duplicated).toEqual([]);
    expect(report.acked.orderViolations).toEqual([]);
    expect(report.apiserverMissing).toEqual([]);
    expect(report.counterMismatches).toEqual([]);
    // The lifecycles ran: Deployments created, changed and deleted, namespaces deleted.
    expect(report.ackedBySubject['deployment create']).toBeGreaterThan(0);
    expect(report.ackedBySubject['deployment update']).toBeGreaterThan(0);
    expect(report.settled.namespaceDeletions).toBeGreaterThan(0);
    expect(report.settled.unsettled).toEqual([]);
    // Bindings were made (and some contested by failing-over schedulers), none twice.
    expect(report.bindings.podBounds).toBeGreaterThan(0);
    expect(report.bindings.doubleBindings).toEqual([]);
    // Every controller command names its group member and generation; none shares a key with another member's in one generation.
    expect(report.generations.stamped).toBeGreaterThan(0);
    expect(report.generations.generations).toBeGreaterThan(1);
    expect(report.generations.violations).toEqual([]);
    // 2 apiservers + 3 controllers + 3 agents, each with its projection.
    expect(report.projections).toHaveLength(8);
    for (const projection of report.projections) {
      expect(projection.replayHash, `${projection.name} at ${projection.position}`).toBe(projection.stateHash);
      expect(projection.missing, projection.name).toEqual([]);
      expect(projection.overcommitted, projection.name).toEqual([]);
    }
    expect(Object.values(report.exitCodes).every((code) => code === 0), JSON.stringify(report.exitCodes)).toBe(true);
    expect(report.leaked).toEqual([]);
  }, 600_000);
});
