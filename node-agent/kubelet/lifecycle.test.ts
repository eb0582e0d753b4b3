import { describe, expect, it } from 'vitest';
import {
  type ContainerDecl,
  type CrashLoopPolicy,
  type PodEffect,
  type PodEvent,
  type PodRun,
  type RestartPolicy,
  abandonUnstarted,
  admitPod,
  formatDuration,
  isContainerReady,
  reducePod,
} from './lifecycle.ts';
import { podPhase, podStatus, withTransitionTimes } from './status.ts';

const policy: CrashLoopPolicy = { initialMs: 100, maxMs: 1000, resetAfterMs: 10_000 };
const noProbes = { startup: false, liveness: false, readiness: false };
const container = (name = 'c', probes = noProbes): ContainerDecl => ({ name, image: 'logplane/crasher', probes });

function newPod(restartPolicy: RestartPolicy = 'Always', containers = [container()]): PodRun {
  return admitPod(
    { uid: 'u1', namespace: 'ns', name: 'p', restartPolicy, graceMs: 500, podIP: '127.100.0.7', hostIP: '127.0.0.1', startTime: 0 },
    containers,
  ).run;
}

/** Applies events in order, collecting every effect. */
function play(run: PodRun, events: readonly PodEvent[]): { run: PodRun; effects: PodEffect[] } {
  const effects: PodEffect[] = [];
  let current = run;
  for (const event of events) {
    const t = reducePod(current, event, policy);
    current = t.run;
    effects.push(...t.effects);
  }
  return { run: current, effects };
}

const started = (restartCount: number, at: number, name = 'c'): PodEvent => ({ type: 'started', container: name, restartCount, containerID: `x://${restartCount}`, at });
const exited = (restartCount: number, exitCode: number, at: number, name = 'c'): PodEvent => ({ type: 'exited', container: name, restartCount, exitCode, signal: null, at });

