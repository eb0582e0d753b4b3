/**
 * schedule (+ memory): 1,000 sim nodes in one process with the whole control plane, a
 * Deployment of 10,000 replicas applied over HTTP, until every pod is Running.
 *
 * - pods/s end to end: replicas / (apply → last pod Running).
 * - scheduler decisions/s: bindings / (first binding → last binding), from the change feed
 *   (a pod gains spec.nodeName exactly once, when its PodBound is accepted by the fold).
 * - memory (a second result): RSS of this process at the end, which holds the control plane
 *   (log, projection, apiserver, controllers) *and* the sim agent of 1,000 nodes, split into
 *   anonymous and file-backed (LMDB maps) pages; plus the V8 heap.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { writeHeapSnapshot } from 'node:v8';
import { controllerRounds, deploymentManifest, startBenchCluster, trackPods, SIM_NODE_CAPACITY } from '../cluster.ts';
import { appendsSince, endOffsetsOf, type AppendCounts } from '../event-costs.ts';
import {
  atLeast,
  atMost,
  expectStatus,
  plain,
  round,
  collectGarbage,
  memoryBreakdown,
  heapSpaces,
  residentFiles,
  type ScenarioContext,
  type ScenarioResult,
  until,
  withTempDir,
} from '../support.ts';

const SCHEDULER_PERF = 'kube-scheduler scheduler_perf: 270 pods/s threshold (5000 nodes), ~800–900 measured (500 nodes)';
const NOMAD_C1M = 'Nomad C1M: 3,750 containers/s (5 servers, 5,000 hosts)';

/**
 * Starts V8's sampling heap profiler in this process, keeping the samples of objects that
 * survived a young-generation GC (collected later by a full GC, or still live); `stop`
 * writes the profile (read it with `npx tsx bench/profile-top.ts <file>`).
 */
const startAllocationSampling = async (): Promise<{ stop(file: string): Promise<string> }> => {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 32_768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false });
  return {
    stop: async (file) => {
      const { profile } = await session.post('HeapProfiler.stopSampling');
      session.disconnect();
      writeFileSync(file, JSON.stringify(profile));
      return file;
    },
  };
};

/**
 * Starts V8's CPU profiler in this process; `stop` writes the profile of what ran since (read
 * it with `npx tsx bench/profile-top.ts <file>`). Unlike `node --cpu-prof`, the profile holds
 * the measured span only, without start-up and teardown.
 */
const startCpuProfile = async (): Promise<{ stop(file: string): Promise<string> }> => {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    stop: async (file) => {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      writeFileSync(file, JSON.stringify(profile));
      return file;
    },
  };
};

