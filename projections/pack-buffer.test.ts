/**
 * msgpackr packs every database's values into one buffer of its module and replaces it with
 * a larger one when a value does not fit; replaced after V8 optimized the packing code, every
 * later pack ran several times slower for good (bench/FINDINGS.md, sixth round). The store
 * grows that buffer when it loads: a value up to the apiserver's 3 MiB body limit must then
 * be packed without a new buffer. Without the store's module, the same put does allocate one
 * (the test can fail).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const putInChild = (mode: 'store' | 'bare'): number[] => {
  const dir = mkdtempSync(join(tmpdir(), 'logplane-pack-buffer-'));
  dirs.push(dir);
  const child = fileURLToPath(new URL('./testdata/pack-buffer-child.ts', import.meta.url));
  const run = spawnSync(process.execPath, ['--import', 'tsx', child, mode, dir], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { byThePut: number[] }).byThePut;
};

describe("the store's msgpack write buffer", () => {
  it('holds a value of 2.5 MiB without a new buffer once the store is loaded, and not without it', () => {
    expect(putInChild('store')).toEqual([]);
    expect(putInChild('bare').some((size) => size > 2.5 * 1024 * 1024)).toBe(true);
  });
});