describe('lifecycle reducer', () => {
  it('admits a pod all ContainerCreating, phase Pending, and starts its containers one after another in order', () => {
    const t = admitPod({ uid: 'u', namespace: 'ns', name: 'p', restartPolicy: 'Always', graceMs: 1, podIP: 'ip', hostIP: 'h', startTime: 0 }, [container('a'), container('b'), container('c')]);
    expect(t.effects).toEqual([{ type: 'start', container: 'a', restartCount: 0 }]);
    expect(podPhase(t.run)).toBe('Pending');
    expect(podStatus(t.run).containerStatuses?.map((c) => c.state)).toEqual([{ waiting: { reason: 'ContainerCreating' } }, { waiting: { reason: 'ContainerCreating' } }, { waiting: { reason: 'ContainerCreating' } }]);
    // b starts once a has (its postStart hook included: the driver holds `started` until then).
    const aStarted = reducePod(t.run, started(0, 1, 'a'), policy);
    expect(aStarted.effects.filter((e) => e.type === 'start')).toEqual([{ type: 'start', container: 'b', restartCount: 0 }]);
    // A container that fails to start does not hold back the next one, nor does its restart.
    const bFailed = reducePod(aStarted.run, { type: 'startFailed', container: 'b', restartCount: 0, message: 'no such file', at: 2 }, policy);
    expect(bFailed.effects.filter((e) => e.type === 'start')).toEqual([
      { type: 'start', container: 'b', restartCount: 1 },
      { type: 'start', container: 'c', restartCount: 0 },
    ]);
  });

  it.each([
    { restartPolicy: 'Always', exitCode: 0, restarts: true, phase: 'Running' },
    { restartPolicy: 'Always', exitCode: 1, restarts: true, phase: 'Running' },
    { restartPolicy: 'OnFailure', exitCode: 0, restarts: false, phase: 'Succeeded' },
    { restartPolicy: 'OnFailure', exitCode: 1, restarts: true, phase: 'Running' },
    { restartPolicy: 'Never', exitCode: 0, restarts: false, phase: 'Succeeded' },
    { restartPolicy: 'Never', exitCode: 1, restarts: false, phase: 'Failed' },
  ] as const)('restartPolicy $restartPolicy, exit $exitCode → restarts: $restarts, phase $phase', ({ restartPolicy, exitCode, restarts, phase }) => {
    const { run, effects } = play(newPod(restartPolicy), [started(0, 10), exited(0, exitCode, 20)]);
    expect(effects.some((e) => e.type === 'start' && e.restartCount === 1)).toBe(restarts);
    expect(podPhase(run)).toBe(phase);
  });

  it('restarts immediately once, then backs off 100, 200, 400, 800, 1000, 1000 ms (CrashLoopBackOff)', () => {
    let run = newPod();
    const delays: (number | 'immediate')[] = [];
    let t = 0;
    for (let n = 0; n < 7; n++) {
      run = play(run, [started(run.containers[0]?.restartCount ?? 0, (t += 10))]).run;
      const step = reducePod(run, exited(run.containers[0]?.restartCount ?? 0, 1, (t += 10)), policy);
      run = step.run;
      const timer = step.effects.find((e) => e.type === 'setTimer');
      if (timer?.type === 'setTimer') {
        delays.push(timer.delayMs);
        const status = podStatus(run).containerStatuses?.[0];
        expect(status?.state?.waiting?.reason).toBe('CrashLoopBackOff');
        expect(status?.lastState?.terminated?.exitCode).toBe(1);
        run = reducePod(run, { type: 'backoffElapsed', container: 'c', at: (t += timer.delayMs) }, policy).run;
      } else {
        expect(step.effects).toContainEqual({ type: 'start', container: 'c', restartCount: run.containers[0]?.restartCount });
        delays.push('immediate');
      }
    }
    expect(delays).toEqual(['immediate', 100, 200, 400, 800, 1000, 1000]);
    expect(run.containers[0]?.restartCount).toBe(7);
  });

  it('resets the backoff after an instance ran resetAfterMs', () => {
    const { run } = play(newPod(), [started(0, 0), exited(0, 1, 10), started(1, 20), exited(1, 1, 30)]);
    expect(run.containers[0]?.phase.type).toBe('backoff');
    const later = play(run, [{ type: 'backoffElapsed', container: 'c', at: 200 }, started(2, 210)]).run;
    const step = reducePod(later, exited(2, 1, 210 + policy.resetAfterMs), policy);
    expect(step.effects).toContainEqual({ type: 'start', container: 'c', restartCount: 3 });
  });

  it('ignores events about an older instance', () => {
    const { run } = play(newPod(), [started(0, 0), exited(0, 1, 10), started(1, 20)]);
    expect(reducePod(run, exited(0, 1, 30), policy).run).toBe(run);
    expect(reducePod(run, { type: 'probe', container: 'c', restartCount: 0, probe: 'liveness', ok: false, at: 30 }, policy).run).toBe(run);
  });

  it('gates liveness and readiness on the startup probe; readiness sets ready', () => {
    const probes = { startup: true, liveness: true, readiness: true };
    const first = play(newPod('Always', [container('c', probes)]), [started(0, 0)]);
    expect(first.effects).toContainEqual({ type: 'startProbes', container: 'c', restartCount: 0, probes: ['startup'] });
    expect(podStatus(first.run).containerStatuses?.[0]).toMatchObject({ started: false, ready: false });
    const afterStartup = play(first.run, [{ type: 'probe', container: 'c', restartCount: 0, probe: 'startup', ok: true, at: 5 }]);
    expect(afterStartup.effects).toEqual([{ type: 'startProbes', container: 'c', restartCount: 0, probes: ['liveness', 'readiness'] }]);
    expect(podStatus(afterStartup.run).containerStatuses?.[0]).toMatchObject({ started: true, ready: false });
    const ready = play(afterStartup.run, [{ type: 'probe', container: 'c', restartCount: 0, probe: 'readiness', ok: true, at: 6 }]).run;
    expect(isContainerReady(ready.containers[0] as PodRun['containers'][number])).toBe(true);
    expect(podStatus(ready).conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  });

  it('kills a container whose liveness probe fails: SIGTERM, SIGKILL after the grace period, then restarts', () => {
    const { run } = play(newPod('Always', [container('c', { startup: false, liveness: true, readiness: false })]), [started(0, 0)]);
    const kill = reducePod(run, { type: 'probe', container: 'c', restartCount: 0, probe: 'liveness', ok: false, at: 10 }, policy);
    expect(kill.effects).toEqual([
      { type: 'stopProbes', container: 'c' },
      { type: 'signal', container: 'c', restartCount: 0, signal: 'SIGTERM' },
      { type: 'setTimer', timer: { type: 'kill', container: 'c', restartCount: 0 }, delayMs: 500 },
    ]);
    expect(isContainerReady(kill.run.containers[0] as PodRun['containers'][number])).toBe(false);
    const timeout = reducePod(kill.run, { type: 'killTimeout', container: 'c', restartCount: 0, at: 510 }, policy);
    expect(timeout.effects).toEqual([{ type: 'signal', container: 'c', restartCount: 0, signal: 'SIGKILL' }]);
    const exit = reducePod(timeout.run, { type: 'exited', container: 'c', restartCount: 0, exitCode: 137, signal: 9, at: 511 }, policy);
    expect(exit.effects).toContainEqual({ type: 'start', container: 'c', restartCount: 1 });
  });

  it('terminates: SIGTERM, SIGKILL at the grace deadline, stopped once every container exited', () => {
    const { run } = play(newPod('Always', [container('a'), container('b')]), [started(0, 0, 'a'), started(0, 0, 'b')]);
    const term = reducePod(run, { type: 'terminate', graceMs: 1000, at: 100 }, policy);
    expect(term.effects).toEqual([
      { type: 'stopProbes', container: 'a' },
      { type: 'signal', container: 'a', restartCount: 0, signal: 'SIGTERM' },
      { type: 'stopProbes', container: 'b' },
      { type: 'signal', container: 'b', restartCount: 0, signal: 'SIGTERM' },
      { type: 'setTimer', timer: { type: 'grace' }, delayMs: 1000 },
    ]);
    expect(podStatus(term.run).conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    const aExits = reducePod(term.run, exited(0, 0, 200, 'a'), policy);
    expect(aExits.effects.some((e) => e.type === 'start')).toBe(false);
    const grace = reducePod(aExits.run, { type: 'graceElapsed', at: 1100 }, policy);
    expect(grace.effects).toContainEqual({ type: 'signal', container: 'b', restartCount: 0, signal: 'SIGKILL' });
    const done = reducePod(grace.run, { type: 'exited', container: 'b', restartCount: 0, exitCode: 137, signal: 9, at: 1101 }, policy);
    expect(done.effects.at(-1)).toEqual({ type: 'stopped' });
    expect(podPhase(done.run)).toBe('Failed');
  });

  it('a later, shorter grace period wins; a longer one is ignored', () => {
    const { run } = play(newPod(), [started(0, 0), { type: 'terminate', graceMs: 30_000, at: 0 }]);
    expect(reducePod(run, { type: 'terminate', graceMs: 60_000, at: 10 }, policy).run).toBe(run);
    expect(reducePod(run, { type: 'terminate', graceMs: 1000, at: 10 }, policy).effects).toEqual([{ type: 'setTimer', timer: { type: 'grace' }, delayMs: 1000 }]);
    expect(reducePod(run, { type: 'terminate', graceMs: 0, at: 10 }, policy).effects).toContainEqual({ type: 'signal', container: 'c', restartCount: 0, signal: 'SIGKILL' });
  });

  it('terminates a crash-looping and a refused container at once', () => {
    const { run } = play(newPod('Always', [container('a'), container('b')]), [
      started(0, 0, 'a'),
      exited(0, 1, 1, 'a'),
      started(1, 2, 'a'),
      exited(1, 1, 3, 'a'),
      { type: 'refused', container: 'b', reason: 'ErrImageNeverPull', message: 'no', at: 4 },
    ]);
    expect(podStatus(run).containerStatuses?.map((c) => c.state?.waiting?.reason)).toEqual(['CrashLoopBackOff', 'ErrImageNeverPull']);
    const term = reducePod(run, { type: 'terminate', graceMs: 1000, at: 10 }, policy);
    expect(term.effects).toContainEqual({ type: 'clearTimer', timer: { type: 'backoff', container: 'a' } });
    expect(term.effects.at(-1)).toEqual({ type: 'stopped' });
    expect(podStatus(term.run).containerStatuses?.[1]?.state?.terminated?.reason).toBe('ContainerStatusUnknown');
  });

  it('a container started while its pod terminates is stopped at once', () => {
    const run = play(newPod(), [{ type: 'terminate', graceMs: 1000, at: 0 }]).run;
    expect(reducePod(run, started(0, 5), policy).effects).toEqual([{ type: 'signal', container: 'c', restartCount: 0, signal: 'SIGTERM' }]);
  });

  it('abandons the unstarted containers of a restored pod that is no longer desired', () => {
    const run = abandonUnstarted(newPod(), 5);
    const { effects } = play(run, [{ type: 'terminate', graceMs: 1000, at: 5 }]);
    expect(effects.filter((e) => e.type === 'signal' || e.type === 'setTimer')).toEqual([]);
    expect(effects.at(-1)).toEqual({ type: 'stopped' });
  });
});

describe('pod status', () => {
  it('keeps lastTransitionTime while a condition keeps its status', () => {
    const run = newPod();
    const first = withTransitionTimes(podStatus(run), undefined, 'T1');
    const same = withTransitionTimes(podStatus(run), first, 'T2');
    expect(same.conditions?.map((c) => c.lastTransitionTime)).toEqual(['T1', 'T1', 'T1', 'T1', 'T1']);
    const ready = play(run, [started(0, 0)]).run;
    const changed = withTransitionTimes(podStatus(ready), same, 'T3');
    expect(changed.conditions?.map((c) => [c.type, c.lastTransitionTime])).toEqual([
      ['PodReadyToStartContainers', 'T1'],
      ['Initialized', 'T1'],
      ['Ready', 'T3'],
      ['ContainersReady', 'T3'],
      ['PodScheduled', 'T1'],
    ]);
  });

  it('reports PodReadyToStartContainers True from admission until the pod is done or its termination has stopped every container, as kubelet tears the sandbox down', () => {
    const readyToStart = (run: PodRun): string | undefined => podStatus(run).conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.status;
    const pod = newPod('Never');
    expect(readyToStart(pod)).toBe('True');
    const running = play(pod, [started(0, 0)]).run;
    expect(readyToStart(running)).toBe('True');
    expect(readyToStart(play(running, [exited(0, 0, 1)]).run)).toBe('False');
    const terminating = reducePod(running, { type: 'terminate', graceMs: 1_000, at: 2 }, policy).run;
    expect(readyToStart(terminating)).toBe('True');
    expect(readyToStart(play(terminating, [exited(0, 143, 3)]).run)).toBe('False');
  });

  it('reports terminated state, lastState and timestamps in Kubernetes form', () => {
    const { run } = play(newPod('Never'), [started(0, 1_700_000_000_123), exited(0, 3, 1_700_000_002_999)]);
    expect(podStatus(run)).toMatchObject({
      phase: 'Failed',
      podIP: '127.100.0.7',
      podIPs: [{ ip: '127.100.0.7' }],
      hostIP: '127.0.0.1',
      startTime: '1970-01-01T00:00:00Z',
      containerStatuses: [
        {
          name: 'c',
          ready: false,
          started: false,
          restartCount: 0,
          containerID: 'x://0',
          lastState: {},
          state: { terminated: { exitCode: 3, reason: 'Error', startedAt: '2023-11-14T22:13:20Z', finishedAt: '2023-11-14T22:13:22Z', containerID: 'x://0' } },
        },
      ],
    });
  });

  it.each([
    [200, '200ms'],
    [1600, '1.6s'],
    [10_000, '10s'],
    [80_000, '1m20s'],
    [300_000, '5m0s'],
  ])('formats %i ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
