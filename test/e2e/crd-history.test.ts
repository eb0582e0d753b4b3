/**
 * The history verbs on custom objects (issue 16: "History, `get --at`, `diff`, `why`, `audit`
 * and `replay` work for custom objects exactly as for built-in kinds"), on both logs, with the
 * real kubectl and the real `logplane` command against `startCluster` (every controller, the
 * CRD controller among them): a CRD is applied, a custom object of it created, its spec
 * changed and its status written through `/status`; then `logplane history`, `get --at` an
 * earlier position, `diff`, `why`, `audit`, the `/logplane/v1` routes and `replay` are each
 * asked about it and must show its versions with their field values (the content decoded
 * with the schema the log registered, not its Avro bytes). Finally the CRD is deleted, which
 * deletes the object, and its history still shows every version.
 */
import { expect, it } from 'vitest';
import type { AtReply, AuditReply, DiffReply, HistoryReply, ReplayLine, WhyReply } from '../../cli/history/api.ts';
import type { KubeObject } from '../../schemas/index.ts';
import { describeOnBothLogs } from '../../apiserver/testing.ts';
import { replayToLive } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';
import { clusterClient, logplane, ok, okJson } from './process.ts';

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: databases.ops.example.com
spec:
  group: ops.example.com
  scope: Namespaced
  names:
    plural: databases
    singular: database
    kind: Database
    shortNames: [db]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - {name: Engine, type: string, jsonPath: .spec.engine}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [engine]
            properties:
              engine: {type: string, enum: [postgres, mysql]}
              replicas: {type: integer, minimum: 1, default: 1}
              storage:
                type: object
                properties:
                  size: {type: string}
                  classes:
                    type: array
                    items:
                      type: object
                      properties:
                        name: {type: string}
                        weight: {type: integer}
          status:
            type: object
            properties:
              phase: {type: string}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
`;

const DATABASE = `apiVersion: ops.example.com/v1
kind: Database
metadata:
  name: orders
spec:
  engine: postgres
  storage:
    size: 10Gi
    classes: [{name: fast, weight: 3}]
