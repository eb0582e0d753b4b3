/**
 * Test harness of the CRI tests: a real containerd of the test's own (see containerd.ts)
 * inside a network namespace the harness creates (so the CNI bridge and all pod traffic
 * stay there), with a busybox image and a pause image built locally and imported. Needs
 * root. `close()` removes everything: sandboxes, containerd and its shims, mounts, the
 * network namespace, the cgroup parent, the directory.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Containerd, startContainerd } from './containerd.ts';
import { buildBusyboxImage } from './local-image.ts';
import { runTool } from './tools.ts';

/** The busybox image (`sh` by default; `/www/index.html` says "busybox says hi"). */
export const BUSYBOX_IMAGE = 'docker.io/local/busybox:1';
/** The sandbox (pause) image: busybox sleeping forever. */
export const PAUSE_IMAGE = 'docker.io/local/pause:1';

/** A containerd for one test file. */
export interface TestContainerd {
  readonly containerd: Containerd;
  readonly dir: string;
  /** The network namespace containerd (and its bridge) runs in. */
  readonly netns: string;
  readonly bridgeName: string;
  /** Pods get `10.244.<subnetOctet>.0/24` addresses. */
  readonly subnetOctet: number;
  /** A cgroup path (cgroupfs) of this harness, for the sandboxes' `cgroupParent`; removed at close. */
  readonly cgroupParent: string;
  /** How long the start took, in ms: containerd until CRI answers, and the two image imports. */
  readonly figures: { readonly startMs: number; readonly importMs: number };
  /** Runs a command in containerd's network namespace (to reach pod addresses). */
  inNetns(command: string, ...args: string[]): Promise<string>;
  close(): Promise<void>;
}

/** Starts containerd for a test file; see the module comment. */
export async function startTestContainerd(): Promise<TestContainerd> {
  const suffix = randomBytes(4).toString('hex');
  const netns = `lpcri-${suffix}`;
  const bridgeName = `lpcri${suffix}`;
  const subnetOctet = 100 + (randomBytes(1)[0]! % 150);
  const cgroupParent = `/logplane-cri-${suffix}`;
  const dir = mkdtempSync('/tmp/lpcri-');
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  const close = async (): Promise<void> => {
    const failures: unknown[] = [];
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (err) {
        failures.push(err);
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, 'CRI test cleanup failed');
  };
  const inNetns = (command: string, ...args: string[]) => runTool('ip', ['netns', 'exec', netns, command, ...args]);

  try {
    cleanups.push(() => rmSync(dir, { recursive: true, force: true, maxRetries: 3 }));
    cleanups.push(() => {
      // Pod cgroups (cgroupParent/pod<uid>) first, then the parent, in every v1 hierarchy.
      for (const controller of readdirSync('/sys/fs/cgroup')) {
        const parent = join('/sys/fs/cgroup', controller, cgroupParent);
        if (!existsSync(parent)) continue;
        for (const child of readdirSync(parent, { withFileTypes: true })) if (child.isDirectory()) rmdirSync(join(parent, child.name));
        rmdirSync(parent);
      }
    });
    await runTool('ip', ['netns', 'add', netns]);
    cleanups.push(() => runTool('ip', ['netns', 'delete', netns]));
    await inNetns('ip', 'link', 'set', 'lo', 'up');

    const [busyboxTar, pauseTar] = await Promise.all([
      buildBusyboxImage({ dir, repoTag: 'local/busybox:1', cmd: ['sh'], files: { '/www/index.html': 'busybox says hi\n' } }),
      // Killed with SIGKILL by StopPodSandbox, as the real pause is.
      buildBusyboxImage({ dir, repoTag: 'local/pause:1', entrypoint: ['/bin/sleep', '2147483647'] }),
    ]);
    let started = performance.now();
    const containerd = await startContainerd({ dir, sandboxImage: PAUSE_IMAGE, podSubnet: `10.244.${subnetOctet}.0/24`, bridgeName, netns });
    const startMs = performance.now() - started;
    cleanups.push(() => containerd.close());
    started = performance.now();
    await containerd.importImage(busyboxTar);
    await containerd.importImage(pauseTar);
    const importMs = performance.now() - started;
    return { containerd, dir, netns, bridgeName, subnetOctet, cgroupParent, figures: { startMs, importMs }, inNetns, close };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
