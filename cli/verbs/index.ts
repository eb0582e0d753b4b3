/**
 * The resource verbs of the `logplane` command: apply, get, describe, delete, scale,
 * logs and rollout. Each talks to the API server named by `--kubeconfig`, `$KUBECONFIG`
 * or `./.logplane/kubeconfig` (with `--server`/`--token` overrides).
 */
import type { Command } from 'commander';
import { registerApply } from './apply.ts';
import { registerDelete } from './delete.ts';
import { registerDescribe } from './describe.ts';
import { registerGet } from './get.ts';
import { registerLogs } from './logs.ts';
import { registerRollout } from './rollout.ts';
import { registerScale } from './scale.ts';

/** Adds `apply`, `get`, `describe`, `delete`, `scale`, `logs` and `rollout` to the program. */
export const registerResourceVerbs = (program: Command): void => {
  registerApply(program);
  registerGet(program);
  registerDescribe(program);
  registerDelete(program);
  registerScale(program);
  registerLogs(program);
  registerRollout(program);
};
