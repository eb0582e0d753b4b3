/**
 * Issue 15's acceptance, with the real kubectl (v1.32) on both logs, for every stored kind of
 * the kind registry and events.k8s.io/v1 Event: `kubectl apply` of a manifest per kind
 * (`manifests/every-kind/`, setting as many fields as kube's validation allows together, as
 * users write them) gives back every field applied through `get -o json` (with kube's
 * normalisations: canonical quantities, Secret stringData folded into data, defaults added);
 * `kubectl explain` names every kind, its group and version; `kubectl delete` removes an object
 * of every kind; and a namespace deletion leaves no object of any namespaced resource the
 * server lists.
 */
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { describeOnBothLogs } from '../../apiserver/testing.ts';
import { STORED_KINDS } from '../../schemas/kinds/registry.ts';
import { asServed, useKubectlApiServer, type KubeObject } from './kubectl-harness.ts';

type Doc = KubeObject & { apiVersion: string };
interface Manifest {
  readonly file: string;
  readonly path: string;
  readonly text: string;
  readonly docs: readonly Doc[];
}

const EVERY_KIND = new URL('./manifests/every-kind/', import.meta.url).pathname;
const NAMESPACE = 'every-kind';

/** The manifests of one folder, by file name; YAML 1.1 as kubectl reads it (`0440` is octal). */
const manifests = (folder: string): Manifest[] =>
  readdirSync(join(EVERY_KIND, folder))
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => {
      const path = join(EVERY_KIND, folder, file);
      const text = readFileSync(path, 'utf8');
      return { file, path, text, docs: parseAllDocuments(text, { version: '1.1' }).map((doc) => doc.toJSON() as Doc) };
    });

const clusterScoped = manifests('cluster');
const namespaced = manifests('namespaced');
const everyManifest = [...clusterScoped, ...namespaced];
const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

const clusterDoc = (kind: string, name: string): Doc | undefined =>
  clusterScoped.flatMap((manifest) => manifest.docs).find((doc) => doc.kind === kind && doc.metadata.name === name);

/**
 * kube 1.32's Priority and RuntimeClass admission of a new Pod, from the cluster-scoped
 * manifests' classes: priority and preemptionPolicy from its PriorityClass (0 and
 * PreemptLowerPriority without one: the manifests have no globalDefault class), overhead,
 * nodeSelector and tolerations (those it does not have yet) from its RuntimeClass.
 */
const admitPod = (pod: Doc): void => {
  const spec = pod['spec'] as Record<string, any>;
  const priorityClass = typeof spec['priorityClassName'] === 'string' ? clusterDoc('PriorityClass', spec['priorityClassName']) : undefined;
  spec['priority'] = priorityClass?.['value'] ?? 0;
  spec['preemptionPolicy'] = priorityClass?.['preemptionPolicy'] ?? 'PreemptLowerPriority';
  const runtimeClass = typeof spec['runtimeClassName'] === 'string' ? clusterDoc('RuntimeClass', spec['runtimeClassName']) : undefined;
  if (!runtimeClass) return;
  const overhead = (runtimeClass['overhead'] as { podFixed?: Record<string, string> } | undefined)?.podFixed;
  if (overhead) spec['overhead'] = overhead;
  const scheduling = runtimeClass['scheduling'] as { nodeSelector?: Record<string, string>; tolerations?: unknown[] } | undefined;
  if (scheduling?.nodeSelector) spec['nodeSelector'] = { ...spec['nodeSelector'], ...scheduling.nodeSelector };
  const tolerations: unknown[] = spec['tolerations'] ?? [];
  for (const toleration of scheduling?.tolerations ?? []) {
    if (!tolerations.some((kept) => JSON.stringify(kept) === JSON.stringify(toleration))) tolerations.push(toleration);
  }
  if (tolerations.length > 0) spec['tolerations'] = tolerations;
};

/** kube's StorageObjectInUseProtection admission: its finalizer on a new claim or volume, once. */
const protect = (doc: Doc, finalizer: string): void => {
  const metadata = doc.metadata as { finalizers?: string[] };
  if (!(metadata.finalizers ?? []).includes(finalizer)) metadata.finalizers = [...(metadata.finalizers ?? []), finalizer];
};

