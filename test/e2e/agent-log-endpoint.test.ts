/**
 * The node agent's log endpoint on real sockets: HTTPS with client certificates of the
 * cluster CA, the apiserver's `kubelet-client` identity only, a 4xx for every malformed
 * request, and an agent that survives whatever a client sends (a bounded fuzz of paths,
 * query strings and methods).
 */
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCertificateAuthority, issueCertificate, type TlsMaterial } from '../../apiserver/tls.ts';
import { createPodRuntime, type PodRuntime } from '../../node-agent/kubelet/index.ts';
import { eventually, makePod, tempDir, testLogger, waitForStatus } from '../../node-agent/kubelet/testing.ts';
import { KUBELET_CLIENT_NAME, startLogServer, type LogServer } from '../../node-agent/log-server.ts';

const NODE = 'endpoint-node';
const LOGS = `/containerLogs/${NODE}/default/talker/main`;

const clusterCA = generateCertificateAuthority({ commonName: 'test-cluster-ca' });
const otherCA = generateCertificateAuthority({ commonName: 'someone-elses-ca' });
const apiserverClient = issueCertificate(clusterCA, { commonName: KUBELET_CLIENT_NAME, organizations: ['system:masters'], usages: ['client'] });

interface Reply {
  readonly status: number;
  readonly body: string;
}

