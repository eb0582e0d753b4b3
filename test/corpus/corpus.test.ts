/**
 * The manifest corpus (`manifests/`: documentation examples, `helm template` output,
 * operator bundles) applied with the real kubectl (v1.32) to a whole cluster on the sim
 * runtime, on both logs: at least 95 % of the files are accepted and come back as applied
 * (every rejected or altered file is printed with kubectl's message), the files under
 * `invalid/` are refused naming the field kube names, every workload of the corpus whose
 * controller exists reaches Running / available, and a replay of the log from offset 0
 * gives the live state hash.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RunningCluster } from '../../cli/up.ts';
import { createReplayer } from '../../projections/replay.ts';
import { formatVector } from '../../projections/positions.ts';
import type { View } from '../../projections/index.ts';
import { CONTROLLER_NAMES } from '../../reconcilers/controllers.ts';
import { targetNodeName } from '../../reconcilers/daemonset/index.ts';
import type { Kind, KubeObject, Node, PersistentVolumeClaim, Pod, StorageClass } from '../../schemas/index.ts';
import { claimClass, claimNamesOf, storageClassKey } from '../../reconcilers/persistentvolume/volumes.ts';
import { LOCAL_PATH_PROVISIONER } from '../../projections/local-path.ts';
import { STORED_KINDS } from '../../schemas/kinds/registry.ts';
import { LOG_ADAPTERS, waitForView } from '../e2e/helpers.ts';
import { kafkaBrokers } from '../kafka-env.ts';
import { differences, loadCorpus, namespacesNeeded, objectPath, type CorpusFile, type CorpusObject } from './corpus.ts';

interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const CORPUS = loadCorpus();
const ACCEPTED = CORPUS.filter((file) => file.rejection === undefined);
const INVALID = CORPUS.filter((file) => file.rejection !== undefined);
/** kubectl processes at a time (the machine is shared; kubectl is mostly waiting on the server). */
const CONCURRENCY = 4;

/** Runs `task` over `items`, `CONCURRENCY` at a time, keeping the order of the results. */
const pool = async <T, R>(items: readonly T[], task: (item: T) => Promise<R>): Promise<R[]> => {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await task(items[index]!);
      }
    }),
  );
  return results;
};

/** How a workload kind is judged ready, and the controller that must exist for it to get there. */
interface Readiness {
  readonly controller: string;
  ready(object: KubeObject, view: View): boolean;
}

type Status = { replicas?: number; readyReplicas?: number; availableReplicas?: number; numberReady?: number; desiredNumberScheduled?: number; active?: number; phase?: string };
const statusOf = (object: KubeObject): Status => ((object as { status?: Status }).status ?? {});
const specReplicas = (object: KubeObject): number => (object as { spec?: { replicas?: number } }).spec?.replicas ?? 1;

/**
 * A DaemonSet is running when its status is observed and every pod it wants is ready, except
 * those for a node no agent runs (the corpus' hand-registered Node, which a DaemonSet
 * tolerating every taint targets, as kube's does, and the scheduler cannot place on); one selecting only control-plane nodes wants none.
 */
