/**
 * Probes of the `cri` runtime on a real containerd: exec through ExecSync in the container,
 * httpGet and tcpSocket from the agent to the pod's CNI address. The runtime runs in a
 * process of its own inside the test's network namespace (fixtures/agent-process.ts), where
 * the CNI bridge is, as kubelet runs on the host network. Needs root, as CI runs it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PodStatusUpdate } from '../pod-driver.ts';
import { containerStatus, makePod } from '../testing.ts';
import { BUSYBOX_IMAGE, type TestContainerd, startTestContainerd } from './testing.ts';

describe('cri runtime probes on a real containerd', () => {
  let harness: TestContainerd;
  let agent: ChildProcess;
  const updates: PodStatusUpdate[] = [];
  const listeners = new Set<() => void>();
  let stderr = '';

  /** The first status update (seen so far or later) after `from` that satisfies `predicate`. */
  const waitForUpdate = (what: string, predicate: (u: PodStatusUpdate) => boolean, from = 0, ms = 30_000): Promise<{ update: PodStatusUpdate; index: number }> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const index = updates.findIndex((u, i) => i >= from && predicate(u));
        if (index === -1) return;
        clearTimeout(timer);
        listeners.delete(check);
        resolve({ update: updates[index]!, index });
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`timed out after ${ms} ms waiting for ${what}; last: ${JSON.stringify(updates.at(-1)?.status.containerStatuses)}; agent stderr: ${stderr.slice(-2000)}`));
      }, ms);
      listeners.add(check);
      check();
    });

  const pod = makePod(
    'probed',
    [
      {
        name: 'web',
        image: BUSYBOX_IMAGE,
        command: ['sh', '-c', 'touch /tmp/ready; exec httpd -f -p 8080 -h /www'],
        ports: [{ name: 'http', containerPort: 8080 }],
        startupProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1, failureThreshold: 100 },
        readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1, failureThreshold: 1 },
        livenessProbe: { httpGet: { path: '/index.html', port: 'http' }, periodSeconds: 1, failureThreshold: 2 },
      },
    ],
    { terminationGracePeriodSeconds: 1 },
  );

  beforeAll(async () => {
    harness = await startTestContainerd();
    agent = spawn(
      'nsenter',
      [`--net=/run/netns/${harness.netns}`, process.execPath, '--import', 'tsx', new URL('./fixtures/agent-process.ts', import.meta.url).pathname,
        harness.containerd.endpoint, join(harness.dir, 'agent'), harness.cgroupParent, JSON.stringify([pod])],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    agent.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    createInterface({ input: agent.stdout! }).on('line', (line) => {
      updates.push(JSON.parse(line) as PodStatusUpdate);
      for (const listener of [...listeners]) listener();
    });
  });

  afterAll(async () => {
    if (agent !== undefined && agent.exitCode === null) {
      const exited = new Promise((resolve) => agent.once('exit', resolve));
      agent.kill('SIGTERM');
      await exited;
    }
    await harness?.close();
  });

  it('gates on a tcpSocket startup probe, follows an exec readiness probe, restarts on a failing httpGet liveness probe', async () => {
    const web = (u: PodStatusUpdate) => containerStatus(u, 'web');
    const ready = await waitForUpdate('ready', (u) => web(u).ready);
    expect(web(ready.update)).toMatchObject({ started: true, restartCount: 0 });
    // Before the startup probe passed, the container ran but was neither started nor ready.
    expect(updates.slice(0, ready.index).some((u) => web(u).state?.running != null && web(u).started === false && !web(u).ready)).toBe(true);
    const id = web(ready.update).containerID!.slice('containerd://'.length);

    await harness.containerd.cri.execSync(id, ['rm', '/tmp/ready'], 5);
    const unready = await waitForUpdate('unready', (u) => !web(u).ready, ready.index);
    expect(web(unready.update)).toMatchObject({ restartCount: 0, started: true, state: { running: expect.anything() } });
    expect(unready.update.status.conditions?.find((c) => c.type === 'ContainersReady')).toMatchObject({ status: 'False', message: 'containers with unready status: [web]' });

    await harness.containerd.cri.execSync(id, ['touch', '/tmp/ready'], 5);
    const readyAgain = await waitForUpdate('ready again', (u) => web(u).ready, unready.index);
    expect(web(readyAgain.update).restartCount).toBe(0);

    // The liveness probe now gets 404: the container is killed (after its 1 s grace) and restarted.
    await harness.containerd.cri.execSync(id, ['rm', '/www/index.html'], 5);
    const restarted = await waitForUpdate('restarted and ready', (u) => web(u).restartCount === 1 && web(u).ready, readyAgain.index);
    expect(web(restarted.update).lastState?.terminated).toMatchObject({ containerID: `containerd://${id}` });
    expect(web(restarted.update).containerID).not.toBe(`containerd://${id}`);
  });
});
