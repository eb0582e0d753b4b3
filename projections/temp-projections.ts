/**
 * Test fixture: projections in temporary directories, closed and removed after each test
 * (registers a vitest `afterEach`, so call it at a test module's top level).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { Projection } from './projection.ts';

export interface TempProjections {
  /** A fresh directory, removed after the test. */
  dir(): string;
  /** Closes `projection` after the test; returns it. */
  track(projection: Projection): Projection;
  /** The test closed `projection` itself: do not close it again. */
  forget(projection: Projection): void;
}

export const tempProjections = (prefix: string): TempProjections => {
  const dirs: string[] = [];
  const projections: Projection[] = [];
  afterEach(async () => {
    for (const projection of projections.splice(0)) await projection.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir: () => {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    track: (projection) => {
      projections.push(projection);
      return projection;
    },
    forget: (projection) => {
      const index = projections.indexOf(projection);
      if (index >= 0) projections.splice(index, 1);
    },
  };
};
