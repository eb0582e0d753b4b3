/**
 * The Ingress controller as `logplane up` runs it by default: on free loopback ports
 * printed in the banner, serving an Ingress applied with the real kubectl to a real
 * process-runtime echo pod, reached with the real curl; `kubectl get ingress` shows the
 * address it wrote into the status. A bad `--ingress` value is refused before anything starts.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, freePort, kubectl, logplane, ok, startLogplane, tempDir, waitFor, type Daemon } from '../../test/e2e/process.ts';

const exec = promisify(execFile);

const MANIFEST = `apiVersion: v1
kind: Service
metadata: {name: echo, namespace: default}
spec:
  selector: {app: echo}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: echo-0, namespace: default, labels: {app: echo}}
spec:
  containers:
  - name: main
    image: logplane/echo:1
    ports: [{name: http, containerPort: 8080}]
    readinessProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 1}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: echo, namespace: default}
spec:
  rules:
  - host: echo.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}
`;

describe('logplane up runs the Ingress controller', () => {
  const dataDir = tempDir('ingress-up-');
  const cacheDir = tempDir('ingress-up-kubectl-');
  let up: Daemon;
  let http: number;
  let https: number;
  let kubeconfig: string;

  beforeAll(async () => {
    up = startLogplane('logplane up', ['up', '--data', dataDir, '--port', String(await freePort()), '--nodes', '1', '--runtime', 'process', '--proxy', 'none', '--dns', 'none'], { dataDir });
    const [, httpPort, httpsPort] = await up.waitForOutput(/Ingress: http:\/\/127\.0\.0\.1:(\d+) and https:\/\/127\.0\.0\.1:(\d+)/, 60_000);
    http = Number(httpPort);
    https = Number(httpsPort);
    [, kubeconfig = ''] = await up.waitForOutput(/export KUBECONFIG=(\S+)/, 60_000);
  }, 120_000);

  afterAll(async () => {
    if (up?.running()) await up.stop().catch(() => undefined);
    cleanup();
  });

  it('prints free loopback ports and answers 404 before any Ingress exists', async () => {
    expect(http).toBeGreaterThan(0);
    expect(https).toBeGreaterThan(0);
    expect(https).not.toBe(http);
    const { stdout } = await exec('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', 'Host: nothing.example', `http://127.0.0.1:${http}/`]);
    expect(stdout).toBe('404');
  });

  it('has made its IngressClass, the default one, as an installation does', async () => {
    const out = ok(await kubectl(kubeconfig, cacheDir, ['get', 'ingressclass', 'logplane', '-o', 'jsonpath={.spec.controller} {.metadata.annotations.ingressclass\\.kubernetes\\.io/is-default-class}']));
    expect(out.trim()).toBe('logplane.dev/ingress true');
  });

  it('routes an Ingress applied with kubectl (naming no class) to its pod and shows its address', async () => {
    const manifest = join(dataDir, 'echo.yaml');
    writeFileSync(manifest, MANIFEST);
    ok(await kubectl(kubeconfig, cacheDir, ['apply', '-f', manifest]));
    const body = await waitFor(
      'curl through the Ingress reaching the echo pod',
      async () => {
        const { stdout } = await exec('curl', ['-s', '--max-time', '5', '-H', 'Host: echo.example', `http://127.0.0.1:${http}/hello`]);
        return stdout.trim() === 'echo-0' && stdout.trim();
      },
      { timeoutMs: 90_000 },
    );
    expect(body).toBe('echo-0');
    const address = await waitFor('the Ingress address in kubectl get ingress', async () => {
      const out = ok(await kubectl(kubeconfig, cacheDir, ['get', 'ingress', 'echo', '-o', 'jsonpath={.status.loadBalancer.ingress[0].ip}']));
      return out.trim() !== '' && out.trim();
    });
    expect(address).toBe('127.0.0.1');
    expect(ok(await kubectl(kubeconfig, cacheDir, ['get', 'ingress', 'echo']))).toMatch(/echo\s+\S+\s+echo\.example\s+127\.0\.0\.1\s+80\s/);
  });

  it('refuses a malformed --ingress value naming the flag', async () => {
    const result = await logplane(kubeconfig, ['up', '--data', tempDir('ingress-bad-'), '--ingress', 'localhost:99999']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('--ingress "localhost:99999"');
  });
});
