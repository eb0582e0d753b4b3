/**
 * Scheduler profiles end to end with the real kubectl on `logplane up --runtime sim
 * --scheduler-config FILE`, on both logs (issue 23's "Profiles and configuration"): a
 * KubeSchedulerConfiguration with the default profile and a `bin-packing` profile whose
 * NodeResourcesFit scores MostAllocated. Pods of the default scheduler spread over the
 * nodes, pods naming `bin-packing` are packed onto one node, a pod naming a scheduler no
 * profile serves stays Pending and untouched (as kube leaves it to that scheduler), `debug
 * reconcile` re-runs a bin-packing binding with the cluster's configuration, and a
 * configuration with a bad field fails the start with an error naming it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { startCluster } from '../../cli/up.ts';
import { SchedulerConfigError } from '../../reconcilers/errors.ts';
import type { Pod } from '../../schemas/index.ts';
import type { ReconcileReply, WhyReply } from '../../cli/history/api.ts';
import { LOG_ADAPTERS, replayToLive } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';
import { logplane, okJson } from './process.ts';

const NODES = ['node-1', 'node-2', 'node-3'];
const SPREAD = ['spread-1', 'spread-2', 'spread-3'];
const PACKED = ['packed-1', 'packed-2', 'packed-3', 'packed-4'];

const CONFIG = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
  - schedulerName: bin-packing
    plugins:
      score:
        disabled:
          - name: NodeResourcesBalancedAllocation
          - name: ImageLocality
        enabled:
          - name: NodeResourcesFit
            weight: 5
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
            resources:
              - name: cpu
                weight: 1
              - name: memory
                weight: 1
`;

const configDir = mkdtempSync(join(tmpdir(), 'e2e-sched-config-'));
const configFile = join(configDir, 'scheduler.yaml');
writeFileSync(configFile, CONFIG);

const podManifest = (name: string, schedulerName?: string): string => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
${schedulerName === undefined ? '' : `  schedulerName: ${schedulerName}\n`}  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: logplane/sleeper
      resources:
        requests:
          cpu: 500m
          memory: 256Mi
`;

describe('logplane up --scheduler-config with a bad file', () => {
  it('fails at start with an error naming the field', async () => {
    const bad = join(configDir, 'bad.yaml');
    writeFileSync(bad, CONFIG.replace('type: MostAllocated', 'type: Fullest'));
    const started = startCluster({
      dataDir: mkdtempSync(join(tmpdir(), 'e2e-sched-bad-')),
      nodes: 1,
      runtime: 'sim',
      proxy: 'none',
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
      schedulerConfigFile: bad,
    });
    await expect(started).rejects.toBeInstanceOf(SchedulerConfigError);
    await expect(started).rejects.toThrow(`${bad}: profiles[1].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Fullest"`);
  });
});

describe.each(LOG_ADAPTERS)('scheduler profiles from --scheduler-config, on the %s log', (adapter) => {
  const k = useKubectlCluster(adapter, `e2e-profiles-${adapter}`, {
    nodes: NODES.length,
    nodeCapacity: { cpu: '4', memory: '8Gi', pods: '110' },
    schedulerConfigFile: configFile,
  });
  const podOf = (name: string): Pod | undefined => k.cluster.projection.view().get(`Pod/default/${name}`) as Pod | undefined;

  it('spreads the default scheduler\'s pods over every node (LeastAllocated)', async () => {
    await k.expectOk('apply', '-f', k.file('spread.yaml', SPREAD.map((name) => podManifest(name)).join('---\n')));
    await k.waitUntil('spread pods Running', () => SPREAD.every((name) => podOf(name)?.status?.phase === 'Running'));
    expect(new Set(SPREAD.map((name) => podOf(name)?.spec.nodeName)).size).toBe(NODES.length);
  }, 90_000);

  it('packs the bin-packing profile\'s pods onto one node (MostAllocated)', async () => {
    await k.expectOk('apply', '-f', k.file('packed.yaml', PACKED.map((name) => podManifest(name, 'bin-packing')).join('---\n')));
    await k.waitUntil('packed pods Running', () => PACKED.every((name) => podOf(name)?.status?.phase === 'Running'));
    const nodes = new Set(PACKED.map((name) => podOf(name)?.spec.nodeName));
    expect(nodes.size).toBe(1);
    const shown = await k.expectOk('get', 'pods', '-o', 'jsonpath={range .items[*]}{.spec.schedulerName}={.spec.nodeName}{"\\n"}{end}');
    const packedLines = shown.trim().split('\n').filter((line) => line.startsWith('bin-packing='));
    expect(packedLines).toHaveLength(PACKED.length);
    expect(new Set(packedLines).size).toBe(1);
  }, 90_000);

  it('leaves a pod naming a scheduler no profile serves Pending, without a PodScheduled condition', async () => {
    await k.expectOk('apply', '-f', k.file('orphan.yaml', podManifest('orphan', 'no-such-scheduler')));
    await k.waitUntil('orphan created', () => podOf('orphan') !== undefined);
    // A pod of the default scheduler created after it is scheduled: the scheduler has seen both.
    await k.expectOk('apply', '-f', k.file('later.yaml', podManifest('later')));
    await k.waitUntil('later Running', () => podOf('later')?.status?.phase === 'Running');
    const orphan = podOf('orphan') as Pod;
    expect(orphan.spec.nodeName ?? '').toBe('');
    expect(orphan.status?.conditions?.find((c) => c.type === 'PodScheduled')).toBeUndefined();
    const phase = await k.expectOk('get', 'pod', 'orphan', '-o', 'jsonpath={.status.phase}');
    expect(phase.trim()).toBe('Pending');
  }, 90_000);

  it('debug reconcile re-runs a bin-packing binding with the configuration the cluster runs and gets the same PodBound', async () => {
    const name = PACKED[PACKED.length - 1] as string;
    const { chains } = okJson<WhyReply>(await logplane(k.cluster.kubeconfig, ['why', `pod/${name}`, '-o', 'json']));
    const binding = chains.flat().find((link) => link.event.eventType === 'PodBound' && link.event.verdict.type === 'accepted');
    const at = binding?.event.decidedAt ?? '';
    expect(at).not.toBe('');
    const reply = okJson<ReconcileReply>(await logplane(k.cluster.kubeconfig, ['debug', 'reconcile', 'scheduler', `pod/${name}`, '--at', at, '-o', 'json']));
    expect(reply).toMatchObject({ controller: 'scheduler', identical: true });
    expect(reply.commands[0]).toMatchObject({ type: 'PodBound', name, node: podOf(name)?.spec.nodeName });
  }, 60_000);

  it('replays the log from offset 0 into the live state hash', async () => {
    const replay = await replayToLive(k.cluster);
    expect(replay.replayHash).toBe(replay.liveHash);
  }, 60_000);
});
