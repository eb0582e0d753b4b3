/**
 * The Ingress controller end to end on both logs, against `startCluster` with the process
 * runtime: two Deployments of the built-in `logplane/echo` image (A and B) behind Services,
 * Ingresses routing `Host: a.example` to A and `b.example/api` to B (A's Ingress names no
 * class: the default IngressClass takes it), HTTPS with SNI and a certificate the test
 * makes, a WebSocket upgrade to a pod that speaks it, the proxy's address in the Ingresses'
 * status, and a rolling update of A under a bounded load on loopback that loses no request.
 */
import { Agent, request, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSelfSignedCertificate } from '../../apiserver/tls.ts';
import type { Deployment, Ingress, Pod } from '../../schemas/index.ts';
import { isPodReady, LOG_ADAPTERS, podsOfApp, pollUntil, startTestCluster, waitForView, type TestCluster } from './helpers.ts';

const NS = '/api/v1/namespaces/default';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const INGRESSES = '/apis/networking.k8s.io/v1/namespaces/default/ingresses';

const echoDeployment = (name: string, replicas: number, version = '1'): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'default' },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        terminationGracePeriodSeconds: 5,
        containers: [
          {
            name: 'echo',
            image: 'logplane/echo',
            env: [{ name: 'VERSION', value: version }],
            ports: [{ name: 'http', containerPort: 8080 }],
            // One probe "second" is 100 ms in this cluster.
            readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1, timeoutSeconds: 10, failureThreshold: 2 },
          },
        ],
      },
    },
  },
});

/** A pod that answers WebSocket-style upgrades: 101, then echoes each frame prefixed with its name. */
const WS_SERVER = `
const http = require('node:http');
const server = http.createServer((req, res) => res.end(process.env.POD_NAME + '\\n'));
server.on('upgrade', (req, socket) => {
  socket.write('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n\\r\\n');
  socket.on('data', (data) => socket.write(process.env.POD_NAME + ':' + data));
});
server.listen(8080, process.env.POD_IP);
process.on('SIGTERM', () => process.exit(0));
`;

const wsDeployment: Deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'ws', namespace: 'default' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'ws' } },
    template: {
      metadata: { labels: { app: 'ws' } },
      spec: {
        containers: [
          {
            name: 'ws',
            image: 'logplane/echo',
            command: [process.execPath, '-e', WS_SERVER],
            ports: [{ name: 'http', containerPort: 8080 }],
            readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 1, timeoutSeconds: 10 },
          },
        ],
      },
    },
  },
};

const service = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
});

const CERT = generateSelfSignedCertificate({ commonName: 'a.example', hosts: ['a.example'] });

interface Answer {
  readonly status: number;
  readonly body: string;
}

const read = (res: IncomingMessage, resolve: (answer: Answer) => void, reject: (error: Error) => void): void => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => (body += chunk));
  res.on('end', () => resolve({ status: res.statusCode ?? 0, body: body.trim() }));
  res.on('error', reject);
};

