/**
 * Debian's python3-kubernetes (the official Python client, installed by
 * test/system-deps.sh) against a logplane apiserver, on both logs: create and list, a watch
 * across create/update/delete (`Watch().stream` sends `watch=True`), a resume from a
 * resourceVersion, a too-old resourceVersion (an ERROR event with a 410 Expired Status, on
 * which the client raises `ApiException(410)`), a reflector-style list-then-watch loop that
 * re-lists after 410, and `timeoutSeconds`. The scenarios are in python-client.py; they print
 * what the client saw as JSON lines, asserted here.
 *
 * `/usr/bin/python3`, not `python3`: on PATH that may be a pyenv shim without Debian's packages.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ADMIN_TOKEN, describeOnBothLogs, openTestLog, podManifest, startTestApiServer, tempDir, type TestApiServer } from '../../apiserver/testing.ts';
import type { EventLog } from '../../log/port.ts';

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(import.meta.dirname, 'python-client.py');
/** The watch window of the apiserver the too-old scenarios use: a few changes, so a position expires quickly. */
const WATCH_WINDOW = 3;

type Line = Record<string, any>;

/** Runs one scenario of python-client.py and returns its JSON lines; fails with its stderr when it fails. */
const python = (url: string, scenario: string, namespace: string, env: Record<string, string> = {}): Promise<Line[]> =>
  new Promise((resolve, reject) => {
    execFile(
      PYTHON,
      [SCRIPT, scenario],
      { timeout: 90_000, env: { ...process.env, LOGPLANE_URL: url, LOGPLANE_TOKEN: ADMIN_TOKEN, LOGPLANE_NAMESPACE: namespace, ...env } },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`python-client.py ${scenario} failed (${error.message}):\n${stderr}\nstdout:\n${stdout}`));
        else resolve(stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line));
      },
    );
  });

const steps = (lines: readonly Line[], step: string): Line[] => lines.filter((l) => l['step'] === step);

describeOnBothLogs('the Python client (python3-kubernetes)', (adapter) => {
  const temp = tempDir('python-client-');
  let log: EventLog;
  let api: TestApiServer;
  let small: TestApiServer;
  const namespace = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 6)}`;

  /** A namespace on the small-window server with a list resourceVersion that is older than its watch window. */
  const staleNamespace = async (prefix: string): Promise<{ ns: string; stale: string }> => {
    const ns = namespace(prefix);
    expect((await small.client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status).toBe(201);
    const stale: string = (await small.client.request('GET', `/api/v1/namespaces/${ns}/pods`)).body.metadata.resourceVersion;
    for (let i = 0; i <= WATCH_WINDOW; i++) {
      expect((await small.client.request('POST', `/api/v1/namespaces/${ns}/pods`, { body: podManifest(`p${i}`) })).status).toBe(201);
    }
    return { ns, stale };
  };

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
    small = await startTestApiServer(log, temp.dir, { watchWindow: WATCH_WINDOW });
  });

  afterAll(async () => {
    await small?.close();
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it('creates (with a name and with generateName) and lists pods', async () => {
    const ns = namespace('py-create');
    const lines = await python(api.server.url, 'create-list', ns);
    const [created] = steps(lines, 'created');
    expect(created).toMatchObject({ name: 'first', uid: expect.stringMatching(/^[0-9a-f-]{36}$/), resourceVersion: expect.stringMatching(/^\d+\.\d+$/) });
    const [generated] = steps(lines, 'generated');
    // kube's generated suffix: 5 characters of its consonant-and-digit alphabet.
    expect(generated).toMatchObject({ name: expect.stringMatching(/^worker-[bcdfghjklmnpqrstvwxz2456789]{5}$/), generateName: 'worker-' });
    expect(steps(lines, 'listed')[0]).toMatchObject({ names: ['first', generated!['name']].sort(), resourceVersion: expect.stringMatching(/^\d+\.\d+$/) });
    expect(steps(lines, 'selected')[0]).toMatchObject({ names: ['first'] });
    expect(steps(lines, 'duplicate')[0]).toEqual({ step: 'duplicate', status: 409, reason: 'AlreadyExists' });
    const server = await api.client.request('GET', `/api/v1/namespaces/${ns}/pods/first`);
    expect(server.body.metadata.uid).toBe(created!['uid']);
  });

  it('watches across create, update and delete, and resumes from a resourceVersion', async () => {
    const lines = await python(api.server.url, 'watch-live', namespace('py-watch'));
    expect(steps(lines, 'event').map((e) => [e['type'], e['name'], e['labels']['phase']])).toEqual([
      ['ADDED', 'live', 'one'],
      ['MODIFIED', 'live', 'two'],
      ['DELETED', 'live', 'two'],
    ]);
    // Resumed from the MODIFIED event's resourceVersion: only what came after it.
    expect(steps(lines, 'resumed').map((e) => [e['type'], e['name']])).toEqual([['DELETED', 'live']]);
  });

  it('gets an ERROR event with a 410 Expired Status for a too-old resourceVersion, and the client raises ApiException(410)', async () => {
    const { ns, stale } = await staleNamespace('py-old');
    const lines = await python(small.server.url, 'too-old', ns, { LOGPLANE_STALE_RV: stale });
    const [raw] = steps(lines, 'raw');
    expect(raw!['status']).toBe(200);
    expect(raw!['lines']).toEqual([
      {
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: expect.stringMatching(new RegExp(`^too old resource version: ${stale.replace('.', '\\.')} \\(\\d+\\.\\d+\\)$`)),
          reason: 'Expired',
          code: 410,
        },
      },
    ]);
    expect(steps(lines, 'unexpected-event')).toEqual([]);
    // Without timeout_seconds Watch retries once after a 410, then raises; with it, it raises at once.
    expect(steps(lines, 'raised')).toEqual([
      { step: 'raised', variant: 'without timeout', status: 410, reason: expect.stringMatching(/^Expired: too old resource version: /) },
      { step: 'raised', variant: 'with timeout', status: 410, reason: expect.stringMatching(/^Expired: too old resource version: /) },
    ]);
  });

  it('runs a reflector-style list-then-watch loop that re-lists after 410 and keeps its store current', async () => {
    const { ns, stale } = await staleNamespace('py-reflector');
    const lines = await python(small.server.url, 'reflector', ns, { LOGPLANE_STALE_RV: stale });
    const pods = Array.from({ length: WATCH_WINDOW + 1 }, (_, i) => `p${i}`);
    expect(steps(lines, 'relisted')).toEqual([{ step: 'relisted', status: 410, names: pods, resourceVersion: expect.stringMatching(/^\d+\.\d+$/) }]);
    expect(steps(lines, 'event').map((e) => [e['type'], e['name']])).toEqual([['ADDED', 'after-relist']]);
    expect(steps(lines, 'store')).toEqual([{ step: 'store', relists: 1, names: [...pods, 'after-relist'].sort() }]);
  });

  it('ends a watch cleanly after timeoutSeconds', async () => {
    const [ended] = steps(await python(api.server.url, 'timeout', namespace('py-timeout')), 'ended');
    expect(ended!['events']).toBe(0);
    expect(ended!['seconds']).toBeGreaterThanOrEqual(1.9);
    expect(ended!['seconds']).toBeLessThan(10);
  });
});
