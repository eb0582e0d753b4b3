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
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LifecycleHandler } from '../../schemas/index.ts';
import { resolvePort, runProbe, type ProbeTarget } from './probes.ts';

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

const httpHook = (action: NonNullable<LifecycleHandler['httpGet']>, target: ProbeTarget, timeoutMs: number, abort: AbortSignal): Promise<string | undefined> => {
  const port = resolvePort(action.port, target.ports);
  if (port === undefined) return Promise.resolve(`no container port named "${action.port}"`);
  const https = (action.scheme ?? 'HTTP').toUpperCase() === 'HTTPS';
  const host = action.host || target.podIP;
  const path = action.path ?? '';
  // Header names come from the pod spec: a prototype-free object, so `__proto__` is just a name.
  const headers: Record<string, string> = Object.assign(Object.create(null) as Record<string, string>, { 'user-agent': 'kube-lifecycle/logplane', connection: 'close' });
  for (const header of action.httpHeaders ?? []) headers[header.name.toLowerCase()] = header.value;
  return new Promise((resolve) => {
    const options = { host, port, path: path.startsWith('/') ? path : `/${path}`, method: 'GET', timeout: timeoutMs, agent: false, headers, signal: abort } as const;
    const req = https ? httpsRequest({ ...options, rejectUnauthorized: false }) : httpRequest(options);
    req.once('response', (res) => {
      res.resume();
      resolve(undefined);
    });
    req.once('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    req.once('error', (err) => resolve(`Get "${https ? 'https' : 'http'}://${host}:${port}${options.path}": ${err.message}`));
    req.end();
  });
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
