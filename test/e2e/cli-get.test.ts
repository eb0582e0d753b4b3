/**
 * `logplane get` against a real apiserver prints what the real kubectl (v1.32) prints: for
 * every resource the server's discovery lists (so a kind served later is covered without a
 * change here), by plural, singular, short name and kind, with `-A`, `-o wide`,
 * `--show-labels`, `--no-headers`, `get all`, several types at once and named objects. Both
 * read the server's meta.k8s.io Tables; the CLI knows no kind.
 *
 * Ages are cells the server computes at each request: the outputs are compared exactly when
 * a second try agrees, else with the age cells (and the padding they change) left out.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../../apiserver/testing.ts';
import { createClient, createDiscovery, type DiscoveredResource } from '../../cli/client.ts';
import { useKubectlApiServer } from './kubectl-harness.ts';

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const ROOT = join(import.meta.dirname, '..', '..');

const MANIFESTS = `apiVersion: v1
kind: Namespace
metadata:
  name: team-a
---
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels:
    node-role.kubernetes.io/worker: ""
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: lone
  namespace: team-a
spec:
  replicas: 0
  selector:
    matchLabels: {app: lone}
  template:
    metadata:
      labels: {app: lone}
    spec:
      containers:
      - name: lone
        image: busybox:1.36
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 8080
---
apiVersion: v1
kind: Endpoints
metadata:
  name: manual
subsets:
- addresses:
  - ip: 127.100.0.9
  ports:
  - port: 8080
---
apiVersion: v1
kind: Pod
metadata:
  name: hello
  labels: {app: hello, tier: front}
spec:
  nodeName: node-a
  containers:
  - name: hello
    image: busybox:1.36
---
apiVersion: v1
kind: Pod
metadata:
  name: other
  namespace: team-a
spec:
  containers:
  - name: other
    image: busybox:1.36
`;

describe('logplane get prints what kubectl prints', () => {
  const server = useKubectlApiServer('embedded', 'cli-get-e2e', { namespaceController: false });
  const { dir, kubeconfig } = server;
  let served: readonly DiscoveredResource[] = [];

  const run = (command: string, args: readonly string[], extra: readonly string[]): Promise<Result> =>
    new Promise((resolve) => {
      execFile(command, [...extra, ...args, '--kubeconfig', kubeconfig], { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  const kubectl = (...args: string[]): Promise<Result> => run('kubectl', args, ['--cache-dir', join(dir, 'cache')]);
  const logplane = (...args: string[]): Promise<Result> => run(process.execPath, args, [join(ROOT, 'bin', 'logplane.mjs')]);

  /** Runs `get ARGS` with both until they agree (ages may tick between the two requests); returns both. */
  const both = async (...args: string[]): Promise<{ ours: Result; theirs: Result }> => {
    let last: { ours: Result; theirs: Result } | undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
      const [ours, theirs] = await Promise.all([logplane('get', ...args), kubectl('get', ...args)]);
      last = { ours, theirs };
      if (ours.stdout === theirs.stdout && ours.stderr === theirs.stderr && ours.code === theirs.code) return last;
    }
    return last!;
  };

  /**
   * The output with its age cells (`45s`, `3m20s`, `2d3h`) replaced and runs of spaces
   * collapsed: the two commands start seconds apart (tsx's startup on a loaded machine), so
   * the server computes different ages for them, and a wider age widens its column.
   */
  const withoutAges = (text: string): string => text.replace(/(^|\s)\d+[smhdy](\d+[smh])?(?=\s|$)/gm, '$1<age>').replace(/ +/g, ' ');

  const expectSame = async (...args: string[]): Promise<string> => {
    const { ours, theirs } = await both(...args);
    if (ours.stdout !== theirs.stdout) {
      expect({ args, stdout: withoutAges(ours.stdout) }).toEqual({ args, stdout: withoutAges(theirs.stdout) });
    }
    expect({ args, stderr: ours.stderr, code: ours.code }).toEqual({ args, stderr: theirs.stderr, code: theirs.code });
    return ours.stdout;
  };

  beforeAll(async () => {
    const manifests = join(dir, 'all.yaml');
    writeFileSync(manifests, MANIFESTS);
    const created = await kubectl('create', '-f', manifests);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const patched = await kubectl(
      'patch', 'node', 'node-a', '--subresource=status', '--type=merge',
      '-p', JSON.stringify({ status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v1.32.0-logplane' }, addresses: [{ type: 'InternalIP', address: '127.0.0.1' }] } }),
    );
    expect(patched.code).toBe(0);
    served = await createDiscovery(createClient({ server: server.api.server.url, token: ADMIN_TOKEN, certificateAuthority: server.ca })).resources();
  }, 120_000);

  // Every resource in one command line (as `kubectl get a,b,c` takes them): one process
  // start per comparison, not one per resource, with 44 kinds served.
  it('prints every served resource as kubectl does, in every namespace and wide', async () => {
    const listable = served.filter((r) => r.verbs.includes('list'));
    expect(listable.map((r) => r.kind)).toEqual(expect.arrayContaining(['Pod', 'Service', 'Endpoints', 'Deployment', 'ReplicaSet', 'Node', 'Namespace', 'ConfigMap', 'Job', 'ClusterRole']));
    const names = listable.map((r) => (r.group === '' ? r.plural : `${r.plural}.${r.group}`)).join(',');
    await expectSame(names);
    await expectSame(names, '-A');
    await expectSame(names, '-o', 'wide', '-A');
  }, 600_000);

  it('resolves singular names, short names, kinds and group-qualified forms as kubectl does', async () => {
    const listable = served.filter((x) => x.verbs.includes('list'));
    const suffix = (r: DiscoveredResource): string => (r.group === '' ? '' : `.${r.group}`);
    await expectSame(listable.map((r) => `${r.singular}${suffix(r)}`).join(','), '-A', '--no-headers');
    await expectSame(listable.flatMap((r) => r.shortNames).join(','), '-A', '--no-headers');
    // Kind names alone are ambiguous across groups only for Event (core and events.k8s.io); core's is listed.
    await expectSame(listable.map((r) => r.kind).join(','), '-A', '--no-headers');
    const pods = await expectSame('po');
    expect(pods).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\nhello\s+0\/1\s+Pending\s+0\s+\S+\n$/);
    expect(await expectSame('deploy.apps', '-o', 'wide')).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR\nweb\s+0\/2\s+0\s+0\s+\S+\s+web\s+nginx:1\.27\s+app=web\n$/);
    await expectSame('deployments.v1.apps');
    // Unknown types: the same error.
    const unknown = await both('widgets');
    expect(unknown.ours.stderr).toBe(unknown.theirs.stderr);
    expect(unknown.ours.stderr).toBe('error: the server doesn\'t have a resource type "widgets"\n');
  }, 600_000);

  it('prints get all, several types, labels and named objects as kubectl does', async () => {
    const all = await expectSame('all');
    expect(all).toMatch(/^pod\/hello\s/m);
    expect(all).toMatch(/^service\/web\s/m);
    expect(all).toMatch(/^deployment\.apps\/web\s/m);
    await expectSame('all', '-A');
    await expectSame('all', '-A', '--no-headers');
    await expectSame('pods,svc,no', '-A', '--show-labels');
    await expectSame('pods', '--show-labels', '-o', 'wide');
    await expectSame('po', 'hello');
    await expectSame('deploy/web', 'svc/web', 'po/hello');
    await expectSame('rs', '-n', 'team-a', '-o', 'wide');
    await expectSame('pods', '-l', 'app=hello');
    await expectSame('svc', '-n', 'team-a');
  }, 600_000);

  it('prints -o name, yaml and json of what the server sends', async () => {
    await expectSame('all', '-o', 'name');
    const ours = await logplane('get', 'deploy', 'web', '-o', 'json');
    const theirs = await kubectl('get', 'deploy', 'web', '-o', 'json');
    expect(JSON.parse(ours.stdout)).toEqual(JSON.parse(theirs.stdout));
    expect(JSON.parse(ours.stdout).metadata.managedFields).toBeUndefined();
    const oursManaged = JSON.parse((await logplane('get', 'deploy', 'web', '-o', 'json', '--show-managed-fields')).stdout);
    expect(oursManaged).toEqual(JSON.parse((await kubectl('get', 'deploy', 'web', '-o', 'json', '--show-managed-fields')).stdout));
    expect(oursManaged.metadata.managedFields.length).toBeGreaterThan(0);
  }, 120_000);
});
