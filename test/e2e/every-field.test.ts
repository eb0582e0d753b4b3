/**
 * What is written is what is read back, for every field of every stored kind, on both logs:
 * an object of each kind with every field set (built by walking the vendored API document in
 * `schemas/avro-gen/openapi-samples.ts`, which imports nothing of the schema generator) is
 * appended to the log as a writer appends it, then read back through the apiserver's GET (the
 * projection), the object's history and the cluster at that moment (`get --at`), and a
 * replay from offset 0 must give the live state hash.
 *
 * The objects are not valid Kubernetes objects (their strings are arbitrary), which is why
 * they go to the log directly: admission would refuse them, and what is checked here is that
 * nothing between the log and the reader loses or changes a field. What kubectl may create
 * is checked by `kubectl-kinds.test.ts` and the corpus.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ADMIN_TOKEN, describeOnBothLogs, openTestLog, startTestApiServer, tempDir, type TestApiServer } from '../../apiserver/testing.ts';
import { createHistoryApi, type HistoryApi } from '../../apiserver/history/routes.ts';
import type { EventLog } from '../../log/port.ts';
import { appendAndWait } from '../../projections/writer.ts';
import { sampleObject } from '../../schemas/avro-gen/openapi-samples.ts';
import { loadApiDocument } from '../../schemas/avro-gen/openapi.ts';
import type { EventBody } from '../../schemas/index.ts';
import { STORED_KINDS, type RegisteredKind } from '../../schemas/kinds/registry.ts';
import { replayToLive } from './helpers.ts';

const document = loadApiDocument();
const NAMESPACE = 'every-field';

/** The object of `kind` with every field set, named for its kind, in the test's namespace when namespaced. */
const fullObject = (kind: RegisteredKind): Record<string, unknown> => {
  const object = sampleObject(document, kind.definition);
  const metadata = object['metadata'] as Record<string, unknown>;
  metadata['name'] = `every-${kind.kind.toLowerCase()}`;
  if (kind.scope === 'Namespaced') metadata['namespace'] = NAMESPACE;
  else delete metadata['namespace'];
  FOLD_JUDGED[kind.kind]?.(object);
  return object;
};

/**
 * Fields whose values the fold judges (allocations) or the view derives from, set to values it
 * accepts as they are; every other field keeps its arbitrary sample value.
 */
const FOLD_JUDGED: Readonly<Record<string, (object: Record<string, any>) => void>> = {
  // A pod bound to a node reads with PodScheduled (the view adds it when the pod has none).
  Pod: (pod) => {
    pod['status'].conditions[0].type = 'PodScheduled';
  },
  Service: (service) => {
    Object.assign(service['spec'], { type: 'NodePort', clusterIP: '127.96.0.10', clusterIPs: ['127.96.0.10'], ipFamilies: ['IPv4'], healthCheckNodePort: 30_081 });
    service['spec'].ports[0].nodePort = 30_080;
  },
};

const pathOf = (object: Record<string, unknown>, kind: RegisteredKind): string => {
  const apiVersion = object['apiVersion'] as string;
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const { name } = object['metadata'] as { name: string };
  return kind.scope === 'Namespaced' ? `${base}/namespaces/${NAMESPACE}/${kind.plural}/${name}` : `${base}/${kind.plural}/${name}`;
};

/**
 * The object without the metadata the store owns, as kube-apiserver's registry owns it on a
 * create: the resourceVersion (the position read at), creationTimestamp (the event's time),
 * generation (1) and deletionTimestamp (none: a create is not a deletion). Checked apart.
 */
const written = (object: unknown): unknown => {
  const copy = structuredClone(object) as { metadata: Record<string, unknown> };
  for (const field of ['resourceVersion', 'creationTimestamp', 'generation', 'deletionTimestamp']) delete copy.metadata[field];
  return copy;
};

/** The store-owned metadata of a created object. */
const expectStoreMetadata = (object: unknown): void => {
  const { metadata } = object as { metadata: Record<string, unknown> };
  expect(metadata).toMatchObject({ generation: 1, creationTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/), resourceVersion: expect.stringMatching(/^\d/) });
  expect(metadata).not.toHaveProperty('deletionTimestamp');
};

describeOnBothLogs('every field of every stored kind, from the log to its readers', (adapter) => {
  const temp = tempDir('every-field-');
  let log: EventLog;
  let api: TestApiServer;
  const objects = STORED_KINDS.map((kind) => ({ kind, object: fullObject(kind) }));
  /** The position just after each object's create, by kind. */
  const positions = new Map<string, string>();

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir, partitions: 3 });
    let history: HistoryApi | undefined;
    api = await startTestApiServer(log, temp.dir, { extensions: [async (req, res, url, user) => (history ? history(req, res, url, user) : false)] });
    history = createHistoryApi({ log, projection: api.projection });
    const namespace = await api.client.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } } });
    expect(namespace.status).toBe(201);
    for (const { kind, object } of objects) {
      // A pod bound to a node not registered yet waits for it, as the apiserver writes such a create.
      const body = { type: 'ObjectCreated', object, ...(kind.kind === 'Pod' ? { nodeAdmission: 'Deferred' } : {}) } as unknown as EventBody;
      const [result] = await appendAndWait(log, api.projection, [body], { actor: { type: 'user', name: 'every-field' } });
      expect(result!.record?.verdict, `${kind.ref}: the fold's verdict ${JSON.stringify(result!.record?.verdict)}`).toMatchObject({ type: 'accepted' });
      const history = await api.client.request<{ versions: { position: string }[] }>('GET', `/logplane/v1/history/${kind.ref}/${kind.scope === 'Namespaced' ? NAMESPACE : '_'}/every-${kind.kind.toLowerCase()}`);
      expect(history.status, `${kind.ref}: ${JSON.stringify(history.body)}`).toBe(200);
      positions.set(kind.ref, history.body.versions.at(-1)!.position);
    }
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it.each(objects.map(({ kind, object }) => ({ ref: kind.ref, kind, object })))('$ref: GET, history and get --at give back every field', async ({ kind, object }) => {
    const got = await api.client.request('GET', pathOf(object, kind), { token: ADMIN_TOKEN });
    expect(got.status, JSON.stringify(got.body).slice(0, 300)).toBe(200);
    expect(written(got.body)).toStrictEqual(written(object));
    expectStoreMetadata(got.body);

    const name = (object['metadata'] as { name: string }).name;
    const history = await api.client.request<{ versions: { object: unknown; eventType: string }[] }>(
      'GET',
      `/logplane/v1/history/${kind.ref}/${kind.scope === 'Namespaced' ? NAMESPACE : '_'}/${name}`,
    );
    expect(history.body.versions.map((v) => v.eventType)).toEqual(['ObjectCreated']);
    expect(written(history.body.versions[0]!.object)).toStrictEqual(written(object));

    const query = new URLSearchParams({ at: positions.get(kind.ref)!, kind: kind.kind, name });
    if (kind.scope === 'Namespaced') query.set('namespace', NAMESPACE);
    const at = await api.client.request<{ objects: unknown[] }>('GET', `/logplane/v1/at?${query.toString()}`);
    expect(at.status).toBe(200);
    expect(at.body.objects.map(written)).toStrictEqual([written(object)]);
  });

  it('replays the log from offset 0 into the live state hash', async () => {
    const replayed = await replayToLive({ log, projection: api.projection });
    expect(replayed.events).toBeGreaterThan(STORED_KINDS.length);
    expect(replayed.replayHash).toBe(replayed.liveHash);
  });
});
