/**
 * Aggregated discovery as kube-apiserver 1.32 serves it: the same groups, versions and
 * resources as the legacy documents, in one APIGroupDiscoveryList, chosen by `Accept`; and
 * the real kubectl uses it (two discovery requests, no per-group-version fetches).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../log/port.ts';
import { aggregatedVersionOf } from './aggregated-discovery.ts';
import { generateSelfSignedCertificate, writeKubeconfig } from './index.ts';
import { ADMIN_TOKEN, openTestLog, startTestApiServer, tempDir, type TestApiServer } from './testing.ts';

const V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const KUBECTL_ACCEPT = `${V2},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json`;

describe('aggregatedVersionOf', () => {
  it.each([
    [KUBECTL_ACCEPT, 'v2'],
    ['application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json', 'v2beta1'],
    ['application/json', undefined],
    ['application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList', undefined],
    ['application/json;g=other.io;v=v2;as=APIGroupDiscoveryList', undefined],
    [undefined, undefined],
  ])('reads %j as %j', (accept, version) => {
    expect(aggregatedVersionOf(accept)).toBe(version);
  });
});

describe('aggregated discovery', () => {
  const temp = tempDir('aggregated-discovery-');
  const tlsTemp = tempDir('aggregated-discovery-tls-');
  let log: EventLog;
  let api: TestApiServer;
  // kubectl sends its token over TLS only: a second server for it.
  let tlsLog: EventLog;
  let tlsApi: TestApiServer;
  const kubeconfig = join(tlsTemp.dir, 'kubeconfig');

  beforeAll(async () => {
    log = await openTestLog('embedded', { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
    tlsLog = await openTestLog('embedded', { dir: tlsTemp.dir });
    const tls = generateSelfSignedCertificate();
    tlsApi = await startTestApiServer(tlsLog, tlsTemp.dir, { tls });
    writeKubeconfig(kubeconfig, { server: tlsApi.server.url, token: ADMIN_TOKEN, certificateAuthority: tls.cert });
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    await tlsApi?.close();
    await tlsLog?.close();
    temp.remove();
    tlsTemp.remove();
  });

  const get = async (path: string, accept: string) => {
    const response = await api.client.request('GET', path, { headers: { Accept: accept } });
    return { type: response.headers.get('content-type'), body: response.body as Record<string, unknown> };
  };

  it('answers /apis with every group and version the legacy documents list, resources and subresources included', async () => {
    const aggregated = await get('/apis', KUBECTL_ACCEPT);
    expect(aggregated.type).toBe(V2);
    expect(aggregated.body).toMatchObject({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2' });
    const items = aggregated.body['items'] as { metadata: { name: string }; versions: { version: string; resources: Record<string, unknown>[] }[] }[];
    const legacy = (await get('/apis', 'application/json')).body as { groups: { name: string; versions: { version: string }[] }[] };
    expect(items.map((item) => [item.metadata.name, item.versions.map((v) => v.version)])).toEqual(legacy.groups.map((g) => [g.name, g.versions.map((v) => v.version)]));
    for (const item of items) {
      for (const version of item.versions) {
        const resources = ((await get(`/apis/${item.metadata.name}/${version.version}`, 'application/json')).body['resources'] as { name: string }[]).map((r) => r.name);
        const flattened = version.resources.flatMap((resource) => [
          resource['resource'] as string,
          ...((resource['subresources'] as { subresource: string }[] | undefined) ?? []).map((sub) => `${String(resource['resource'])}/${sub.subresource}`),
        ]);
        expect(flattened.sort(), `${item.metadata.name}/${version.version}`).toEqual([...resources].sort());
      }
    }
    const apps = items.find((item) => item.metadata.name === 'apps')!.versions[0]!.resources.find((r) => r['resource'] === 'deployments');
    expect(apps).toMatchObject({
      responseKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      scope: 'Namespaced',
      singularResource: 'deployment',
      shortNames: ['deploy'],
      subresources: expect.arrayContaining([{ subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] }]),
    });
  });

  it('answers /api with the core group, and the legacy documents to a client that does not ask', async () => {
    const core = await get('/api', 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList');
    expect(core.type).toBe('application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList');
    const [group] = core.body['items'] as { metadata: { name?: string }; versions: { version: string; resources: { resource: string; scope: string }[] }[] }[];
    expect(group!.metadata.name).toBeUndefined();
    expect(group!.versions[0]!.resources).toContainEqual(expect.objectContaining({ resource: 'nodes', scope: 'Cluster' }));
    expect((await get('/api', 'application/json')).body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
  });

  it('is what kubectl discovers with: two requests, then api-resources lists every version', async () => {
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(tlsTemp.dir, 'cache'), 'api-resources', '-v=6'], { timeout: 60_000 }, (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${err}`)) : resolve({ stdout: out, stderr: err }),
      );
    });
    expect(stdout).toMatch(/^horizontalpodautoscalers\s+hpa\s+autoscaling\/v2\s+true\s+HorizontalPodAutoscaler$/m);
    expect(stdout).toMatch(/^events\s+ev\s+events\.k8s\.io\/v1\s+true\s+Event$/m);
    const requested = [...stderr.matchAll(/GET https?:\/\/[^/]+(\/[^ ?]*)/g)].map((match) => match[1]);
    expect(requested).toEqual(['/api', '/apis']);
  });
});