describe('the agent log endpoint (HTTPS, process runtime)', () => {
  let runtime: PodRuntime;
  let server: LogServer;

  /** GET (or `method`) `path` presenting `client` (none when null), trusting the cluster CA for the server. */
  const call = (path: string, client: TlsMaterial | null = apiserverClient, method = 'GET'): Promise<Reply> =>
    new Promise<Reply>((resolve, reject) => {
      const outgoing = httpsRequest(
        { host: '127.0.0.1', port: server.port, path, method, ca: clusterCA.cert, agent: false, ...(client ? { cert: client.cert, key: client.key } : {}) },
        (reply) => {
          let body = '';
          reply.setEncoding('utf8');
          reply.on('data', (chunk: string) => (body += chunk));
          reply.on('end', () => resolve({ status: reply.statusCode ?? 0, body }));
          reply.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end();
    });

  /** Sends one raw request line over TLS (no client-side URL checks) and resolves with the status code of the reply. */
  const rawStatus = (method: string, target: string): Promise<number> =>
    new Promise<number>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: server.port, ca: clusterCA.cert, cert: apiserverClient.cert, key: apiserverClient.key }, () => {
        socket.write(`${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`, 'latin1');
      });
      let head = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        head += chunk;
        const line = /^HTTP\/1\.1 (\d{3}) /.exec(head);
        if (line) {
          resolve(Number(line[1]));
          socket.destroy();
        } else if (head.includes('\r\n')) reject(new Error(`not an HTTP status line: ${JSON.stringify(head.slice(0, 80))}`));
      });
      socket.on('error', reject);
      socket.on('close', () => reject(new Error(`connection closed without a reply to ${method} ${JSON.stringify(target)}`)));
    });

  beforeAll(async () => {
    runtime = createPodRuntime({ kind: 'process', node: NODE, dataDir: tempDir('logplane-endpoint-'), logger: testLogger });
    const pod = makePod(
      'talker',
      [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'for i in 1 2 3 4 5; do echo "line $i"; done; exec sleep 600'] }],
      { restartPolicy: 'Never' },
      NODE,
    );
    runtime.sync([pod]);
    await waitForStatus(runtime, pod, (u) => u.status.phase === 'Running');
    const serving = issueCertificate(clusterCA, { commonName: `system:node:${NODE}`, usages: ['server'], hosts: [NODE, '127.0.0.1'] });
    server = await startLogServer({
      runtimeOf: (node) => (node === NODE ? runtime : undefined),
      tls: { ...serving, clientCA: clusterCA.cert },
      logger: testLogger,
    });
    await eventually(async () => {
      const reply = await call(LOGS);
      if (!reply.body.includes('line 5')) throw new Error(`not all lines yet: ${reply.body}`);
    });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await runtime?.close({ stopPods: true });
  });

  it('streams a container\'s log to the apiserver\'s kubelet-client identity', async () => {
    expect(await call(LOGS)).toEqual({ status: 200, body: 'line 1\nline 2\nline 3\nline 4\nline 5\n' });
  });

  it('answers the request that used to kill the agent (a bad %-escape) with 400, and keeps serving', async () => {
    const reply = await call('/containerLogs/%E0%A4%A');
    expect(reply.status).toBe(400);
    expect(reply.body).toMatch(/malformed %-escape/);
    expect((await call(LOGS)).status).toBe(200);
  });

  it('refuses a client that presents no certificate', async () => {
    await expect(call(LOGS, null)).rejects.toThrow(/alert certificate required/);
    expect((await call(LOGS)).status).toBe(200);
  });

  it('refuses a kubelet-client certificate of another CA', async () => {
    const forged = issueCertificate(otherCA, { commonName: KUBELET_CLIENT_NAME, organizations: ['system:masters'], usages: ['client'] });
    // The server aborts the TLS 1.3 handshake (alert unknown ca); the client sees the connection end.
    await expect(call(LOGS, forged)).rejects.toThrow(/unknown ca|socket hang up|ECONNRESET/);
  });

  it('refuses a certificate of the cluster CA that is not a client certificate', async () => {
    const serving = issueCertificate(clusterCA, { commonName: KUBELET_CLIENT_NAME, usages: ['server'] });
    await expect(call(LOGS, serving)).rejects.toThrow(/unsupported certificate|socket hang up|ECONNRESET/);
  });

  it('answers 403 to a client certificate of the cluster CA with another identity', async () => {
    const node = issueCertificate(clusterCA, { commonName: 'system:node:other-node', organizations: ['system:nodes'], usages: ['client'] });
    const reply = await call(LOGS, node);
    expect(reply.status).toBe(403);
    expect(reply.body).toMatch(/client system:node:other-node may not read logs/);
  });

  it('serves tailLines and limitBytes, and answers an invalid value with 400', async () => {
    expect(await call(`${LOGS}?tailLines=2`)).toEqual({ status: 200, body: 'line 4\nline 5\n' });
    expect(await call(`${LOGS}?tailLines=0`)).toEqual({ status: 200, body: '' });
    expect(await call(`${LOGS}?limitBytes=9`)).toEqual({ status: 200, body: 'line 1\nli' });
    for (const bad of ['-1', 'abc', '1e3', '2.5', '99999999999999999999', '10000001', '%E0%A4%A']) {
      const reply = await call(`${LOGS}?tailLines=${bad}`);
      expect(reply.status, `tailLines=${bad}`).toBe(400);
      expect(reply.body).toMatch(/^tailLines: invalid value/);
    }
  });

  it('answers 405 to other methods, 404 to other paths and to an unknown node, pod or container', async () => {
    const post = await call(LOGS, apiserverClient, 'POST');
    expect(post.status).toBe(405);
    expect((await call('/pods')).status).toBe(404);
    expect((await call('/containerLogs/other-node/default/talker/main')).body).toMatch(/node other-node is not run by this agent/);
    const pod = await call(`/containerLogs/${NODE}/default/nobody/main`);
    expect(pod).toEqual({ status: 404, body: 'pods "nobody" not found\n' });
    const container = await call(`/containerLogs/${NODE}/default/talker/sidecar`);
    expect(container).toEqual({ status: 404, body: 'container sidecar is not valid for pod talker\n' });
  });

  it('survives a bounded fuzz of methods, paths and query strings: every answer a 4xx or 200', async () => {
    // A seeded generator (mulberry32), so a failing case can be replayed.
    let seed = 0x5eed;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const pieces = [
      'containerLogs', NODE, 'default', 'talker', 'main', 'other', '', '..', '.', '%', '%E0', '%A4', '%A', '%2F', '%00', '%ZZ',
      '%C3%A9', '__proto__', 'constructor', 'x'.repeat(300), '😀', '\u00e9', ';', ':', '@', '*', '~',
    ];
    const queryKeys = ['tailLines', 'limitBytes', 'follow', 'previous', 'sinceSeconds', '__proto__', '', '%E0'];
    const queryValues = ['', '0', '1', '-1', '2', 'true', 'false', 'abc', '1e9', '9'.repeat(40), '%', '%E0%A4%A', 'NaN', 'Infinity', '0x10'];
    const methods = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];
    const statuses = new Map<number, number>();
    const valid = ['containerLogs', NODE, 'default', 'talker', 'main'];
    for (let i = 0; i < 200; i++) {
      // A third each: the valid path, the valid path with one segment replaced, random segments.
      const segments =
        i % 3 === 0
          ? [...valid]
          : i % 3 === 1
            ? valid.map((segment, index) => (index === Math.floor(random() * valid.length) ? pick(pieces) : segment))
            : Array.from({ length: 1 + Math.floor(random() * 6) }, () => pick(pieces));
      const query = Array.from({ length: Math.floor(random() * 4) }, () => `${pick(queryKeys)}=${pick(queryValues)}`).join('&');
      const target = `/${segments.join('/')}${query ? `?${query}` : ''}`;
      // Raw bytes outside printable ASCII are the HTTP parser's to refuse (400); send them escaped half of the time.
      const wire = random() < 0.5 ? target : encodeURI(target);
      const method = pick(methods);
      const status = await rawStatus(method, wire);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      expect(status === 200 || (status >= 400 && status < 500), `${method} ${wire} answered ${status}`).toBe(true);
    }
    // The cases reached the handler's every answer, and the agent still serves.
    expect([...statuses.keys()].sort()).toEqual(expect.arrayContaining([200, 400, 404, 405]));
    expect(await call(LOGS)).toEqual({ status: 200, body: 'line 1\nline 2\nline 3\nline 4\nline 5\n' });
  }, 60_000);
});
