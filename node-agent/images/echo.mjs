// logplane/echo: an HTTP server on POD_IP:PORT (default 8080) that answers with its pod name.
//
// GET /            → the pod name and a newline
// GET /healthz     → 200 "ok", or 503 while readiness is failed
// POST /fail-readiness, POST /pass-readiness → toggle /healthz
// The file named by READINESS_FAIL_FILE, while it exists, also makes /healthz fail.
// SIGTERM closes the server and exits 0.
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';

const podName = process.env.POD_NAME ?? 'unknown';
const host = process.env.POD_IP ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 8080);
const failFile = process.env.READINESS_FAIL_FILE;
let readinessFailed = false;

const healthy = () => !readinessFailed && !(failFile !== undefined && failFile !== '' && existsSync(failFile));

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0];
  const reply = (status, body) => {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(body);
  };
  console.log(`${new Date().toISOString()} ${req.method} ${req.url} from ${req.socket.remoteAddress}`);
  if (req.method === 'POST' && path === '/fail-readiness') {
    readinessFailed = true;
    return reply(200, 'readiness failing\n');
  }
  if (req.method === 'POST' && path === '/pass-readiness') {
    readinessFailed = false;
    return reply(200, 'readiness passing\n');
  }
  if (path === '/healthz') return healthy() ? reply(200, 'ok\n') : reply(503, 'readiness failed\n');
  return reply(200, `${podName}\n`);
});

server.on('error', (err) => {
  console.error(`echo: cannot listen on ${host}:${port}: ${err.message}`);
  process.exit(1);
});
server.listen(port, host, () => console.log(`echo: pod ${podName} listening on ${host}:${port}`));

process.on('SIGTERM', () => {
  console.log('echo: SIGTERM received, shutting down');
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
