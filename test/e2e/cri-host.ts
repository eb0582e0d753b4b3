/**
 * `logplane up --runtime cri` as on a host with the CNI bridge: the test's own containerd in a
 * network namespace the harness creates (node-agent/kubelet/cri/testing.ts), and `logplane up`
 * and kubectl run inside that namespace, so every packet (the apiserver on 127.0.0.1, the
 * ClusterIPs, the pods' addresses) stays there. Needs root, as CI runs it.
 */
import { join } from 'node:path';
import { type TestContainerd, startTestContainerd } from '../../node-agent/kubelet/cri/testing.ts';
import { type Daemon, type RunResult, LOGPLANE_BIN, cleanup, run, startDaemon } from './process.ts';

/** A containerd and a `logplane up` in its network namespace. */
export interface CriHost {
  readonly harness: TestContainerd;
  readonly up: Daemon;
  readonly kubeconfig: string;
  /** The real kubectl, in the namespace, against this cluster. */
  kube(...args: string[]): Promise<RunResult>;
  /** Stops `up` (and its pods), then containerd and everything the harness made. */
  close(): Promise<void>;
}

/**
 * Starts containerd, runs `prepare` on it (e.g. routes in its namespace), then `logplane up
 * --runtime cri --nodes NODES UP_ARGS` in the namespace, and waits for its kubeconfig.
 */
export const startCriHost = async (options: {
  readonly dataDir: string;
  readonly nodes: number;
  readonly upArgs?: readonly string[];
  readonly prepare?: (harness: TestContainerd) => Promise<unknown>;
}): Promise<CriHost> => {
  const harness = await startTestContainerd();
  let up: Daemon | undefined;
  const close = async (): Promise<void> => {
    try {
      if (up?.running()) await up.stop();
    } finally {
      await cleanup();
      await harness.close();
    }
  };
  try {
    await options.prepare?.(harness);
    const netns = `--net=/run/netns/${harness.netns}`;
    up = startDaemon(
      'logplane up --runtime cri (in the test netns)',
      'nsenter',
      [netns, process.execPath, LOGPLANE_BIN, 'up', '--data', options.dataDir, '--port', '6443', '--nodes', String(options.nodes), '--runtime', 'cri',
        '--cri-endpoint', harness.containerd.endpoint, '--cri-cgroup-parent', harness.cgroupParent, ...(options.upArgs ?? [])],
      { dataDir: options.dataDir },
    );
    const [, kubeconfig = ''] = await up.waitForOutput(/export KUBECONFIG=(\S+)/, 60_000);
    const kube = (...args: string[]) =>
      run('nsenter', [netns, 'kubectl', '--cache-dir', join(options.dataDir, 'kube-cache'), '--request-timeout', '30s', ...args], { env: { KUBECONFIG: kubeconfig } });
    return { harness, up, kubeconfig, kube, close };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
};
