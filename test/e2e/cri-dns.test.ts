/**
 * Pods' DNS on `logplane up --runtime cri`: the kube-dns Service on the tenth address of the
 * service CIDR, the cluster DNS answering on port 53 of that ClusterIP, and a CRI pod that
 * resolves a Service by its short name through the resolv.conf kubelet's rules gave it
 * (ClusterFirst), then reaches it; a `dnsPolicy: None` pod gets exactly its `dnsConfig`.
 *
 * As on a real host, the agent shares the network of the CNI bridge: `logplane up` (and
 * kubectl) run inside the network namespace the test creates for its containerd. There the
 * service CIDR is a routable range (10.96.0.0/16) made local with `ip route add local ... dev
 * lo` (what kube-proxy's IPVS mode does with its kube-ipvs0 dummy interface), so the userspace
 * proxy and the DNS can listen on ClusterIPs and a pod's packets to them, arriving over the
 * bridge, are delivered to them. Every packet stays in that namespace. Needs root, as CI runs it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CriHost, startCriHost } from './cri-host.ts';
import { ok, tempDir, waitFor } from './process.ts';

const SERVICE_CIDR = '10.96.0.0/16';
const DNS_IP = '10.96.0.10';

const MANIFEST = `apiVersion: v1
kind: Pod
metadata:
  name: echo
  labels: {app: echo}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: local/busybox:1
    command: ["sh", "-c", "echo echo says hi > /www/index.html; exec httpd -f -p 8080 -h /www"]
    ports: [{name: http, containerPort: 8080}]
    readinessProbe: {httpGet: {path: /index.html, port: http}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: echo}
spec:
  selector: {app: echo}
  ports: [{port: 80, targetPort: http}]
`;

const CLIENTS = `apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: client
    image: local/busybox:1
    command:
    - sh
    - -c
    - |
      cat /etc/resolv.conf
      until nslookup -type=a echo.default.svc.cluster.local > /tmp/nslookup; do sleep 1; done
      echo "nslookup: $(grep -A1 'Name:.*echo' /tmp/nslookup | tr '\\n' ' ')"
      until wget -q -O /tmp/page http://echo/index.html; do sleep 1; done
      echo "wget echo: $(cat /tmp/page)"
      exec sleep 3600
---
apiVersion: v1
kind: Pod
metadata: {name: custom}
spec:
  terminationGracePeriodSeconds: 1
  dnsPolicy: None
  dnsConfig:
    nameservers: [192.0.2.1]
    searches: [example.test]
    options: [{name: ndots, value: "2"}, {name: edns0}]
  containers:
  - name: main
    image: local/busybox:1
    command: ["sh", "-c", "cat /etc/resolv.conf; exec sleep 3600"]
`;

describe('pods resolve Services through their resolv.conf (CRI runtime)', { timeout: 240_000 }, () => {
  const dataDir = tempDir('logplane-cri-dns-');
  let host: CriHost;
  const kube = (...args: string[]) => host.kube(...args);
  const logsOf = async (pod: string): Promise<string> => {
    const result = await kube('logs', pod);
    return result.code === 0 ? result.stdout : '';
  };

  beforeAll(async () => {
    host = await startCriHost({
      dataDir,
      nodes: 1,
      upArgs: ['--service-cidr', SERVICE_CIDR],
      prepare: (harness) => harness.inNetns('ip', 'route', 'add', 'local', SERVICE_CIDR, 'dev', 'lo'),
    });
  });

  afterAll(async () => {
    await host?.close();
  });

  it('keeps kube-dns on the tenth address of the service CIDR, and the cluster DNS answers on its port 53', async () => {
    expect(ok(await kube('get', 'svc', '-n', 'kube-system', 'kube-dns', '-o', 'jsonpath={.spec.clusterIP} {.spec.ports[*].name}'))).toBe(`${DNS_IP} dns dns-tcp metrics`);
    for (const transport of ['+notcp', '+tcp']) {
      const answer = await waitFor(`kubernetes.default from ${DNS_IP}:53 (${transport})`, async () =>
        (await host.harness.inNetns('dig', `@${DNS_IP}`, '+short', '+tries=1', '+time=2', transport, 'kubernetes.default.svc.cluster.local', 'A')).trim() || false,
      );
      expect(answer).toBe('10.96.0.1');
    }
  });

  it('a ClusterFirst pod gets the cluster DNS in its resolv.conf and resolves and reaches a Service by its short name', async () => {
    writeFileSync(join(dataDir, 'echo.yaml'), MANIFEST);
    ok(await kube('apply', '-f', join(dataDir, 'echo.yaml')));
    const echoIP = ok(await kube('get', 'svc', 'echo', '-o', 'jsonpath={.spec.clusterIP}'));
    expect(echoIP).toMatch(/^10\.96\.0\.\d+$/);
    writeFileSync(join(dataDir, 'clients.yaml'), CLIENTS);
    ok(await kube('apply', '-f', join(dataDir, 'clients.yaml')));

    let seen = '';
    const logs = await waitFor(
      'the client reaching echo by name',
      async () => {
        seen = await logsOf('client');
        return seen.includes('wget echo:') && seen;
      },
      { timeoutMs: 150_000, describe: () => `the client's log: ${seen}` },
    );
    const lines = logs.split('\n');
    expect(lines).toContain(`nameserver ${DNS_IP}`);
    // The host's own search domains (if any) come after the cluster's.
    expect(lines.find((line) => line.startsWith('search '))).toMatch(/^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local( |$)/);
    expect(lines).toContain('options ndots:5');
    expect(logs).toMatch(new RegExp(`nslookup: Name:\\s+echo\\.default\\.svc\\.cluster\\.local Address:?\\s+(1: )?${echoIP.replace(/\./g, '\\.')}`));
    expect(lines).toContain('wget echo: echo says hi');
  });

  it('a dnsPolicy None pod gets exactly its dnsConfig', async () => {
    const logs = await waitFor('the custom pod’s resolv.conf', async () => {
      const text = await logsOf('custom');
      return text.includes('nameserver') && text;
    });
    expect(logs.split('\n').filter(Boolean).sort()).toEqual(['nameserver 192.0.2.1', 'options edns0 ndots:2', 'search example.test']);
  });
});
