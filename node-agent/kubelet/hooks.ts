/**
 * Container lifecycle hooks, as kubelet 1.32's handler runner runs them
 * (pkg/kubelet/lifecycle/handlers.go):
 *
 * - **exec** runs the command in the container: for the process runtime, a process with the
 *   container's environment, working directory and user; for the CRI runtime, ExecSync. Exit 0
 *   is success.
 * - **httpGet** sends a GET to the pod's address (or `host`), with `httpHeaders`. Any HTTP
 *   response is a success, whatever its status; only a failed request is a failure.
 * - **sleep** waits `seconds`.
 * - **tcpSocket** is accepted by the API for backward compatibility, but kubelet cannot run it
 *   as a hook, so the hook fails ("invalid handler").
 *
 * A failure carries kubelet's message, which becomes the FailedPreStopHook (or
 * FailedPostStartHook) Event. A hook stops when its time is up or when `abort` fires (the
 * container got SIGKILL).
 */
import type { LifecycleHandler } from '../../schemas/index.ts';
import { httpGet } from './http-get.ts';
import { runProbe, type ProbeTarget } from './probes.ts';

/** How a hook ended. */
export type HookOutcome = { readonly type: 'success' } | { readonly type: 'failure'; readonly message: string };

/** Whose hook runs: the container's name and kubelet's `format.Pod` of its pod (`name_namespace(uid)`). */
export interface HookSubject {
  readonly container: string;
  readonly pod: string;
}

const SUCCESS: HookOutcome = { type: 'success' };

/** Go's `%v` of a []string: `[a b c]`. */
const goList = (values: readonly string[]): string => `[${values.join(' ')}]`;

const sleep = (ms: number, abort: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (abort.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      abort.removeEventListener('abort', done);
      resolve();
    }
    abort.addEventListener('abort', done, { once: true });
  });

/** kubelet's HTTP hook: any response is a success; the error of a failed request otherwise. */
const httpHook = async (action: NonNullable<LifecycleHandler['httpGet']>, target: ProbeTarget, timeoutMs: number, abort: AbortSignal): Promise<string | undefined> => {
  const result = await httpGet(action, target, { userAgentFragment: 'kube-lifecycle', timeoutMs, abort });
  return result.type === 'error' ? result.message : undefined;
};

/** Runs `handler` for `subject` against `target` for at most `timeoutMs`. Never rejects. */
export async function runHook(handler: LifecycleHandler, subject: HookSubject, target: ProbeTarget, timeoutMs: number, abort: AbortSignal): Promise<HookOutcome> {
  if (handler.exec != null) {
    const command = handler.exec.command ?? [];
    const outcome = await runProbe({ exec: { command } }, target, Math.max(1, timeoutMs), abort);
    if (outcome.type === 'success') return SUCCESS;
    return { type: 'failure', message: `Exec lifecycle hook (${goList(command)}) for Container "${subject.container}" in Pod "${subject.pod}" failed - error: ${outcome.detail}, message: ""` };
  }
  if (handler.httpGet != null) {
    const error = await httpHook(handler.httpGet, target, Math.max(1, timeoutMs), abort);
    if (error === undefined) return SUCCESS;
    return { type: 'failure', message: `HTTP lifecycle hook (${handler.httpGet.path ?? ''}) for Container "${subject.container}" in Pod "${subject.pod}" failed - error: ${error}` };
  }
  if (handler.sleep != null) {
    await sleep(Math.min(Math.max(0, handler.sleep.seconds) * 1000, Math.max(0, timeoutMs)), abort);
    return SUCCESS;
  }
  return { type: 'failure', message: `Cannot run handler: invalid handler: ${JSON.stringify(handler)}` };
}