`;

/** The key the log and the history API name the object by. */
const KEY = 'Database.ops.example.com/shop/orders';

type Database = KubeObject & { spec: { engine?: string; replicas?: number; storage?: { size?: string } }; status?: { phase?: string } };
type ReplayResult = Extract<ReplayLine, { type: 'result' }>;

describeOnBothLogs('history, get --at, diff, why, audit and replay of custom objects', (adapter) => {
  const harness = useKubectlCluster(adapter, 'e2e-crd-history', {}, { kubectlTimeoutMs: 90_000 });
  const { expectOk, file, waitUntil } = harness;
  const cli = (...args: string[]) => logplane(harness.cluster.kubeconfig, args);
  const database = (object: KubeObject | null | undefined): Database | undefined => ((object as { kind?: string } | null | undefined)?.kind === 'Database' ? (object as Database) : undefined);
  /** The positions `history` printed for the creation, the spec change and the status write. */
  let created = '';
  let specChanged = '';
  let statusWritten = '';

  it('applies the CRD, then creates a custom object, changes its spec and writes its status through /status', async () => {
    expect(await expectOk('apply', '-f', file('crd.yaml', CRD))).toBe('customresourcedefinition.apiextensions.k8s.io/databases.ops.example.com created\n');
    await expectOk('wait', '--for', 'condition=Established', 'crd/databases.ops.example.com', '--timeout=30s');
    await expectOk('create', 'namespace', 'shop');
    expect(await expectOk('apply', '-n', 'shop', '-f', file('db.yaml', DATABASE))).toBe('database.ops.example.com/orders created\n');
    await expectOk('patch', 'database', 'orders', '-n', 'shop', '--type=merge', '-p', '{"spec":{"replicas":3}}');
    await expectOk('patch', 'database', 'orders', '-n', 'shop', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Ready","conditions":[{"type":"Ready","status":"True"}]}}');
    await waitUntil('the Database is Ready', (view) => database(view.get(KEY))?.status?.phase === 'Ready');
  });

  it('history lists every version with its decoded fields and diffs', async () => {
    const { versions } = okJson<HistoryReply>(await cli('history', 'database/orders', '-n', 'shop', '-o', 'json'));
    const byAdmin = versions.filter((v) => v.actor.type === 'user' && v.actor.name === 'admin');
    expect(byAdmin.map((v) => `${v.eventType} ${v.verdict.type}`)).toEqual(['CustomObjectCreated accepted', 'CustomObjectUpdated accepted', 'CustomObjectUpdated accepted']);
    const objects = byAdmin.map((v) => database(v.object));
    expect(objects.map((o) => [o?.apiVersion, o?.metadata.name, o?.metadata.namespace])).toEqual(Array(3).fill(['ops.example.com/v1', 'orders', 'shop']));
    expect(objects.map((o) => o?.spec.engine)).toEqual(['postgres', 'postgres', 'postgres']);
    expect(objects.map((o) => o?.spec.replicas)).toEqual([1, 3, 3]);
    expect(objects.map((o) => o?.spec.storage?.size)).toEqual(['10Gi', '10Gi', '10Gi']);
    expect(objects.map((o) => o?.status?.phase)).toEqual([undefined, undefined, 'Ready']);
    expect(byAdmin[1]!.diff).toContainEqual({ type: 'changed', path: 'spec.replicas', from: 1, to: 3 });
    expect(byAdmin[2]!.diff).toContainEqual({ type: 'added', path: 'status', value: { phase: 'Ready', conditions: [{ type: 'Ready', status: 'True' }] } });
    [created, specChanged, statusWritten] = byAdmin.map((v) => v.position) as [string, string, string];
    for (const position of [created, specChanged, statusWritten]) expect(position).toMatch(/^\d+\.\d+$/);

    // The text table, through the short name and the group-qualified plural as well.
    for (const reference of ['database/orders', 'db/orders', 'databases.ops.example.com/orders']) {
      const text = ok(await cli('history', reference, '-n', 'shop'));
      expect(text).toMatch(new RegExp(`^${created.replace('.', '\\.')}\\s+\\S+\\s+user:admin\\s+CustomObjectCreated\\s+accepted$`, 'm'));
      expect(text).toContain('+ spec.engine: postgres');
      expect(text).toContain('+ spec.storage.classes[0].name: fast');
      expect(text).toContain('~ spec.replicas: 1 → 3');
      expect(text).toContain('+ status.phase: Ready');
    }
  });

  it('get --at shows the object as it was at an earlier position, and as a table', async () => {
    const atCreation = okJson<Database>(await cli('get', 'database', 'orders', '-n', 'shop', '--at', created, '-o', 'json'));
    expect(atCreation).toMatchObject({ apiVersion: 'ops.example.com/v1', kind: 'Database', metadata: { name: 'orders', namespace: 'shop' }, spec: { engine: 'postgres', replicas: 1 } });
    expect(atCreation.status).toBeUndefined();
    const atSpecChange = okJson<Database>(await cli('get', 'db', 'orders', '-n', 'shop', '--at', specChanged, '-o', 'json'));
    expect(atSpecChange.spec.replicas).toBe(3);
    expect(atSpecChange.status).toBeUndefined();
    const atStatus = okJson<Database>(await cli('get', 'db', 'orders', '-n', 'shop', '--at', statusWritten, '-o', 'json'));
    expect(atStatus.status?.phase).toBe('Ready');
    // Listed at that moment, with the CRD's printer columns (which replace the default Age), as the server's Table has them now.
    expect(ok(await cli('get', 'databases', '-n', 'shop', '--at', created))).toMatch(/^NAME\s+ENGINE\s+REPLICAS\norders\s+postgres\s+1\n$/);
    expect(ok(await cli('get', 'databases', '-n', 'shop', '--at', specChanged))).toMatch(/^orders\s+postgres\s+3$/m);
    expect(ok(await cli('get', 'databases', '-n', 'shop'))).toMatch(/^NAME\s+ENGINE\s+REPLICAS\norders\s+postgres\s+3\n$/);
    // Before the creation the object does not exist.
    const before = await cli('get', 'database', 'orders', '-n', 'shop', '--at', `${Number(created.split('.')[0]) - 1}.${created.split('.')[1]}`);
    expect(before.code).not.toBe(0);
    expect(before.stderr).toContain('databases.ops.example.com "orders" not found at position');
  });

  it('diff shows the custom object changed since its creation, field by field', async () => {
    const reply = okJson<DiffReply>(await cli('diff', '--from', created, '-o', 'json'));
    const change = reply.changed.find((c) => database(c.after)?.metadata.name === 'orders');
    expect(change, JSON.stringify(reply)).toBeDefined();
    expect(database(change!.before)?.spec.replicas).toBe(1);
    expect(database(change!.after)?.spec.replicas).toBe(3);
    expect(change!.diff).toContainEqual({ type: 'changed', path: 'spec.replicas', from: 1, to: 3 });
    expect(change!.diff).toContainEqual({ type: 'added', path: 'status', value: { phase: 'Ready', conditions: [{ type: 'Ready', status: 'True' }] } });
    const text = ok(await cli('diff', '--from', created));
    expect(text).toMatch(/^~ Database shop\/orders$/m);
    expect(text).toContain('~ spec.replicas: 1 → 3');
    // From before the creation it is a created object, with its fields.
    const fromStart = okJson<DiffReply>(await cli('diff', '--from', 'desired/0/0', '--to', specChanged, '-o', 'json'));
    const made = fromStart.created.find((o) => database(o) !== undefined);
    expect(database(made)?.spec).toMatchObject({ engine: 'postgres', replicas: 3, storage: { size: '10Gi' } });
  });

  it('why follows the custom object back to the requests of user "admin"', async () => {
    const { chains } = okJson<WhyReply>(await cli('why', 'db/orders', '-n', 'shop', '-o', 'json'));
    const links = chains.flat();
    expect(links.length).toBeGreaterThan(0);
    for (const chain of chains) expect(chain.at(-1)?.event.causationId ?? null, 'every chain ends at a root event').toBeNull();
    expect(links.every((link) => link.event.key === KEY && link.event.actor.name === 'admin')).toBe(true);
    expect(links.map((link) => link.event.eventType).sort()).toEqual(['CustomObjectCreated', 'CustomObjectUpdated']);
    expect(links.map((link) => link.summary).sort()).toEqual(['Database.ops.example.com shop/orders created by user "admin"', 'Database.ops.example.com shop/orders updated by user "admin"']);
    const text = ok(await cli('why', 'database/orders', '-n', 'shop'));
    expect(text.split('\n')[0]).toBe('Database.ops.example.com shop/orders');
    // Each write with the field managers it recorded, if any (` as kubectl-client-side-apply (Update)`), then its time and position.
    expect(text).toMatch(new RegExp(`^  ← updated by user "admin"( as [^[]+)?  \\[\\S+ ${statusWritten.replace('.', '\\.')}\\]$`, 'm'));
    expect(text).toMatch(new RegExp(`^  ← applied by user "admin"( as [^[]+)?  \\[\\S+ ${created.replace('.', '\\.')}\\]$`, 'm'));
  });

  it('audit lists the writes of the custom object, and filters by its kind', async () => {
    const { events } = okJson<AuditReply>(await cli('audit', '--kind', 'database', '-o', 'json'));
    expect(events.map((e) => `${e.eventType} ${e.key} ${e.position}`)).toEqual([
      `CustomObjectUpdated ${KEY} ${statusWritten}`,
      `CustomObjectUpdated ${KEY} ${specChanged}`,
      `CustomObjectCreated ${KEY} ${created}`,
    ]);
    expect(okJson<AuditReply>(await cli('audit', '--kind', 'db', '--since', created, '-o', 'json')).events).toHaveLength(2);
    const text = ok(await cli('audit', '--user', 'admin'));
    expect(text).toMatch(new RegExp(`^${created.replace('.', '\\.')}\\s+\\S+\\s+user:admin\\s+CustomObjectCreated\\s+Database\\.ops\\.example\\.com/shop/orders\\s+accepted$`, 'm'));
  });

  it('serves the same through the /logplane/v1 routes', async () => {
    const client = clusterClient(harness.cluster.kubeconfig);
    const history = await client.get<HistoryReply>(`/logplane/v1/history/${KEY}`);
    expect(history.versions.filter((v) => v.actor.name === 'admin').map((v) => database(v.object)?.spec.replicas)).toEqual([1, 3, 3]);
    const at = await client.get<AtReply>('/logplane/v1/at', { at: created, kind: 'Database.ops.example.com', namespace: 'shop' });
    expect(at.objects.map((o) => [o.metadata.name, database(o)?.spec.replicas])).toEqual([['orders', 1]]);
    // Without a kind: every object of the namespace then, custom ones among them.
    const all = await client.get<AtReply>('/logplane/v1/at', { at: specChanged, namespace: 'shop' });
    expect(all.objects.filter((o) => database(o) !== undefined).map((o) => database(o)?.spec.replicas)).toEqual([3]);
    const bulk = await client.get<{ items: { key: string; versions: HistoryReply['versions'] }[] }>('/logplane/v1/history', { namespace: 'shop' });
    const item = bulk.items.find((i) => i.key === KEY);
    expect(item?.versions.map((v) => database(v.object)?.status?.phase ?? database(v.object)?.spec.replicas)).toEqual([1, 3, 'Ready']);
    const why = await client.get<WhyReply>(`/logplane/v1/why/${KEY}`);
    expect(why.chains.flat().map((link) => link.event.eventType)).toContain('CustomObjectCreated');
    const audit = await client.get<AuditReply>('/logplane/v1/audit', { kind: 'Database.ops.example.com' });
    expect(audit.events).toHaveLength(3);
  });

  it('replays the log from offset 0 to the live state hash', async () => {
    const result = okJson<ReplayResult>(await cli('replay', '-o', 'json'));
    expect(result.liveStateHash).toMatch(/^\w+$/);
    expect(result.stateHash).toBe(result.liveStateHash);
    const comparison = await replayToLive(harness.cluster);
    expect(comparison.liveHash).toBeDefined();
    expect(comparison.replayHash).toBe(comparison.liveHash);
  });

  it('keeps the history of the custom object once the CRD and its objects are deleted', async () => {
    expect(await expectOk('delete', 'crd', 'databases.ops.example.com', '--timeout=60s')).toBe('customresourcedefinition.apiextensions.k8s.io "databases.ops.example.com" deleted\n');
    const { versions } = okJson<HistoryReply>(await cli('history', 'databases.ops.example.com/orders', '-n', 'shop', '-o', 'json'));
    expect(versions.at(-1)?.change).toBe('DELETED');
    expect(versions.filter((v) => v.actor.name === 'admin').map((v) => database(v.object)?.spec.replicas)).toEqual([1, 3, 3]);
    expect(okJson<Database>(await cli('get', 'databases.ops.example.com', 'orders', '-n', 'shop', '--at', specChanged, '-o', 'json')).spec.replicas).toBe(3);
    const result = okJson<ReplayResult>(await cli('replay', '-o', 'json'));
    expect(result.stateHash).toBe(result.liveStateHash);
  });
});
