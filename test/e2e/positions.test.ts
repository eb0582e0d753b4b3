/**
 * One way to name a moment, through the real `logplane` command and the HTTP API of
 * `logplane up` (embedded log, sim runtime): the position `history` prints for the
 * Deployment's creation, pasted into `get deploy echo --at`, finds the Deployment; `why`
 * and `audit` print positions in the same format (a list resourceVersion), which `get --at`
 * takes as well; the forms printed or taken before (`desired/0/7`, `7.0`-style vectors),
 * RFC 3339 and relative times still work; malformed and future moments are 400s naming
 * the parameter.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, type Client } from '../../cli/client.ts';
import type { AuditReply, HistoryReply, Version, WhyReply } from '../../cli/history/api.ts';
import type { Deployment, Pod } from '../../schemas/index.ts';
import { cleanup, clusterClient, echoManifest, freePort, listPods, logplane, ok, okJson, startLogplane, tempDir, waitFor, type Daemon } from './process.ts';

/** A list resourceVersion of a one-partition cluster: desired offset, observed offset. */
const LIST_RESOURCE_VERSION = /^\d+\.\d+$/;

describe('one position format across history, why, audit and get --at', { timeout: 180_000 }, () => {
  const dataDir = tempDir('logplane-positions-');
  let up: Daemon;
  let kubeconfig: string;
  let client: Client;
  let created: Version;
  let pods: Pod[];

  const cli = (...args: string[]) => logplane(kubeconfig, args);
  /** `get deploy echo --at AT -o json`: the Deployment then, or the command's result when it failed. */
  const deploymentAt = async (at: string): Promise<Deployment> => okJson<Deployment>(await cli('get', 'deploy', 'echo', '--at', at, '-o', 'json'));

  beforeAll(async () => {
    const port = await freePort();
    up = startLogplane('logplane up', ['up', '--data', dataDir, '--port', String(port), '--nodes', '1', '--runtime', 'sim', '--proxy', 'none'], { dataDir });
    const [, path] = await up.waitForOutput(/export KUBECONFIG=(\S+)/, 60_000);
    kubeconfig = path!;
    client = clusterClient(kubeconfig);
    writeFileSync(join(dataDir, 'echo.yaml'), echoManifest({ replicas: 2 }).split('---\n')[0]!);
    await waitFor('one node', async () => (await client.get<{ items: unknown[] }>('/api/v1/nodes')).items.length === 1);
    ok(await cli('apply', '-f', join(dataDir, 'echo.yaml')));
    pods = await waitFor('2 running echo pods', async () => {
      const all = await listPods(client, 'app=echo');
      return all.length === 2 && all.every((p) => p.status?.phase === 'Running') && all;
    });
    ok(await cli('scale', 'deploy/echo', '--replicas', '3'));
  });

  afterAll(async () => {
    if (up?.running()) await up.stop().catch(() => undefined);
    cleanup();
  });

  it('prints the creation in history as a list resourceVersion, and get --at that position finds the Deployment', async () => {
    const text = ok(await cli('history', 'deploy/echo'));
    const row = text.split('\n').find((line) => /\suser:admin\s+ObjectCreated\s+accepted$/.test(line));
    expect(row, text).toBeDefined();
    const printed = row!.split(/\s+/)[0]!;
    expect(printed).toMatch(LIST_RESOURCE_VERSION);

    const { versions } = okJson<HistoryReply>(await cli('history', 'deploy/echo', '-o', 'json'));
    created = versions.find((v) => v.eventType === 'ObjectCreated' && v.actor.name === 'admin')!;
    expect(created.position).toBe(printed);
    expect(Number(printed.split('.')[0])).toBe(created.offset + 1);

    const then = await deploymentAt(printed);
    expect(then.metadata.name).toBe('echo');
    expect(then.spec.replicas).toBe(2);
    expect(ok(await cli('get', 'deploy', 'echo', '--at', printed))).toMatch(/^echo\s/m);
    // The scale is a later version; history's position for it shows 3 replicas.
    const scaled = versions.find((v) => v.eventType === 'ObjectUpdated' && v.actor.name === 'admin')!;
    expect((await deploymentAt(scaled.position)).spec.replicas).toBe(3);
  });

  it('answers "not found" one offset before the creation', async () => {
    const [, observed] = created.position.split('.');
    const before = `${created.offset}.${observed}`;
    const result = await cli('get', 'deploy', 'echo', '--at', before);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`deployments.apps "echo" not found at position ${before}`);
  });

  it('still takes every other form: the event address history printed, a vector with observed 0, times and relative times', async () => {
    const address = `${created.topic}/${created.partition}/${created.offset}`;
    expect((await deploymentAt(address)).spec.replicas).toBe(2);
    expect((await deploymentAt(`${created.offset + 1}.0`)).spec.replicas).toBe(2);
    expect((await deploymentAt(new Date(created.time).toISOString())).spec.replicas).toBe(2);
    expect((await deploymentAt(String(created.time))).spec.replicas).toBe(2);
    expect((await deploymentAt('now')).spec.replicas).toBe(3);
    expect((await deploymentAt('0s ago')).spec.replicas).toBe(3);
    expect((await deploymentAt('-0s')).spec.replicas).toBe(3);
    const past = await cli('get', 'deploy', 'echo', '--at', '1h ago');
    expect(past.stderr).toMatch(/deployments\.apps "echo" not found at position 0\.0/);
  });

  it("prints why's positions in the same format, and each one finds the object of its event", async () => {
    const pod = pods[0]!;
    const { chains } = okJson<WhyReply>(await cli('why', `pod/${pod.metadata.name}`, '-o', 'json'));
    const links = chains.flat();
    expect(links.length).toBeGreaterThan(2);
    for (const link of links) expect(link.event.position).toMatch(LIST_RESOURCE_VERSION);
    const binding = links.find((l) => l.event.eventType === 'PodBound')!;
    expect(binding.event.decidedAt).toMatch(LIST_RESOURCE_VERSION);
    const podCreated = links.find((l) => l.event.eventType === 'ObjectCreated' && l.event.key === `Pod/default/${pod.metadata.name}`)!;
    const thenPod = okJson<Pod>(await cli('get', 'pod', pod.metadata.name, '--at', podCreated.event.position, '-o', 'json'));
    expect(thenPod.metadata.name).toBe(pod.metadata.name);
    expect(thenPod.spec.nodeName).toBeUndefined();
    const boundPod = okJson<Pod>(await cli('get', 'pod', pod.metadata.name, '--at', binding.event.position, '-o', 'json'));
    expect(boundPod.spec.nodeName).toBe('node-1');
    const deploymentLink = links.find((l) => l.event.key === 'Deployment/default/echo')!;
    expect(deploymentLink.event.position).toBe(created.position);

    const text = ok(await cli('why', `pod/${pod.metadata.name}`));
    const brackets = [...text.matchAll(/\[\S+ (\S+?)(?:, decided at (\S+))?\]$/gm)];
    expect(brackets.length).toBe(text.split('\n').filter((line) => line.includes('←')).length);
    for (const [, position, decided] of brackets) {
      expect(position).toMatch(LIST_RESOURCE_VERSION);
      if (decided !== undefined) expect(decided).toMatch(LIST_RESOURCE_VERSION);
    }
    expect(text).toContain(`[${new Date(created.time).toISOString().replace(/\.\d{3}Z$/, 'Z')} ${created.position}]`);
  });

  it('prints positions in audit, and takes them (and times) as bounds', async () => {
    const text = ok(await cli('audit', '--user', 'admin'));
    expect(text).toMatch(/^POSITION\s+TIME\s+ACTOR\s+EVENT\s+OBJECT\s+VERDICT$/m);
    expect(text).toMatch(new RegExp(`^${created.position.replace('.', '\\.')}\\s+\\S+\\s+user:admin\\s+ObjectCreated\\s+Deployment/default/echo\\s+accepted$`, 'm'));
    const { events } = okJson<AuditReply>(await cli('audit', '--user', 'admin', '--since', created.position, '-o', 'json'));
    expect(events.map((e) => e.eventType)).toEqual(['ObjectUpdated']);
    const upTo = okJson<AuditReply>(await cli('audit', '--user', 'admin', '--until', created.position, '-o', 'json'));
    expect(upTo.events.map((e) => `${e.eventType} ${e.key}`)).toEqual(['ObjectCreated Deployment/default/echo']);
    expect(okJson<AuditReply>(await cli('audit', '--user', 'admin', '--since', '1h ago', '-o', 'json')).events).toHaveLength(2);
    expect(okJson<AuditReply>(await cli('audit', '--user', 'admin', '--since', 'desired/0/0', '-o', 'json')).events).toHaveLength(2);
  });

  it('answers malformed and future moments with a 400 Status naming the parameter', async () => {
    const status = async (path: string, query: Record<string, string>): Promise<ApiError> => {
      const error = await client.get(path, query).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, `${path} ${JSON.stringify(query)}`).toBeInstanceOf(ApiError);
      return error as ApiError;
    };
    const malformed = await status('/logplane/v1/at', { at: 'yesterday' });
    expect(malformed.code).toBe(400);
    expect(malformed.status).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 });
    expect(malformed.message).toMatch(/^at: Invalid value: "yesterday": .*expected a position/);
    const future = await status('/logplane/v1/at', { at: '999999.0' });
    expect(future.code).toBe(400);
    expect(future.message).toMatch(/^at: Invalid value: "999999\.0": position 999999\.0 is in the future: the log ends at \d+\.\d+$/);
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const futureTime = await status('/logplane/v1/diff', { from: later });
    expect(futureTime.code).toBe(400);
    expect(futureTime.message).toMatch(/^from: Invalid value: .* is in the future \(the server's time is /);
    const wrongCount = await status('/logplane/v1/at', { at: '1.2.3' });
    expect(wrongCount.message).toMatch(/^at: .*has 2 dot-separated offsets/);
    expect((await status('/logplane/v1/audit', { since: 'soon' })).message).toMatch(/^since: Invalid value: "soon"/);

    const cliFuture = await cli('get', 'deploy', 'echo', '--at', '999999.0');
    expect(cliFuture.code).not.toBe(0);
    expect(cliFuture.stderr).toContain('is in the future');
    const cliMalformed = await cli('get', 'deploy', 'echo', '--at', 'yesterday');
    expect(cliMalformed.code).not.toBe(0);
    expect(cliMalformed.stderr).toContain('--at: "yesterday" is not a moment');
  });
});
