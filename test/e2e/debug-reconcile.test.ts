/**
 * Time-travel debugging of the scheduler through the CLI: on `logplane up` (sim runtime),
 * every binding's position ("decided at", from `why -o json`) given to `debug reconcile
 * scheduler pod/NAME --at POSITION` re-runs the decision on the view of that moment and
 * yields exactly the PodBound the scheduler appended then: same node, same filter and
 * score rationale. Includes bindings decided in one round and bindings with nodes
 * filtered out by a nodeSelector.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../cli/client.ts';
import type { CauseLink, ReconcileReply, WhyReply } from '../../cli/history/api.ts';
import type { Pod } from '../../schemas/index.ts';
import { cleanup, clusterClient, echoManifest, freePort, listPods, logplane, ok, okJson, startLogplane, tempDir, waitFor, type Daemon } from './process.ts';

/** A Deployment whose pods may only go to node-2 (the scheduler filters the others out). */
const PINNED = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: pinned
spec:
  replicas: 2
  selector:
    matchLabels:
      app: pinned
  template:
    metadata:
      labels:
        app: pinned
    spec:
      nodeSelector:
        kubernetes.io/hostname: node-2
      containers:
        - name: echo
          image: logplane/echo:1
          resources:
            requests:
              cpu: 100m
              memory: 64Mi
`;

describe('debug reconcile reproduces past scheduling decisions', { timeout: 180_000 }, () => {
  const dataDir = tempDir('logplane-debug-reconcile-');
  let up: Daemon;
  let kubeconfig: string;
  let client: Client;

  const cli = (...args: string[]) => logplane(kubeconfig, args);

  /** The pod's accepted binding, with the scheduler's rationale, from `why -o json`. */
  const bindingOf = async (name: string): Promise<CauseLink> => {
    const { chains } = okJson<WhyReply>(await cli('why', `pod/${name}`, '-o', 'json'));
    const bindings = chains.flat().filter((l) => l.event.eventType === 'PodBound' && l.event.key === `Pod/default/${name}` && l.event.verdict.type === 'accepted');
    expect(new Set(bindings.map((b) => b.event.id)).size, `one accepted binding of ${name}`).toBe(1);
    return bindings[0]!;
  };

  const boundPods = (selector: string, count: number): Promise<Pod[]> =>
    waitFor(`${count} bound pods of ${selector}`, async () => {
      const pods = await listPods(client, selector);
      return pods.length === count && pods.every((p) => p.spec.nodeName) && pods;
    });

  beforeAll(async () => {
    const port = await freePort();
    up = startLogplane('logplane up', ['up', '--data', dataDir, '--port', String(port), '--nodes', '3', '--runtime', 'sim', '--proxy', 'none'], { dataDir });
    const [, path] = await up.waitForOutput(/export KUBECONFIG=(\S+)/, 60_000);
    kubeconfig = path!;
    client = clusterClient(kubeconfig);
    writeFileSync(join(dataDir, 'echo.yaml'), echoManifest({ replicas: 5 }).split('---\n')[0]!);
    writeFileSync(join(dataDir, 'pinned.yaml'), PINNED);
    await waitFor('three nodes', async () => (await client.get<{ items: unknown[] }>('/api/v1/nodes')).items.length === 3);
    ok(await cli('apply', '-f', join(dataDir, 'echo.yaml'), '-f', join(dataDir, 'pinned.yaml')));
  });

  afterAll(async () => {
    if (up?.running()) await up.stop().catch(() => undefined);
    cleanup();
  });

  it('re-runs every binding of a Deployment on the view it saw and gets the same PodBound', async () => {
    const pods = await boundPods('app=echo', 5);
    await Promise.all(
      pods.map(async (pod) => {
        const name = pod.metadata.name;
        const binding = await bindingOf(name);
        expect(binding.event.actor).toEqual({ type: 'controller', name: 'scheduler' });
        const at = binding.event.decidedAt!;
        expect(at).toMatch(/^\d+\.\d+$/);
        const reply = okJson<ReconcileReply>(await cli('debug', 'reconcile', 'scheduler', `pod/${name}`, '--at', at, '-o', 'json'));
        expect(reply).toMatchObject({ controller: 'scheduler', key: `Pod/default/${name}`, at, identical: true });
        // The binding and the Scheduled Event it recorded on the pod.
        expect(reply.recorded).toHaveLength(2);
        expect(reply.commands).toEqual(reply.recorded);
        expect(reply.commands[0]).toMatchObject({ type: 'PodBound', namespace: 'default', name, node: pod.spec.nodeName, rationale: binding.rationale });
        expect(reply.commands[1]).toMatchObject({
          type: 'ObjectCreated',
          object: { kind: 'Event', reason: 'Scheduled', message: `Successfully assigned default/${name} to ${pod.spec.nodeName}`, involvedObject: { kind: 'Pod', name } },
        });
        expect(binding.rationale?.feasibleNodes).toBe(3);
      }),
    );
  });

  it('reproduces a binding whose rationale filtered nodes out', async () => {
    const [pod] = await boundPods('app=pinned', 2);
    const name = pod!.metadata.name;
    expect(pod!.spec.nodeName).toBe('node-2');
    const binding = await bindingOf(name);
    expect(binding.rationale?.filtered.map((f) => f.node).sort()).toEqual(['node-1', 'node-3']);
    const at = binding.event.decidedAt!;
    const reply = okJson<ReconcileReply>(await cli('debug', 'reconcile', 'scheduler', `pod/${name}`, '--at', at, '-o', 'json'));
    expect(reply.identical).toBe(true);
    expect(reply.commands).toEqual(reply.recorded);
    expect(reply.commands).toMatchObject([
      { type: 'PodBound', name, node: 'node-2', rationale: binding.rationale },
      { type: 'ObjectCreated', object: { kind: 'Event', reason: 'Scheduled' } },
    ]);

    const text = await cli('debug', 'reconcile', 'scheduler', `pod/${name}`, '--at', at);
    expect(ok(text)).toContain(`# controller "scheduler" deciding Pod/default/${name} at position ${at}`);
    expect(text.stdout).toContain('node: node-2');
    expect(text.stdout).toContain('# identical to what the controller appended then');
  });

  it('says so, with exit code 1, when no decision was recorded at the position', async () => {
    const [pod] = await listPods(client, 'app=echo');
    const name = pod!.metadata.name;
    const [desired, observed] = (await bindingOf(name)).event.decidedAt!.split('.').map(Number) as [number, number];
    // The same pending pod, one observed event earlier: the scheduler made no decision on that view.
    const elsewhere = `${desired}.${Math.max(0, observed - 1)}`;
    const result = await cli('debug', 'reconcile', 'scheduler', `pod/${name}`, '--at', elsewhere);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('# nothing to compare: the log has no decision of "scheduler"');
  });
});