export const scheduleScenario = async (context: ScenarioContext, options: { eventsCost?: boolean } = {}): Promise<ScenarioResult[]> => {
  const nodes = context.quick ? 100 : 1_000;
  const replicas = context.quick ? 1_000 : 10_000;
  const simStartDelayMs = 5;
  return withTempDir('schedule', async (dir) => {
    const startedAt = performance.now();
    const bench = await startBenchCluster({
      dir,
      log: context.log,
      brokers: context.brokers,
      nodes,
      runtime: 'sim',
      simStartDelayMs,
      nodeCapacity: SIM_NODE_CAPACITY,
    });
    const startupSeconds = (performance.now() - startedAt) / 1000;
    context.progress(`schedule/${context.log}: ${nodes} nodes up in ${startupSeconds.toFixed(1)} s`);
    const tracker = trackPods(bench.cluster.projection, 'Pod/default/');
    try {
      const roundsBefore = await controllerRounds(bench.cluster);
      const offsetsAtApply = await endOffsetsOf(bench.cluster.log);
      const applied = performance.now();
      const cpuAtApply = process.cpuUsage();
      // For the memory finding: BENCH_ALLOC_PROFILE=<file> samples, from apply to all Running, what
      // was allocated and lived through a young-generation GC (what fills the old generation).
      const allocations = process.env.BENCH_ALLOC_PROFILE ? await startAllocationSampling() : undefined;
      // For the CPU findings: BENCH_CPU_PROFILE=<file> profiles the same span.
      const cpuProfile = process.env.BENCH_CPU_PROFILE ? await startCpuProfile() : undefined;
      const response = await bench.client.request(
        'POST',
        '/apis/apps/v1/namespaces/default/deployments',
        deploymentManifest('bench', replicas),
      );
      expectStatus(response, 201, 'creating the Deployment');
      let reported = 0;
      await until(
        () => {
          if (tracker.running.size >= reported + replicas / 10) {
            reported = tracker.running.size;
            context.progress(`schedule/${context.log}: ${reported}/${replicas} Running after ${((performance.now() - applied) / 1000).toFixed(1)} s`);
          }
          return tracker.running.size >= replicas;
        },
        context.quick ? 120_000 : 600_000,
        `${replicas} pods Running`,
        50,
      );
      if (allocations) context.progress(`allocation profile: ${await allocations.stop(process.env.BENCH_ALLOC_PROFILE as string)}`);
      if (cpuProfile) context.progress(`CPU profile: ${await cpuProfile.stop(process.env.BENCH_CPU_PROFILE as string)}`);
      const allRunning = Math.max(...tracker.runningAt.values());
      const bindTimes = [...tracker.boundAt.values()];
      const firstBound = Math.min(...bindTimes);
      const lastBound = Math.max(...bindTimes);
      const endToEndSeconds = (allRunning - applied) / 1000;
      const podsPerSecond = round(replicas / endToEndSeconds);
      const decisionsPerSecond = round(bindTimes.length / Math.max((lastBound - firstBound) / 1000, 1e-3));
      const firstBoundSeconds = (firstBound - applied) / 1000;

      const roundsAfter = await controllerRounds(bench.cluster);
      const perController = [...roundsAfter.entries()]
        .map(([name, after]) => {
          const before = roundsBefore.get(name) ?? { rounds: 0, seconds: 0 };
          return { name, rounds: after.rounds - before.rounds, seconds: after.seconds - before.seconds };
        })
        .filter((c) => c.rounds > 0)
        .sort((a, b) => b.seconds - a.seconds)
        .map((c) => `${c.name} ${c.rounds} rounds, ${c.seconds.toFixed(1)} s`);
      const cpuSeconds = round((process.cpuUsage(cpuAtApply).user + process.cpuUsage(cpuAtApply).system) / 1e6, 1);
      const appends = await appendsSince(bench.cluster.log, offsetsAtApply);

      // Memory once the cluster is at rest with every pod Running, without the bench's own
      // bookkeeping (the tracker's maps of 10,000 pods), which is not part of the control plane.
      tracker.close();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const memory = memoryBreakdown();
      const spaces = heapSpaces();
      collectGarbage();
      const collected = memoryBreakdown();
      // For the memory finding: BENCH_HEAP_SNAPSHOT=<dir> writes a V8 heap snapshot at this moment.
      if (process.env.BENCH_HEAP_SNAPSHOT) context.progress(`heap snapshot: ${writeHeapSnapshot(process.env.BENCH_HEAP_SNAPSHOT)}`);
      // BENCH_SMAPS=1 prints the resident size of the largest file mappings (which LMDB files).
      if (process.env.BENCH_SMAPS) for (const [file, mib] of residentFiles().slice(0, 8)) context.progress(`resident ${mib} MiB: ${file}`);

      const schedule: ScenarioResult = {
        scenario: 'schedule',
        log: context.log,
        figures: [
          atLeast('pods/s end to end (apply → all Running)', podsPerSecond, 'pods/s', 2_000, `${SCHEDULER_PERF}; ${NOMAD_C1M}`),
          plain('scheduler decisions/s (first → last binding)', decisionsPerSecond, 'pods/s', SCHEDULER_PERF),
          plain('time to all Running', round(endToEndSeconds, 2), 's'),
          plain('apply → first binding', round(firstBoundSeconds, 2), 's'),
          plain('CPU time of the process, apply → all Running', cpuSeconds, 's'),
        ],
        setup: { nodes, replicas, simStartDelayMs, nodeCapacity: 'cpu 32, memory 64Gi, pods 110', startupSeconds: round(startupSeconds, 1) },
        notes: [
          'One process runs the log client, projection, apiserver, every controller and the sim agent of all nodes (startCluster, runtime sim, no TLS, no proxy).',
          'Target: ≥ 2,000 pods/s on Kafka, higher on the embedded log.',
          `Reconcile rounds during the run (decide + append + wait for the projection, wall time): ${perController.join('; ')}.`,
        ],
      };
      const memoryResult: ScenarioResult = {
        scenario: 'memory',
        log: context.log,
        figures: [
          // The target is 400 MB (10^6 bytes: 381 MiB); the breakdown below is in MiB.
          atMost(`RSS at ${replicas} pods on ${nodes} nodes`, memory.rssMB, 'MB', 400),
          plain('RSS in MiB', memory.rss, 'MiB'),
          plain('of which anonymous (heap, native allocations)', memory.anon, 'MiB'),
          plain('of which file-backed (LMDB maps of log and projection, code)', memory.file, 'MiB'),
          plain('V8 heap used', memory.heapUsed, 'MiB'),
          plain('V8 heap committed', memory.heapTotal, 'MiB'),
          plain('outside the V8 heap: buffers and external memory', memory.external, 'MiB'),
          plain('RSS right after a full GC', collected.rss, 'MiB'),
          plain('V8 heap used after a full GC (live objects)', collected.heapUsed, 'MiB'),
        ],
        setup: { nodes, replicas },
        notes: [
          'Measured after the schedule scenario, in the same process: control plane (log, projection, apiserver, controllers) plus the sim agent of all nodes, which is not separated out.',
          'File-backed pages are LMDB memory maps the kernel can drop under pressure; anonymous memory is what the process really holds.',
          `V8 heap by space at the measurement, committed/used MiB: ${spaces}.`,
        ],
      };
      await bench.stop();
      // What Events cost: the same workload again without them (embedded log only, to keep the bench short).
      const eventsCost = options.eventsCost && context.log === 'embedded' ? await eventsCostResult(context, { nodes, replicas, simStartDelayMs }, { podsPerSecond, cpuSeconds, appends }) : [];
      return [schedule, memoryResult, ...eventsCost];
    } finally {
      tracker.close();
      await bench.stop();
    }
  });
};