const daemonSetReady = (ds: KubeObject, view: View): boolean => {
  const status = statusOf(ds) as Status & { observedGeneration?: number };
  const agentless = new Set(
    (view.list('Node') as Node[]).filter((node) => node.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True').map((node) => node.metadata.name),
  );
  const stranded = view.ownedBy(ds.metadata.uid ?? '').filter((o) => o.kind === 'Pod' && agentless.has(targetNodeName(o) ?? '')).length;
  return status.observedGeneration !== undefined && status.numberReady === (status.desiredNumberScheduled ?? 0) - stranded;
};

/**
 * Workload kinds and when they count as running. Only kinds whose controller exists in
 * `reconcilers/controllers.ts` are waited for (a Pod needs the scheduler); the others are
 * stored and nothing more is expected of them yet.
 */
const READINESS: Partial<Record<Kind, Readiness>> = {
  Pod: { controller: 'scheduler', ready: (pod) => statusOf(pod).phase === 'Running' },
  ReplicaSet: { controller: 'replicaset', ready: (rs) => (statusOf(rs).availableReplicas ?? 0) >= specReplicas(rs) },
  Deployment: { controller: 'deployment', ready: (d) => (statusOf(d).availableReplicas ?? 0) >= specReplicas(d) },
  ReplicationController: { controller: 'replicationcontroller', ready: (rc) => (statusOf(rc).readyReplicas ?? 0) >= specReplicas(rc) },
  StatefulSet: { controller: 'statefulset', ready: (sts) => (statusOf(sts).readyReplicas ?? 0) >= specReplicas(sts) },
  DaemonSet: { controller: 'daemonset', ready: (ds, view) => daemonSetReady(ds, view) },
  Job: { controller: 'job', ready: (job) => (statusOf(job).active ?? 0) > 0 || (statusOf(job) as { succeeded?: number }).succeeded !== undefined },
};
const runningControllers = new Set<string>(CONTROLLER_NAMES);

/**
 * Whether kube's VolumeBinding rightly keeps `pod` from running: a claim it names is not
 * Bound and nothing in logplane will bind it (the claim does not exist, e.g. an ephemeral
 * volume's, or its class is missing or provisioned by someone else than `local-path`).
 */
const waitsForForeignVolume = (pod: Pod, view: View): boolean =>
  !pod.spec.nodeName &&
  claimNamesOf(pod).some((name) => {
    const claim = view.get(`PersistentVolumeClaim/${pod.metadata.namespace ?? 'default'}/${name}`) as PersistentVolumeClaim | undefined;
    if (claim === undefined) return true;
    if (claim.status?.phase === 'Bound') return false;
    const storageClass = view.get(storageClassKey(claimClass(claim))) as StorageClass | undefined;
    return storageClass?.provisioner !== LOCAL_PATH_PROVISIONER;
  });

/** The pods `owner` controls, directly or through its ReplicaSets (a Deployment's). */
const podsOf = (owner: KubeObject, view: View): Pod[] => {
  const namespace = owner.metadata.namespace ?? 'default';
  const owners = new Set([owner.metadata.uid]);
  for (const set of view.list('ReplicaSet', namespace)) if (set.metadata.ownerReferences?.some((ref) => ref.uid === owner.metadata.uid)) owners.add(set.metadata.uid);
  return (view.list('Pod', namespace) as Pod[]).filter((pod) => pod.metadata.uid === owner.metadata.uid || pod.metadata.ownerReferences?.some((ref) => owners.has(ref.uid)));
};

/** A workload that cannot run because its pods wait for volumes no provisioner here makes (as on a kube cluster without it). */
const heldByVolumes = (workload: KubeObject, view: View): boolean => podsOf(workload, view).some((pod) => waitsForForeignVolume(pod, view));

/** JSON fragments the corpus must hold: volume sources, security contexts, env sources, numeric quantities, scheduling and Service fields. */
const COVERED_FIELDS = [
  '"emptyDir"', '"configMap":{', '"secret":{', '"projected"', '"downwardAPI"', '"hostPath"', '"persistentVolumeClaim":{"claimName"',
  '"volumeMounts"', '"securityContext":{"runAsUser"', '"securityContext":{"allowPrivilegeEscalation"', '"valueFrom"', '"envFrom"',
  '"cpu":1,', '"cpu":0.5', '"memory":1000000000', '"serviceAccountName"', '"dnsPolicy"', '"dnsConfig"', '"topologySpreadConstraints"',
  '"ipFamilies"', '"ipFamilyPolicy"', '"externalName"', '"hostNetwork":true', '"initContainers"', '"livenessProbe"', '"readinessProbe"',
  '"startupProbe"', '"nodeAffinity"', '"podAntiAffinity"', '"tolerations"', '"generateName"',
];

describe.each(LOG_ADAPTERS)('the manifest corpus on the %s log', (adapter) => {
  let dir: string;
  let cluster: RunningCluster;
  /** What kubectl answered for each file, and the fields the server did not give back as applied. */
  const results = new Map<string, { result: KubectlResult; altered: string[] }>();

  const kubectl = (args: readonly string[], input?: string): Promise<KubectlResult> =>
    new Promise((resolve) => {
      const child = execFile(
        'kubectl',
        ['--kubeconfig', cluster.kubeconfig, '--cache-dir', join(dir, 'kube-cache'), '--request-timeout', '60s', ...args],
        { timeout: 90_000, maxBuffer: 32 * 1024 * 1024 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
      if (input !== undefined) child.stdin?.end(input);
    });

  /** GETs `path` from the apiserver as the admin (what `kubectl get -o json` shows, without a kubectl process per object). */
  const get = (path: string): Promise<{ status: number; body: unknown }> =>
    new Promise((resolve, reject) => {
      const url = new URL(path, cluster.url);
      const req = request(url, { ca: readFileSync(join(dir, 'apiserver.crt')), headers: { authorization: `Bearer ${cluster.token}`, accept: 'application/json' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });

  const namespaceArgs = (file: CorpusFile): string[] => (file.namespace ? ['-n', file.namespace] : []);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'corpus-'));
    cluster = await startCluster({
      dataDir: dir,
      nodes: 3,
      runtime: 'sim',
      simStartDelayMs: 10,
      proxy: 'none',
      port: 0,
      host: '127.0.0.1',
      nodeCapacity: { cpu: '64', memory: '256Gi', pods: '250' },
      logger: pino({ level: process.env['LOGPLANE_TEST_LOG'] ?? 'silent' }),
      ...(adapter === 'kafka' ? { kafka: { type: 'kafka', brokers: kafkaBrokers(), cluster: `corpus-${randomUUID().slice(0, 8)}`, partitions: 1 } } : {}),
    });
    // What the docs ask a user to do first (pods/pod-nginx-specific-node.yaml selects it).
    const label = await kubectl(['label', 'node', 'node-1', 'disktype=ssd']);
    expect(label.stderr).toBe('');
    // Each file gets a namespace of its own (so selectors of different files never overlap),
    // plus the namespaces files name without creating them (kube-system, default exist).
    const namespaces = new Set<string>();
    for (const file of CORPUS) {
      if (file.namespace) namespaces.add(file.namespace);
      for (const ns of namespacesNeeded(file)) if (!['default', 'kube-system', 'kube-public'].includes(ns)) namespaces.add(ns);
    }
    const documents = [...namespaces].map((name) => stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }));
    const created = await kubectl(['apply', '-f', '-'], documents.join('---\n'));
    expect(created.stderr).toBe('');
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds at least 200 files covering every stored kind', () => {
    expect(ACCEPTED.length).toBeGreaterThanOrEqual(200);
    const kinds = new Set(ACCEPTED.flatMap((file) => file.objects.map((o) => o.kind)));
    expect(STORED_KINDS.map((kind) => kind.kind).filter((kind) => !kinds.has(kind))).toEqual([]);
    // The fields issue 15 names, each somewhere in the corpus (as JSON, after YAML decoding).
    const text = ACCEPTED.map((file) => JSON.stringify(file.objects)).join('\n');
    const missing = COVERED_FIELDS.filter((field) => !text.includes(field));
    expect(missing).toEqual([]);
    expect(ACCEPTED.some((file) => /^kind: List$/m.test(readFileSync(file.path, 'utf8')))).toBe(true);
  });

  it('accepts at least 95 % of the files with kubectl apply, and gives back what was applied', async () => {
    await pool(ACCEPTED, async (file) => {
      const result = await kubectl([file.create ? 'create' : 'apply', '-f', file.path, ...namespaceArgs(file)]);
      let altered: string[] = [];
      if (result.code === 0 && !file.create) {
        for (const object of file.objects) {
          const got = await get(objectPath(object, file.namespace ?? 'default'));
          altered.push(...(got.status === 200 ? differences(object, got.body) : [`GET answered ${got.status}`]).map((d) => `${object.kind}/${object.metadata.name}: ${d}`));
        }
      }
      results.set(file.name, { result, altered });
    });
    const rejected = ACCEPTED.filter((file) => results.get(file.name)?.result.code !== 0);
    const altered = ACCEPTED.filter((file) => results.get(file.name)?.result.code === 0 && (results.get(file.name)?.altered.length ?? 0) > 0);
    const ratio = (ACCEPTED.length - rejected.length - altered.length) / ACCEPTED.length;
    const report = [
      `corpus on the ${adapter} log: ${ACCEPTED.length - rejected.length - altered.length}/${ACCEPTED.length} files accepted as applied (${(ratio * 100).toFixed(1)} %)`,
      ...rejected.map((file) => `  rejected ${file.name}: ${results.get(file.name)?.result.stderr.trim().replace(/\n/g, '\n    ')}`),
      ...altered.map((file) => `  altered ${file.name}:\n    ${results.get(file.name)?.altered.join('\n    ')}`),
    ].join('\n');
    console.log(report);
    expect(ratio, report).toBeGreaterThanOrEqual(0.95);
  }, 240_000);

  it.each(INVALID.map((file) => [file.name, file] as const))('refuses %s naming the field', async (_name, file) => {
    const result = await kubectl(['apply', '-f', file.path, ...namespaceArgs(file)]);
    expect(result.code, result.stdout).not.toBe(0);
    expect(result.stderr).toMatch(file.rejection!);
  });

  it('runs every workload whose controller exists', async () => {
    const expected = ACCEPTED.filter((file) => results.get(file.name)?.result.code === 0).flatMap((file) =>
      file.objects
        .filter((object) => READINESS[object.kind as Kind] && runningControllers.has(READINESS[object.kind as Kind]!.controller))
        .map((object) => ({ file, object, namespace: object.metadata.namespace ?? file.namespace ?? 'default' })),
    );
    expect(expected.length).toBeGreaterThan(100);
    const notReady = (view: View): string[] =>
      expected
        .filter(({ object, namespace }) => {
          const kind = object.kind as Kind;
          const found = (view.list(kind, namespace) as KubeObject[]).filter((o) =>
            object.metadata.name ? o.metadata.name === object.metadata.name : o.metadata.name.startsWith(object.metadata.generateName ?? '\0'),
          );
          return found.length === 0 || !found.every((o) => READINESS[kind]!.ready(o, view) || heldByVolumes(o, view));
        })
        .map(({ file, object, namespace }) => `${file.name}: ${object.kind} ${namespace}/${object.metadata.name ?? object.metadata.generateName}`);
    await waitForView(cluster.projection, 'every corpus workload running', (view) => notReady(view).length === 0, {
      timeoutMs: 120_000,
      describe: notReady,
    });
  }, 150_000);

  it('replays the log from offset 0 into the live state hash', async () => {
    const replayer = createReplayer({ log: cluster.log, dir: join(dir, 'replay') });
    try {
      await replayer.advanceTo(cluster.projection.cursor());
      // The cluster moves on (pods report, nodes beat): catch up until both stand at one position.
      let live: string | undefined;
      for (let round = 0; round < 20 && live === undefined; round++) {
        await cluster.projection.waitFor(replayer.cursor());
        const current = cluster.projection.cursor();
        if (formatVector(current) === formatVector(replayer.cursor())) live = cluster.projection.stateHash();
        else await replayer.advanceTo(current);
      }
      expect(live, 'the live projection never stood still long enough to compare').toBeDefined();
      expect(replayer.stateHash()).toBe(live);
    } finally {
      await replayer.close();
    }
  }, 120_000);
});