/** kube's NormalizeDataSources on a claim create: whichever of dataSource and dataSourceRef is set is copied into the other. */
const mirrorDataSources = (claim: Doc): void => {
  const spec = claim['spec'] as { dataSource?: object; dataSourceRef?: { namespace?: string } };
  if (spec.dataSource && !spec.dataSourceRef) spec.dataSourceRef = { ...spec.dataSource };
  else if (spec.dataSourceRef && !spec.dataSource) spec.dataSource = { ...spec.dataSourceRef };
};

/** What kube gives back for `doc` as applied: the harness's normalisation, plus the admission of the classes and claims these manifests define. */
const expected = (doc: Doc): Doc => {
  const out = asServed(doc);
  if (out.kind === 'Pod') admitPod(out);
  if (out.kind === 'PersistentVolumeClaim') {
    protect(out, 'kubernetes.io/pvc-protection');
    mirrorDataSources(out);
  }
  if (out.kind === 'PersistentVolume') protect(out, 'kubernetes.io/pv-protection');
  return out;
};

describeOnBothLogs('kubectl with an object of every stored kind', (adapter) => {
  const { kubectl, expectOk, dir } = useKubectlApiServer(adapter, 'kubectl-every-kind', {
    kubectlTimeoutMs: 90_000,
    // A deleted CRD is held by its cleanup finalizer until this controller releases it, as apiextensions' does.
    controllers: ['customresourcedefinition'],
  });
  const scopeArgs = (manifest: Manifest): string[] => (namespaced.includes(manifest) ? ['-n', NAMESPACE] : []);

  it('has a manifest for every stored kind of the registry and for events.k8s.io/v1 Event', () => {
    const applied = new Set(everyManifest.flatMap((manifest) => manifest.docs.map((doc) => `${groupOf(doc.apiVersion)}/${doc.kind}`)));
    for (const kind of [...STORED_KINDS.map((stored) => `${stored.group}/${stored.kind}`), 'events.k8s.io/Event']) expect(applied, kind).toContain(kind);
    expect(STORED_KINDS.length).toBeGreaterThanOrEqual(44);
  });

  it('applies the cluster-scoped manifests, then the namespaced ones', async () => {
    const created = `${await expectOk('apply', '-f', join(EVERY_KIND, 'cluster'))}${await expectOk('apply', '-n', NAMESPACE, '-f', join(EVERY_KIND, 'namespaced'))}`;
    for (const doc of everyManifest.flatMap((manifest) => manifest.docs)) expect(created).toMatch(new RegExp(`/${doc.metadata.name.replaceAll('.', '\\.')} created`));
  });

  it.each(everyManifest.map((manifest) => [manifest.file, manifest] as const))('gives back every field of %s, as JSON and as YAML', async (_file, manifest) => {
    const got = JSON.parse(await expectOk('get', ...scopeArgs(manifest), '-f', manifest.path, '-o', 'json')) as Doc & { items?: Doc[] };
    expect(parse(await expectOk('get', ...scopeArgs(manifest), '-f', manifest.path, '-o', 'yaml'))).toEqual(got);
    const objects = got.items ?? [got];
    expect(objects).toHaveLength(manifest.docs.length);
    manifest.docs.forEach((doc, index) => {
      expect.soft(objects[index], `${doc.kind}/${doc.metadata.name}`).toMatchObject(expected(doc));
      expect.soft(objects[index]?.metadata).toMatchObject({ uid: expect.any(String), resourceVersion: expect.any(String), creationTimestamp: expect.any(String) });
    });
  });

  it('explains every kind with its group and version, and nested fields', async () => {
    const explained = [...STORED_KINDS.map((kind) => ({ group: kind.group, kind: kind.kind, plural: kind.plural })), { group: 'events.k8s.io', kind: 'Event', plural: 'events' }];
    for (const { group, kind, plural } of explained) {
      const apiVersion = everyManifest.flatMap((manifest) => manifest.docs).find((doc) => doc.kind === kind && groupOf(doc.apiVersion) === group)?.apiVersion;
      expect(apiVersion, `${group}/${kind}`).toBeDefined();
      const text = await expectOk('explain', plural, `--api-version=${apiVersion}`);
      expect(text, `${group}/${kind}`).toMatch(new RegExp(`^KIND:\\s+${kind}$`, 'm'));
      expect(text, `${group}/${kind}`).toMatch(new RegExp(`^VERSION:\\s+${apiVersion?.split('/').at(-1)}$`, 'm'));
      if (group) expect(text, `${group}/${kind}`).toMatch(new RegExp(`^GROUP:\\s+${group.replaceAll('.', '\\.')}$`, 'm'));
      expect(text, `${group}/${kind}`).toMatch(/^DESCRIPTION:/m);
      expect(text, `${group}/${kind}`).toMatch(/^\s+metadata\s+<ObjectMeta>/m);
    }
    const nested: [string, RegExp][] = [
      ['pod.spec.topologySpreadConstraints.matchLabelKeys', /FIELD: matchLabelKeys <\[\]string>/],
      ['pod.spec.containers.livenessProbe.grpc.service', /FIELD: service <string>/],
      ['jobs.spec.podFailurePolicy.rules.onExitCodes.operator', /GROUP:\s+batch[\s\S]*FIELD: operator <string>[\s\S]*NotIn/],
      ['hpa.spec.behavior.scaleUp.policies', /GROUP:\s+autoscaling[\s\S]*VERSION:\s+v2[\s\S]*FIELD: policies <\[\]HPAScalingPolicy>/],
      ['validatingadmissionpolicies.spec.validations.messageExpression', /FIELD: messageExpression <string>/],
      ['csidrivers.spec.tokenRequests.audience', /GROUP:\s+storage\.k8s\.io[\s\S]*FIELD: audience <string>/],
      ['endpointslices.endpoints.hints.forZones', /FIELD: forZones <\[\]ForZone>/],
      ['statefulsets.spec.persistentVolumeClaimRetentionPolicy.whenScaled', /FIELD: whenScaled <string>/],
    ];
    for (const [field, text] of nested) expect(await expectOk('explain', field), field).toMatch(text);
  });

  it('removes every namespaced kind with its namespace', async () => {
    // A copy of every namespaced manifest in a namespace of its own (references to the namespace follow it).
    const doomed = 'every-kind-doomed';
    const copies = join(dir, 'doomed');
    mkdirSync(copies, { recursive: true });
    for (const manifest of namespaced) writeFileSync(join(copies, manifest.file), manifest.text.replaceAll(NAMESPACE, doomed));
    await expectOk('create', 'namespace', doomed);
    await expectOk('apply', '-n', doomed, '-f', copies);
    // Every namespaced resource the server lists, but the metrics API's: its pods are usage samples from node agents, not objects.
    const resources = (await expectOk('api-resources', '--namespaced=true', '--verbs=list', '-o', 'name'))
      .trim()
      .split('\n')
      .filter((resource) => !resource.endsWith('.metrics.k8s.io'));
    for (const kind of STORED_KINDS.filter((stored) => stored.scope === 'Namespaced')) expect(resources).toContain(kind.group ? `${kind.plural}.${kind.group}` : kind.plural);
    const listed = async (): Promise<string> => {
      const result = await kubectl('get', resources.join(','), '-n', doomed, '-o', 'name');
      expect(result.code, result.stderr).toBe(0);
      return result.stdout;
    };
    const before = (await listed()).trim().split('\n');
    const namespacedDocs = namespaced.flatMap((manifest) => manifest.docs);
    // Every object applied is listed (Events twice: as core and as events.k8s.io/v1).
    for (const doc of namespacedDocs) expect(before.some((line) => line.endsWith(`/${doc.metadata.name}`)), `${doc.kind}/${doc.metadata.name}`).toBe(true);

    expect(await expectOk('delete', 'namespace', doomed, '--timeout=60s')).toMatch(new RegExp(`namespace "${doomed}" deleted`));
    expect((await kubectl('get', 'namespace', doomed)).stderr).toMatch(/NotFound/);
    expect(await listed()).toBe('');
  });

  it('deletes an object of every kind', async () => {
    // Namespaced objects first, the namespace itself last (cluster-scoped files are sorted, so reverse puts dependents first).
    for (const manifest of [...namespaced, ...[...clusterScoped].reverse()]) {
      const deleted = await expectOk('delete', ...scopeArgs(manifest), '-f', manifest.path, '--timeout=60s');
      for (const doc of manifest.docs) expect(deleted, manifest.file).toMatch(new RegExp(`"${doc.metadata.name.replaceAll('.', '\\.')}" deleted`));
      const gone = await kubectl('get', ...scopeArgs(manifest), '-f', manifest.path, '-o', 'name');
      expect(gone.stdout, manifest.file).toBe('');
      expect(gone.stderr.match(/NotFound/g) ?? [], `${manifest.file}: ${gone.stderr}`).toHaveLength(manifest.docs.length);
    }
  });
});
