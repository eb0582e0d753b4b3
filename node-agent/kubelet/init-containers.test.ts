/**
 * Init containers and sidecars in the pure lifecycle and its status, as kubelet 1.32 runs
 * them: one init container at a time in order, the app containers after the last; a failed
 * regular init container restarts with backoff (or fails a Never pod); a sidecar starts, stays,
 * restarts when it exits, and is stopped after the app containers.
 */
import { describe, expect, it } from 'vitest';
import { type ContainerDecl, type CrashLoopPolicy, type PodEffect, type PodEvent, type PodRun, type RestartPolicy, admitPod, reducePod } from './lifecycle.ts';
import { podPhase, podStatus } from './status.ts';

const policy: CrashLoopPolicy = { initialMs: 100, maxMs: 1000, resetAfterMs: 10_000 };
const noProbes = { startup: false, liveness: false, readiness: false };
const init = (name: string): ContainerDecl => ({ name, image: 'logplane/crasher', probes: noProbes, role: 'init' });
const sidecar = (name: string, startup = false): ContainerDecl => ({ name, image: 'logplane/echo', probes: { ...noProbes, startup }, role: 'sidecar' });
const app = (name: string): ContainerDecl => ({ name, image: 'logplane/echo', probes: noProbes, role: 'app' });

const admit = (restartPolicy: RestartPolicy, containers: readonly ContainerDecl[]) =>
  admitPod({ uid: 'u1', namespace: 'ns', name: 'p', restartPolicy, graceMs: 500, podIP: '127.100.0.7', hostIP: '127.0.0.1', startTime: 0 }, containers);

const play = (run: PodRun, events: readonly PodEvent[]): { run: PodRun; effects: PodEffect[] } => {
  const effects: PodEffect[] = [];
  let current = run;
  for (const event of events) {
    const t = reducePod(current, event, policy);
    current = t.run;
    effects.push(...t.effects);
  }
  return { run: current, effects };
};

const started = (name: string, at: number, restartCount = 0): PodEvent => ({ type: 'started', container: name, restartCount, containerID: `x://${name}/${restartCount}`, at });
const exited = (name: string, exitCode: number, at: number, restartCount = 0): PodEvent => ({ type: 'exited', container: name, restartCount, exitCode, signal: null, at });
const starts = (effects: readonly PodEffect[]) => effects.filter((e) => e.type === 'start').map((e) => (e.type === 'start' ? e.container : ''));
const signals = (effects: readonly PodEffect[]) => effects.flatMap((e) => (e.type === 'signal' ? [`${e.container}:${e.signal}`] : []));
const waitingReasons = (run: PodRun) => ({
  init: podStatus(run).initContainerStatuses?.map((c) => c.state?.waiting?.reason ?? (c.state?.running ? 'running' : c.state?.terminated?.reason)),
  app: podStatus(run).containerStatuses?.map((c) => c.state?.waiting?.reason ?? (c.state?.running ? 'running' : c.state?.terminated?.reason)),
});
const condition = (run: PodRun, type: string) => podStatus(run).conditions?.find((c) => c.type === type);

