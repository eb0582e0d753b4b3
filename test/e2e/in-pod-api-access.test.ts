/**
 * In-pod API access on a `logplane up` cluster (process runtime, userspace proxy, HTTPS), as a
 * client library in a kube pod finds the apiserver: the pod gets the `kube-api-access-*`
 * volume (ServiceAccount admission), the agent writes its bound token, the cluster's CA and
 * the namespace there, and `KUBERNETES_SERVICE_HOST`/`_PORT` name the `kubernetes` Service,
 * whose ClusterIP the service proxy forwards to the apiserver (whose certificate names that
 * address). The pod runs the real kubectl with the token and the CA against that address and
 * prints who it is. In the process runtime a mount is a host directory whose path the
 * container gets in `LOGPLANE_MOUNT_<path>`; a pod running as another user than the agent
 * (here `nobody`: the test runs as root) cannot traverse the agent's directories to it, and
 * reaches it at the mount path below its working directory (`_work/var/run/…`, a bind mount),
 * which is what the script reads. Its `HOME` is not reachable by absolute path either, so
 * kubectl's is the working directory.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../schemas/index.ts';
import { pollUntil, waitForView } from './helpers.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

const MOUNT = 'LOGPLANE_MOUNT_VAR_RUN_SECRETS_KUBERNETES_IO_SERVICEACCOUNT';
/** The mount as the pod user reaches it (relative to its working directory). */
const RELATIVE_MOUNT = 'var/run/secrets/kubernetes.io/serviceaccount';
const KUBECTL = process.env['KUBECTL'] ?? '/usr/bin/kubectl';

const script = [
  `if [ -r "$${MOUNT}/token" ]; then D="$${MOUNT}"; else D=${RELATIVE_MOUNT}; fi`,
  'export HOME=.',
  'echo "namespace: $(cat "$D/namespace")"',
  'echo "server: $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"',
  `${KUBECTL} --token="$(cat "$D/token")" --certificate-authority="$D/ca.crt" --server="https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT" --cache-dir=kube-cache auth whoami -o jsonpath='user: {.status.userInfo.username}{"\\n"}'`,
  'exec sleep 600',
].join('; ');

describe('in-pod API access on logplane up', () => {
  const k = useKubectlCluster('embedded', 'e2e-in-pod-api', { runtime: 'process', proxy: 'userspace' });

  it('a pod reads its kube-api-access volume and calls the apiserver at KUBERNETES_SERVICE_HOST as system:serviceaccount:default:default', async () => {
    const manifest = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'whoami', namespace: 'default' },
      spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', script] }] },
    };
    await k.expectOk('apply', '-f', k.file('whoami.json', JSON.stringify(manifest)));
    const pod = await waitForView(k.cluster.projection, 'the pod running', (view) => {
      const found = view.get('Pod/default/whoami') as Pod | undefined;
      return found?.status?.phase === 'Running' ? found : undefined;
    }, { timeoutMs: 60_000 });
    const volume = pod.spec.volumes?.find((v) => v.name.startsWith('kube-api-access-'));
    expect(volume?.projected?.sources?.[0]?.serviceAccountToken).toEqual({ expirationSeconds: 3607, path: 'token' });
    expect(pod.spec.containers[0]?.volumeMounts).toEqual([{ name: volume?.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);

    // kubectl's output, or its error, ends the pod's part before the sleep.
    const logs = await pollUntil(
      'the pod to print its user (or an error)',
      async () => {
        const printed = (await k.kubectl('logs', 'whoami')).stdout;
        return /user: |error/i.test(printed) ? printed : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    const service = k.cluster.projection.view().get('Service/default/kubernetes') as { spec: { clusterIP: string } } | undefined;
    expect(logs).toContain('namespace: default');
    expect(logs).toContain(`server: ${service?.spec.clusterIP}:443`);
    expect(logs).toContain('user: system:serviceaccount:default:default');
  }, 120_000);
});
