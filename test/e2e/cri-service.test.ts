/**
 * A Deployment of a locally built image on `logplane up --runtime cri`, behind a Service that
 * answers through its ClusterIP, with httpGet readiness probes. As on a real host, the agent
 * and the service proxy share the network of the CNI bridge: `logplane up` (and kubectl, and
 * the client) run inside the network namespace the test creates for its containerd, so every
 * packet (the apiserver on 127.0.0.1, the ClusterIP, the pods' addresses) stays in that
 * namespace. Needs root, as CI runs it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../schemas/index.ts';
import { type CriHost, startCriHost } from './cri-host.ts';
import { ok, tempDir, waitFor } from './process.ts';

const MANIFEST = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
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
      terminationGracePeriodSeconds: 1
      containers:
      - name: web
        image: local/busybox:1
        command: ["sh", "-c", "hostname > /www/index.html; exec httpd -f -p 8080 -h /www"]
        ports:
        - name: http
          containerPort: 8080
        readinessProbe:
          httpGet:
            path: /index.html
            port: http
          periodSeconds: 1
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
    targetPort: http
`;

describe('a Service over CRI pods on two nodes, through its ClusterIP', { timeout: 240_000 }, () => {
  const dataDir = tempDir('logplane-cri-svc-');
  let host: CriHost;
  const kube = (...args: string[]) => host.kube(...args);

  beforeAll(async () => {
    host = await startCriHost({ dataDir, nodes: 2 });
  });

  afterAll(async () => {
    await host?.close();
  });

  it('rolls out the Deployment (ready by its httpGet probes) and answers from both replicas on the ClusterIP', async () => {
    const manifest = join(dataDir, 'web.yaml');
    writeFileSync(manifest, MANIFEST);
    expect(ok(await kube('apply', '-f', manifest))).toBe('deployment.apps/web created\nservice/web created\n');
    expect(ok(await kube('rollout', 'status', 'deploy/web', '--timeout', '120s'))).toContain('deployment "web" successfully rolled out');
    const pods = (JSON.parse(ok(await kube('get', 'pods', '-l', 'app=web', '-o', 'json'))) as { items: Pod[] }).items;
    expect(pods).toHaveLength(2);
    // Two nodes of one agent share the containerd (and its CNI network); the scheduler spreads the replicas.
    expect(pods.map((p) => p.spec.nodeName).sort()).toEqual(['node-1', 'node-2']);
    for (const pod of pods) {
      expect(pod.status?.podIP).toMatch(new RegExp(`^10\\.244\\.${host.harness.subnetOctet}\\.\\d+$`));
      expect(pod.status?.containerStatuses?.[0]).toMatchObject({ ready: true, started: true });
    }
    const clusterIP = ok(await kube('get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP}'));
    expect(clusterIP).toMatch(/^127\.96\.\d+\.\d+$/);
    const seen = new Set<string>();
    await waitFor(
      'answers from both pods through the ClusterIP',
      async () => {
        seen.add((await host.harness.inNetns('busybox', 'wget', '-q', '-O', '-', `http://${clusterIP}/`)).trim());
        return pods.every((p) => seen.has(p.metadata.name));
      },
      { describe: () => [...seen].join(', ') },
    );
    expect([...seen].sort()).toEqual(pods.map((p) => p.metadata.name).sort());
  });
});