interface Workload {
  readonly nodes: number;
  readonly replicas: number;
  readonly simStartDelayMs: number;
}

interface RunFigures {
  readonly podsPerSecond: number;
  readonly cpuSeconds: number;
  readonly appends: AppendCounts;
}

/** The schedule workload on a fresh cluster whose controllers and agents record no Events. */
const runWithoutEvents = async (context: ScenarioContext, workload: Workload): Promise<RunFigures> =>
  withTempDir('schedule-no-events', async (dir) => {
    const bench = await startBenchCluster({
      dir,
      log: context.log,
      brokers: context.brokers,
      nodes: workload.nodes,
      runtime: 'sim',
      simStartDelayMs: workload.simStartDelayMs,
      nodeCapacity: SIM_NODE_CAPACITY,
      events: false,
    });
    const tracker = trackPods(bench.cluster.projection, 'Pod/default/');
    try {
      const offsets = await endOffsetsOf(bench.cluster.log);
      const applied = performance.now();
      const cpuAtApply = process.cpuUsage();
      const response = await bench.client.request('POST', '/apis/apps/v1/namespaces/default/deployments', deploymentManifest('bench', workload.replicas));
      expectStatus(response, 201, 'creating the Deployment');
      await until(() => tracker.running.size >= workload.replicas, context.quick ? 120_000 : 600_000, `${workload.replicas} pods Running (without Events)`, 50);
      const seconds = (Math.max(...tracker.runningAt.values()) - applied) / 1000;
      const cpu = process.cpuUsage(cpuAtApply);
      return { podsPerSecond: round(workload.replicas / seconds), cpuSeconds: round((cpu.user + cpu.system) / 1e6, 1), appends: await appendsSince(bench.cluster.log, offsets) };
    } finally {
      tracker.close();
      await bench.stop();
    }
  });

/** Events' cost per pod: their appends and bytes in the run with them, and the run's speed against one without them. */
const eventsCostResult = async (context: ScenarioContext, workload: Workload, withEvents: RunFigures): Promise<ScenarioResult[]> => {
  context.progress(`schedule/${context.log}: the same workload without Events, to price them`);
  const without = await runWithoutEvents(context, workload);
  const perPod = (n: number, digits = 3): number => round(n / workload.replicas, digits);
  const { appends } = withEvents;
  return [
    {
      scenario: 'events-cost',
      log: context.log,
      figures: [
        plain('Event appends per pod (created or updated Event objects)', perPod(appends.eventAppends), 'appends'),
        plain('Event bytes per pod (encoded)', perPod(appends.eventBytes, 0), 'B'),
        plain('all appends per pod, with Events', perPod(appends.appends), 'appends'),
        plain('all appends per pod, without Events', perPod(without.appends.appends), 'appends'),
        plain('all bytes per pod, with Events', perPod(appends.bytes, 0), 'B'),
        plain('all bytes per pod, without Events', perPod(without.appends.bytes, 0), 'B'),
        plain('pods/s end to end, with Events', withEvents.podsPerSecond, 'pods/s'),
        plain('pods/s end to end, without Events', without.podsPerSecond, 'pods/s'),
        plain('CPU time apply → all Running, with Events', withEvents.cpuSeconds, 's'),
        plain('CPU time apply → all Running, without Events', without.cpuSeconds, 's'),
      ],
      setup: { nodes: workload.nodes, replicas: workload.replicas },
      notes: [
        'The schedule workload twice: as above (controllers, scheduler and kubelets record kube\'s Events), then on a fresh cluster started with Events off (startCluster `events: false`, a measurement switch).',
        'Appends and bytes are read back from the log between the apply and all Running, and decoded; an Event append creates or updates a core/v1 Event (here mostly the scheduler\'s Scheduled Event, one per pod; kube\'s spam filter and counting bound the controllers\' per object).',
        'One run each, the run without Events second (so with a warmer JIT): pods/s and CPU move with the machine (see bench/README.md) and need several runs; appends and bytes do not.',
      ],
    },
  ];
};