describe('init containers', () => {
  it('run one at a time in order, then the app containers; the pod is Pending and not Initialized until then', () => {
    const admitted = admit('Always', [init('migrate'), init('seed'), app('web'), app('worker')]);
    expect(starts(admitted.effects)).toEqual(['migrate']);
    expect(podPhase(admitted.run)).toBe('Pending');
    expect(waitingReasons(admitted.run)).toEqual({ init: ['ContainerCreating', 'PodInitializing'], app: ['PodInitializing', 'PodInitializing'] });
    expect(condition(admitted.run, 'Initialized')).toEqual({ type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [migrate seed]' });

    const first = play(admitted.run, [started('migrate', 1), exited('migrate', 0, 2)]);
    expect(starts(first.effects)).toEqual(['seed']);
    expect(podPhase(first.run)).toBe('Pending');
    expect(waitingReasons(first.run).init).toEqual(['Completed', 'ContainerCreating']);

    const second = play(first.run, [started('seed', 3), exited('seed', 0, 4)]);
    // The app containers start in order, each once the one before it has started (kubelet's SyncPod).
    expect(starts(second.effects)).toEqual(['web']);
    expect(condition(second.run, 'Initialized')).toEqual({ type: 'Initialized', status: 'True' });
    const webStarted = play(second.run, [started('web', 5)]);
    expect(starts(webStarted.effects)).toEqual(['worker']);
    const running = play(webStarted.run, [started('worker', 5)]);
    expect(podPhase(running.run)).toBe('Running');
    expect(podStatus(running.run).containerStatuses?.map((c) => c.name)).toEqual(['web', 'worker']);
    expect(podStatus(running.run).initContainerStatuses?.map((c) => c.name)).toEqual(['migrate', 'seed']);
    expect(condition(running.run, 'Ready')?.status).toBe('True');
  });

  it('a regular init container that succeeded never runs again, even under restartPolicy Always', () => {
    const { run } = admit('Always', [init('once'), app('web')]);
    const done = play(run, [started('once', 1), exited('once', 0, 2), started('web', 3), exited('web', 1, 4)]);
    expect(starts(done.effects)).toEqual(['web', 'web']);
    expect(podStatus(done.run).initContainerStatuses?.[0]?.restartCount).toBe(0);
  });

  it.each(['Always', 'OnFailure'] as const)('a failing regular init container restarts with backoff under %s, the app containers wait', (restartPolicy) => {
    const { run } = admit(restartPolicy, [init('wait-for-db'), app('web')]);
    const failed = play(run, [started('wait-for-db', 1), exited('wait-for-db', 1, 2), started('wait-for-db', 3, 1), exited('wait-for-db', 1, 4, 1)]);
    expect(starts(failed.effects)).toEqual(['wait-for-db']);
    expect(failed.effects).toContainEqual({ type: 'setTimer', timer: { type: 'backoff', container: 'wait-for-db' }, delayMs: 100 });
    expect(waitingReasons(failed.run)).toEqual({ init: ['CrashLoopBackOff'], app: ['PodInitializing'] });
    expect(podPhase(failed.run)).toBe('Pending');
    const recovered = play(failed.run, [{ type: 'backoffElapsed', container: 'wait-for-db', at: 104 }, started('wait-for-db', 105, 2), exited('wait-for-db', 0, 106, 2)]);
    expect(starts(recovered.effects)).toEqual(['wait-for-db', 'web']);
  });

  it('a failing regular init container fails a Never pod; its app containers never start', () => {
    const { run } = admit('Never', [init('check'), init('after'), app('web')]);
    const failed = play(run, [started('check', 1), exited('check', 2, 2)]);
    expect(starts(failed.effects)).toEqual([]);
    expect(podPhase(failed.run)).toBe('Failed');
    expect(waitingReasons(failed.run)).toEqual({ init: ['Error', 'PodInitializing'], app: ['PodInitializing'] });
    expect(condition(failed.run, 'Initialized')).toMatchObject({ status: 'False', reason: 'ContainersNotInitialized' });
    // Terminating it stops at once: nothing runs.
    const stopped = play(failed.run, [{ type: 'terminate', graceMs: 500, at: 3 }]);
    expect(stopped.effects).toContainEqual({ type: 'stopped' });
  });

  it('a terminated pod starts nothing that was waiting for its init containers', () => {
    const { run } = admit('Always', [init('slow'), app('web')]);
    const terminating = play(run, [started('slow', 1), { type: 'terminate', graceMs: 500, at: 2 }, exited('slow', 0, 3)]);
    expect(starts(terminating.effects)).toEqual([]);
    expect(signals(terminating.effects)).toEqual(['slow:SIGTERM']);
    expect(terminating.effects).toContainEqual({ type: 'stopped' });
  });
});

describe('sidecars (init containers with restartPolicy Always)', () => {
  it('the next container starts once the sidecar has started (its startup probe passed), and the sidecar keeps running', () => {
    const { run, effects } = admit('Always', [sidecar('proxy', true), init('setup'), app('web')]);
    expect(starts(effects)).toEqual(['proxy']);
    const up = play(run, [started('proxy', 1)]);
    expect(starts(up.effects)).toEqual([]);
    expect(podPhase(up.run)).toBe('Pending');
    const probed = play(up.run, [{ type: 'probe', container: 'proxy', restartCount: 0, probe: 'startup', ok: true, at: 2 }]);
    expect(starts(probed.effects)).toEqual(['setup']);
    const running = play(probed.run, [started('setup', 3), exited('setup', 0, 4), started('web', 5)]);
    expect(starts(running.effects)).toEqual(['web']);
    expect(podPhase(running.run)).toBe('Running');
    expect(waitingReasons(running.run)).toEqual({ init: ['running', 'Completed'], app: ['running'] });
    // ContainersReady counts the sidecar too.
    expect(condition(running.run, 'ContainersReady')?.status).toBe('True');
  });

  it('a sidecar that exits restarts, whatever its exit code, while the app runs', () => {
    const { run } = admit('Never', [sidecar('log-shipper'), app('job')]);
    const restarted = play(run, [started('log-shipper', 1), started('job', 2), exited('log-shipper', 0, 3)]);
    expect(starts(restarted.effects)).toEqual(['job', 'log-shipper']);
    expect(podPhase(restarted.run)).toBe('Running');
  });

  it('stops the sidecar once the app containers of a Never pod are done; the pod then Succeeded', () => {
    const { run } = admit('Never', [sidecar('log-shipper'), app('job')]);
    const done = play(run, [started('log-shipper', 1), started('job', 2), exited('job', 0, 3)]);
    expect(signals(done.effects)).toEqual(['log-shipper:SIGTERM']);
    expect(podPhase(done.run)).toBe('Running');
    const finished = play(done.run, [exited('log-shipper', 0, 4)]);
    expect(starts(finished.effects)).toEqual([]);
    expect(podPhase(finished.run)).toBe('Succeeded');
    expect(condition(finished.run, 'Initialized')).toEqual({ type: 'Initialized', status: 'True', reason: 'PodCompleted' });
  });

  it('on termination the app containers are stopped first, the sidecars after them', () => {
    const { run } = admit('Always', [sidecar('proxy'), app('web')]);
    const running = play(run, [started('proxy', 1), started('web', 2)]).run;
    const terminating = play(running, [{ type: 'terminate', graceMs: 500, at: 3 }]);
    expect(signals(terminating.effects)).toEqual(['web:SIGTERM']);
    const appGone = play(terminating.run, [exited('web', 0, 4)]);
    expect(signals(appGone.effects)).toEqual(['proxy:SIGTERM']);
    const stopped = play(appGone.run, [exited('proxy', 0, 5)]);
    expect(starts(stopped.effects)).toEqual([]);
    expect(stopped.effects).toContainEqual({ type: 'stopped' });
  });

  it('at the grace deadline every container still running gets SIGKILL, the sidecars too', () => {
    const { run } = admit('Always', [sidecar('proxy'), app('web')]);
    const running = play(run, [started('proxy', 1), started('web', 2)]).run;
    const killed = play(running, [{ type: 'terminate', graceMs: 500, at: 3 }, { type: 'graceElapsed', at: 503 }]);
    expect(signals(killed.effects)[0]).toBe('web:SIGTERM');
    expect(signals(killed.effects).slice(1).sort()).toEqual(['proxy:SIGKILL', 'web:SIGKILL']);
  });
});

describe('records written before init containers ran', () => {
  it('a container without a role is an app container', () => {
    const { run } = admit('Always', [app('web')]);
    const legacy: PodRun = { ...run, containers: run.containers.map(({ role: _role, ...c }) => c) };
    const up = play(legacy, [started('web', 1)]);
    expect(podPhase(up.run)).toBe('Running');
    expect(podStatus(up.run).initContainerStatuses).toBeUndefined();
    expect(podStatus(up.run).containerStatuses?.map((c) => c.name)).toEqual(['web']);
  });
});