describe.each(LOG_ADAPTERS)('the Ingress controller end to end on the %s log', (adapter) => {
  let harness: TestCluster;
  let port: number;
  let tlsPort: number;

  const get = (host: string, path: string, agent: Agent | false = false): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, headers: { host }, agent, timeout: 10_000 }, (res) => read(res, resolve, reject));
      req.on('timeout', () => req.destroy(new Error(`GET ${host}${path} timed out`)));
      req.on('error', reject);
      req.end();
    });

  const readyPods = (app: string, count: number): Promise<Pod[]> =>
    waitForView(
      harness.cluster.projection,
      `${count} ready ${app} pods in the Endpoints`,
      (view) => {
        const pods = podsOfApp(view, app).filter((p) => !p.metadata.deletionTimestamp);
        const endpoints = view.get(`Endpoints/default/${app}`) as { subsets?: { addresses?: { ip: string }[] }[] } | undefined;
        const ips = (endpoints?.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip));
        return pods.length === count && pods.every((p) => isPodReady(p) && ips.includes(p.status?.podIP ?? '')) && ips.length === count ? pods : undefined;
      },
      { timeoutMs: 90_000 },
    );

  beforeAll(async () => {
    harness = await startTestCluster(adapter, 'e2e-ingress', { proxy: 'none', probeSecondMs: 100, ingress: { host: '127.0.0.1', httpPort: 0, httpsPort: 0 } });
    const address = harness.cluster.ingress!.address;
    port = address.httpPort;
    tlsPort = address.httpsPort!;
    const api = harness.api;
    // The controller made its class at start, as an installation does: the cluster's default.
    const answer = await api.request('GET', '/apis/networking.k8s.io/v1/ingressclasses/logplane');
    expect(answer.status).toBe(200);
    const ingressClass = answer.body as { metadata: { annotations?: Record<string, string> }; spec: { controller: string } };
    expect(ingressClass.spec.controller).toBe('logplane.dev/ingress');
    expect(ingressClass.metadata.annotations?.['ingressclass.kubernetes.io/is-default-class']).toBe('true');
    await api.create(`${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a-tls' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': CERT.cert, 'tls.key': CERT.key } });
    for (const name of ['a', 'b', 'ws']) await api.create(`${NS}/services`, service(name));
    await api.create(DEPLOYMENTS, echoDeployment('a', 2));
    await api.create(DEPLOYMENTS, echoDeployment('b', 1));
    await api.create(DEPLOYMENTS, wsDeployment);
    await api.create(INGRESSES, {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'a' },
      spec: {
        tls: [{ hosts: ['a.example'], secretName: 'a-tls' }],
        rules: [
          {
            host: 'a.example',
            http: {
              paths: [
                { path: '/', pathType: 'Prefix', backend: { service: { name: 'a', port: { number: 80 } } } },
                { path: '/ws', pathType: 'Exact', backend: { service: { name: 'ws', port: { name: 'http' } } } },
              ],
            },
          },
        ],
      },
    });
    await api.create(INGRESSES, {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'b' },
      spec: { ingressClassName: 'logplane', rules: [{ host: 'b.example', http: { paths: [{ path: '/api', pathType: 'Prefix', backend: { service: { name: 'b', port: { name: 'http' } } } }] } }] },
    });
    await Promise.all([readyPods('a', 2), readyPods('b', 1), readyPods('ws', 1)]);
  }, 180_000);

  afterAll(async () => {
    await harness?.stop();
  });

  const podNames = (app: string): string[] => podsOfApp(harness.cluster.projection.view(), app).map((p) => p.metadata.name);

  it('routes Host a.example to A and b.example/api to B, and nothing else', async () => {
    const a = await get('a.example', '/');
    expect(a.status).toBe(200);
    expect(podNames('a')).toContain(a.body);
    const b = await get('b.example', '/api/v1/things');
    expect(b.status).toBe(200);
    expect(podNames('b')).toContain(b.body);
    expect((await get('b.example', '/')).status).toBe(404);
    expect((await get('c.example', '/')).status).toBe(404);
  });

  it('writes the proxy address into both Ingresses’ status', async () => {
    const statuses = await waitForView(harness.cluster.projection, 'status.loadBalancer on both Ingresses', (view) => {
      const lb = ['a', 'b'].map((name) => (view.get(`Ingress.networking.k8s.io/default/${name}`) as Ingress | undefined)?.status?.loadBalancer?.ingress);
      return lb.every((entry) => entry?.length) ? lb : undefined;
    });
    for (const entry of statuses) expect(entry).toEqual([{ ip: '127.0.0.1', ports: [{ port, protocol: 'TCP' }, { port: tlsPort, protocol: 'TCP' }] }]);
  });

  it('serves HTTPS for a.example with the certificate from its Secret, chosen by SNI', async () => {
    const answer = await new Promise<Answer & { subject: string }>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port: tlsPort, path: '/', servername: 'a.example', headers: { host: 'a.example' }, ca: CERT.cert, agent: false }, (res) => {
        const subject = String((res.socket as TLSSocket).getPeerCertificate().subject.CN);
        read(res, (a) => resolve({ ...a, subject }), reject);
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(200);
    expect(answer.subject).toBe('a.example');
    expect(podNames('a')).toContain(answer.body);
  });

  it('passes a WebSocket upgrade through to the pod and back', async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let received = '';
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`no WebSocket echo; received ${JSON.stringify(received)}`));
      }, 10_000);
      socket.setEncoding('utf8');
      socket.on('error', reject);
      socket.on('data', (chunk: string) => {
        received += chunk;
        if (received.includes('\r\n\r\n') && !received.includes(':hello')) socket.write('hello');
        if (received.includes(':hello')) {
          clearTimeout(timer);
          socket.destroy();
          resolve(received);
        }
      });
      socket.write('GET /ws HTTP/1.1\r\nHost: a.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n');
    });
    expect(text).toMatch(/^HTTP\/1\.1 101/);
    expect(text).toContain(`${podNames('ws')[0]}:hello`);
  });

  it('loses no request while A rolls out behind the Ingress', async () => {
    const before = new Set(podNames('a'));
    const current = (await harness.api.request('GET', `${DEPLOYMENTS}/a`)).body as Deployment;
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const failures: string[] = [];
    const answeredBy = new Set<string>();
    let requests = 0;
    let rolledOut = false;
    const deadline = Date.now() + 120_000;
    // Four clients on keep-alive connections, one request at a time each: bounded, loopback only.
    const client = async (): Promise<void> => {
      while (!rolledOut && Date.now() < deadline && requests < 20_000) {
        requests++;
        try {
          const answer = await get('a.example', `/load/${requests}`, agent);
          if (answer.status === 200) answeredBy.add(answer.body);
          else failures.push(`${answer.status} ${answer.body}`);
        } catch (error) {
          failures.push((error as Error).message);
        }
      }
    };
    const load = Promise.all([client(), client(), client(), client()]);
    const updated = await harness.api.request('PUT', `${DEPLOYMENTS}/a`, { ...echoDeployment('a', 2, '2'), metadata: current.metadata });
    expect(updated.status).toBe(200);
    const after = await waitForView(
      harness.cluster.projection,
      'A rolled out: two new ready pods, no old pod left',
      (view) => {
        const pods = podsOfApp(view, 'a');
        return pods.length === 2 && pods.every((p) => !before.has(p.metadata.name) && isPodReady(p)) ? pods : undefined;
      },
      { timeoutMs: 110_000 },
    );
    await readyPods('a', 2);
    // A few more rounds against the new pods only, then stop the load.
    const settledAt = requests;
    await pollUntil('more requests after the rollout', async () => requests > settledAt + 20, { timeoutMs: 30_000, intervalMs: 50 });
    rolledOut = true;
    await load;
    agent.destroy();
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(20);
    const newNames = after.map((p) => p.metadata.name);
    expect([...answeredBy].some((name) => before.has(name))).toBe(true);
    expect([...answeredBy].some((name) => newNames.includes(name))).toBe(true);
    expect([...answeredBy].every((name) => before.has(name) || newNames.includes(name))).toBe(true);
  }, 180_000);
});
