/**
 * Container images built on the node without a registry: a busybox rootfs (the static
 * busybox binary and a symlink per applet) as one layer, written as a `docker save`
 * archive that `ctr images import` (and so {@link Containerd.importImage}) reads.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, mkdtemp, realpath, rename, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { KubeletConfigError } from '../errors.ts';
import { runTool } from './tools.ts';

/** Options of {@link buildBusyboxImage}. */
export interface BusyboxImageOptions {
  /** Where the rootfs and the archive are written (a fresh subdirectory per image). */
  readonly dir: string;
  /** The tag the image is imported under, e.g. `local/busybox:1` (containerd names it `docker.io/local/busybox:1`). */
  readonly repoTag: string;
  readonly entrypoint?: readonly string[];
  readonly cmd?: readonly string[];
  /** `NAME=value` entries; default `PATH=/bin`. */
  readonly env?: readonly string[];
  /** Extra files of the rootfs, by absolute path inside the image. */
  readonly files?: Readonly<Record<string, string>>;
  /** The static busybox binary; default `/bin/busybox` (Debian `busybox-static`). */
  readonly busybox?: string;
}

/** OCI architecture names of Node's `process.arch`. */
const OCI_ARCH: Readonly<Record<string, string>> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', riscv64: 'riscv64' };

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Writes a one-layer busybox image as a docker-save tar and resolves with its path. The
 * rootfs has `/bin` (busybox and its applets), `/etc/passwd` and `/etc/group` (root and
 * nobody), empty `/tmp`, `/proc`, `/sys`, `/dev`, `/root`, and `files`.
 */
export async function buildBusyboxImage(opts: BusyboxImageOptions): Promise<string> {
  const arch = OCI_ARCH[process.arch];
  if (arch === undefined) throw new KubeletConfigError(`no OCI architecture for ${process.arch}`, { arch: process.arch });
  const busybox = await realpath(opts.busybox ?? '/bin/busybox');
  const work = await mkdtemp(join(opts.dir, 'image-'));
  const rootfs = join(work, 'rootfs');
  for (const sub of ['bin', 'etc', 'tmp', 'proc', 'sys', 'dev', 'root']) await mkdir(join(rootfs, sub), { recursive: true });
  await copyFile(busybox, join(rootfs, 'bin/busybox'));
  const applets = (await runTool(busybox, ['--list'])).split('\n').filter((name) => name !== '' && name !== 'busybox');
  for (const applet of applets) await symlink('busybox', join(rootfs, 'bin', applet));
  await writeFile(join(rootfs, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n');
  await writeFile(join(rootfs, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
  for (const [path, content] of Object.entries(opts.files ?? {})) {
    if (!path.startsWith('/') || path.split('/').includes('..')) throw new KubeletConfigError(`image file path "${path}" must be absolute without ".."`, { path });
    await mkdir(dirname(join(rootfs, path)), { recursive: true });
    await writeFile(join(rootfs, path), content);
  }

  const archive = join(work, 'archive');
  await mkdir(archive);
  const layerTmp = join(archive, 'layer.tar');
  await runTool('tar', ['--numeric-owner', '--owner=0', '--group=0', '-C', rootfs, '-cf', layerTmp, '.']);
  const diffId = await sha256OfFile(layerTmp);
  await mkdir(join(archive, diffId));
  await rename(layerTmp, join(archive, diffId, 'layer.tar'));

  const config = JSON.stringify({
    architecture: arch,
    os: 'linux',
    created: new Date(0).toISOString(),
    config: {
      Env: [...(opts.env ?? ['PATH=/bin'])],
      ...(opts.entrypoint ? { Entrypoint: [...opts.entrypoint] } : {}),
      ...(opts.cmd ? { Cmd: [...opts.cmd] } : {}),
      WorkingDir: '/',
    },
    rootfs: { type: 'layers', diff_ids: [`sha256:${diffId}`] },
  });
  const configName = `${createHash('sha256').update(config).digest('hex')}.json`;
  await writeFile(join(archive, configName), config);
  const layerName = `${diffId}/layer.tar`;
  await writeFile(join(archive, 'manifest.json'), JSON.stringify([{ Config: configName, RepoTags: [opts.repoTag], Layers: [layerName] }]));
  const tarPath = join(work, 'image.tar');
  await runTool('tar', ['-C', archive, '-cf', tarPath, 'manifest.json', configName, layerName]);
  return tarPath;
}
