/**
 * The real kubectl (v1.32) against a logplane apiserver, on both logs: discovery, create,
 * apply, get (tables, -A, -o yaml, -w), status patches, scale, delete (which waits for the
 * DELETED watch event) and error messages, asserted on what kubectl prints.
 *
 * kubectl sends bearer tokens only over https, so the apiserver serves TLS with a
 * self-signed certificate that the generated kubeconfig trusts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { describeOnBothLogs } from '../../apiserver/testing.ts';
import { useKubectlApiServer, watchKubectl } from './kubectl-harness.ts';

const APP = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 80
`;

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: hello
  labels:
    app: hello
spec:
  containers:
  - name: hello
    image: busybox:1.36
    command: ["sh", "-c", "echo hello; sleep 3600"]
`;

const NODE = `apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels:
    node-role.kubernetes.io/worker: ""
`;

describeOnBothLogs('kubectl', (adapter) => {
  const { kubectl, file, dir, kubeconfig } = useKubectlApiServer(adapter, 'kubectl-e2e');

  it('lists the default namespaces', async () => {
    const result = await kubectl('get', 'namespaces');
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^NAME\s+STATUS\s+AGE\n/);
    for (const name of ['default', 'kube-node-lease', 'kube-public', 'kube-system']) {
      expect(result.stdout).toMatch(new RegExp(`^${name}\\s+Active\\s+\\d+s$`, 'm'));
    }
  });

  it('creates a Deployment and a Service with create -f', async () => {
    const result = await kubectl('create', '-f', file('app.yaml', APP));
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe('deployment.apps/web created\nservice/web created\n');
  });

  it('creates a pod and prints it with get -o yaml', async () => {
    expect((await kubectl('create', '-f', file('pod.yaml', POD))).stdout).toBe('pod/hello created\n');
    const result = await kubectl('get', 'pod', 'hello', '-o', 'yaml');
    expect(result.code).toBe(0);
    const pod = parseYaml(result.stdout);
    expect(pod).toMatchObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'hello', namespace: 'default', labels: { app: 'hello' }, generation: 1 },
      spec: { containers: [{ name: 'hello', image: 'busybox:1.36', command: ['sh', '-c', 'echo hello; sleep 3600'] }], restartPolicy: 'Always' },
      status: { phase: 'Pending' },
    });
    expect(pod.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(pod.metadata.resourceVersion).toMatch(/^\d+\.\d+$/);
  });

  it('shows pods, nodes, services and deployments of all namespaces', async () => {
    expect((await kubectl('create', '-f', file('node.yaml', NODE))).stdout).toBe('node/node-a created\n');
    const patched = await kubectl(
      'patch', 'node', 'node-a', '--subresource=status', '--type=merge',
      '-p', JSON.stringify({ status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v1.32.0-logplane' } } }),
    );
    expect(patched.stdout).toBe('node/node-a patched\n');
    const result = await kubectl('get', 'pods,nodes,svc,deploy', '-A');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const out = result.stdout;
    expect(out).toMatch(/^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/m);
    expect(out).toMatch(/^default\s+pod\/hello\s+0\/1\s+Pending\s+0\s+\d+s$/m);
    expect(out).toMatch(/^NAMESPACE\s+NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/m);
    expect(out).toMatch(/^\s+node\/node-a\s+Ready\s+worker\s+\d+s\s+v1\.32\.0-logplane$/m);
    expect(out).toMatch(/^NAMESPACE\s+NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$/m);
    expect(out).toMatch(/^default\s+service\/web\s+ClusterIP\s+127\.96\.\d+\.\d+\s+<none>\s+80\/TCP\s+\d+s$/m);
    expect(out).toMatch(/^NAMESPACE\s+NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$/m);
    expect(out).toMatch(/^default\s+deployment\.apps\/web\s+0\/2\s+0\s+0\s+\d+s$/m);
  });

  it('prints wide columns and labels', async () => {
    const result = await kubectl('get', 'pods', '-o', 'wide', '--show-labels');
    expect(result.stdout).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES\s+LABELS$/m);
    expect(result.stdout).toMatch(/^hello\s+0\/1\s+Pending\s+0\s+\d+s\s+<none>\s+<none>\s+<none>\s+<none>\s+app=hello$/m);
  });

  it('applies manifests: created, configured, unchanged', async () => {
    const manifest = (replicas: number) => APP.replace(/name: web/g, 'name: api').replace(/app: web/g, 'app: api').replace('replicas: 2', `replicas: ${replicas}`);
    const path = join(dir, 'api.yaml');
    writeFileSync(path, manifest(1));
    expect((await kubectl('apply', '-f', path)).stdout).toBe('deployment.apps/api created\nservice/api created\n');
    writeFileSync(path, manifest(3));
    const configured = await kubectl('apply', '-f', path);
    expect(configured).toMatchObject({ code: 0, stderr: '' });
    expect(configured.stdout).toBe('deployment.apps/api configured\nservice/api unchanged\n');
    expect((await kubectl('get', 'deploy', 'api', '-o', 'jsonpath={.spec.replicas}')).stdout).toBe('3');
    expect((await kubectl('apply', '-f', path)).stdout).toBe('deployment.apps/api unchanged\nservice/api unchanged\n');
    expect((await kubectl('scale', 'deploy', 'api', '--replicas=5')).stdout).toBe('deployment.apps/api scaled\n');
    expect((await kubectl('get', 'deploy', 'api', '-o', 'jsonpath={.spec.replicas}')).stdout).toBe('5');
    expect((await kubectl('delete', '-f', path)).stdout).toBe('deployment.apps "api" deleted\nservice "api" deleted\n');
  });

  it('runs imperative create commands, whose typed clients send protobuf', async () => {
    expect((await kubectl('create', 'namespace', 'team-a')).stdout).toBe('namespace/team-a created\n');
    const deployment = await kubectl('create', 'deployment', 'imperative', '--image=nginx:1.27', '--replicas=0', '--port=8080', '-n', 'team-a');
    expect(deployment).toMatchObject({ code: 0, stderr: '', stdout: 'deployment.apps/imperative created\n' });
    expect((await kubectl('create', 'service', 'clusterip', 'imperative', '--tcp=80:8080', '-n', 'team-a')).stdout).toBe('service/imperative created\n');
    const created = parseYaml((await kubectl('get', 'deploy', 'imperative', '-n', 'team-a', '-o', 'yaml')).stdout);
    expect(created.spec).toMatchObject({
      replicas: 0,
      selector: { matchLabels: { app: 'imperative' } },
      template: { spec: { containers: [{ name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 8080, protocol: 'TCP' }] }] } },
    });
    const service = parseYaml((await kubectl('get', 'svc', 'imperative', '-n', 'team-a', '-o', 'yaml')).stdout);
    expect(service.spec.ports).toEqual([{ name: '80-8080', port: 80, protocol: 'TCP', targetPort: 8080 }]);
    expect((await kubectl('delete', 'namespace', 'team-a')).stdout).toBe('namespace "team-a" deleted\n');
  });

  it('streams changes with get -w', async () => {
    const watch = watchKubectl(kubeconfig, join(dir, 'cache'), ['get', 'pod', 'hello', '-w']);
    const { seen } = watch;
    try {
      await seen(/^hello\s+0\/1\s+Pending\s+0\s+\d+s$/m);
      await kubectl('patch', 'pod', 'hello', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Running"}}');
      await seen(/^hello\s+0\/1\s+Running\s+0\s+\d+s$/m);
      expect(watch.output().match(/^NAME\s+READY/gm)).toHaveLength(1);
    } finally {
      watch.stop();
    }
  });

  it('shows kube-style errors', async () => {
    const invalid = await kubectl('create', '-f', file('bad.yaml', 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\nspec:\n  containers:\n  - name: c\n'));
    expect(invalid.code).not.toBe(0);
    expect(invalid.stderr).toContain('The Pod "bad" is invalid: spec.containers[0].image: Required value');
    const unknown = await kubectl('create', '-f', file('unknown.yaml', `${POD.replace('name: hello\n', 'name: strict\n')}  foo: bar\n`));
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('unknown field "spec.foo"');
    const duplicate = await kubectl('create', '-f', join(dir, 'pod.yaml'));
    expect(duplicate.stderr).toContain('Error from server (AlreadyExists): error when creating');
    expect(duplicate.stderr).toContain('pods "hello" already exists');
    const missing = await kubectl('get', 'deploy', 'nothing');
    expect(missing.stderr).toBe('Error from server (NotFound): deployments.apps "nothing" not found\n');
  });

  it('deletes with delete -f, waiting for the objects to go', async () => {
    const result = await kubectl('delete', '-f', join(dir, 'app.yaml'), '-f', join(dir, 'pod.yaml'));
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe('deployment.apps "web" deleted\nservice "web" deleted\npod "hello" deleted\n');
    const after = await kubectl('get', 'deploy,svc,pods');
    expect(after.stdout).toBe('');
    expect(after.stderr).toBe('No resources found in default namespace.\n');
  });
});
