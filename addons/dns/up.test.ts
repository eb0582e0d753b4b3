/**
 * The cluster DNS as `logplane up` runs it by default: on a free loopback port printed in the
 * banner, answering (to real `dig`) the kubernetes Service and the Services and pods a user
 * creates, with real process-runtime pods behind them.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, freePort, logplane, ok, startLogplane, tempDir, waitFor, type Daemon } from '../../test/e2e/process.ts';

const exec = promisify(execFile);

const MANIFEST = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: default}
spec:
  selector: {app: web}
  ports: [{name: http, port: 8080, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: default, labels: {app: web}}
spec:
  hostname: web-0
  subdomain: web
  containers:
  - name: main
    image: logplane/echo:1
    ports: [{name: http, containerPort: 8080}]
    readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 1}
`;

describe('logplane up runs the cluster DNS', () => {
  const dataDir = tempDir('dns-up-');
  let up: Daemon;
  let dns: { host: string; port: number };
  let kubeconfig: string;

  const dig = async (...args: string[]): Promise<string[]> => {
    const { stdout } = await exec('dig', [`@${dns.host}`, '-p', String(dns.port), '+short', '+tries=1', '+time=5', ...args]);
    return stdout.split('\n').filter(Boolean).sort();
  };

  beforeAll(async () => {
    up = startLogplane('logplane up', ['up', '--data', dataDir, '--port', String(await freePort()), '--nodes', '1', '--runtime', 'process', '--proxy', 'none'], { dataDir });
    const [, host, port] = await up.waitForOutput(/Cluster DNS: (\S+):(\d+) \(UDP and TCP\)/, 60_000);
    dns = { host: host!, port: Number(port) };
    [, kubeconfig = ''] = await up.waitForOutput(/export KUBECONFIG=(\S+)/, 60_000);
  }, 120_000);

  afterAll(async () => {
    if (up?.running()) await up.stop().catch(() => undefined);
    cleanup();
  });

  it('prints a loopback address and answers the kubernetes Service, its SRV and its PTR', async () => {
    expect(dns.host).toBe('127.0.0.1');
    expect(dns.port).toBeGreaterThan(0);
    const ip = await waitFor('the kubernetes Service in DNS', async () => {
      const answer = await dig('kubernetes.default.svc.cluster.local', 'A');
      return answer.length === 1 && answer[0];
    });
    expect(ip).toBe('127.96.0.1');
    expect(await dig('_https._tcp.kubernetes.default.svc.cluster.local', 'SRV')).toEqual(['0 100 443 kubernetes.default.svc.cluster.local.']);
    expect(await dig('-x', ip)).toEqual(['kubernetes.default.svc.cluster.local.']);
  });

  it('answers a headless Service with its ready pod, the pod by hostname.subdomain, and a ClusterIP Service', async () => {
    const manifest = join(dataDir, 'web.yaml');
    writeFileSync(manifest, MANIFEST);
    ok(await logplane(kubeconfig, ['apply', '-f', manifest]));
    const podIP = await waitFor(
      'the headless Service answering its ready pod',
      async () => {
        const answer = await dig('web.default.svc.cluster.local', 'A');
        return answer.length === 1 && answer[0];
      },
      { timeoutMs: 90_000 },
    );
    expect(podIP).toMatch(/^127\.100\.\d+\.\d+$/);
    expect(await dig('web-0.web.default.svc.cluster.local', 'A')).toEqual([podIP]);
    expect(await dig('_http._tcp.web.default.svc.cluster.local', 'SRV')).toEqual(['0 100 8080 web-0.web.default.svc.cluster.local.']);
    const echo = await dig('echo.default.svc.cluster.local', 'A');
    expect(echo).toHaveLength(1);
    expect(echo[0]).toMatch(/^127\.96\.\d+\.\d+$/);
  });
});
