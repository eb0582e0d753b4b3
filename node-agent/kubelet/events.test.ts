/**
 * kubelet's Events read off lifecycle transitions: each case plays events through the
 * reducer and lists what kubeletEvents says about the last one, as `reason: message`.
 */
import { describe, expect, it } from 'vitest';
import { containerFieldPath, kubeletEvents, unhealthyEvent } from './events.ts';
import { admitPod, reducePod, type CrashLoopPolicy, type PodEvent, type PodRun, type RestartPolicy } from './lifecycle.ts';

const policy: CrashLoopPolicy = { initialMs: 100, maxMs: 1000, resetAfterMs: 10_000 };
const probes = { startup: false, liveness: true, readiness: true };

const newPod = (restartPolicy: RestartPolicy = 'Always'): PodRun =>
  admitPod({ uid: 'u1', namespace: 'ns', name: 'p', restartPolicy, graceMs: 500, podIP: '127.100.0.7', hostIP: '127.0.0.1', startTime: 0 }, [
    { name: 'c', image: 'logplane/crasher', probes },
  ]).run;

const started = (restartCount: number, at: number): PodEvent => ({ type: 'started', container: 'c', restartCount, containerID: `x://${restartCount}`, at });
const exited = (restartCount: number, at: number): PodEvent => ({ type: 'exited', container: 'c', restartCount, exitCode: 1, signal: null, at });

/** The Events of the last of `events`, played from a new pod, as `type reason: message` lines. */
const eventsOfLast = (events: readonly PodEvent[], imagesPresent = true, restartPolicy: RestartPolicy = 'Always'): string[] => {
  let run = newPod(restartPolicy);
  let recorded: string[] = [];
  for (const event of events) {
    const next = reducePod(run, event, policy).run;
    recorded = kubeletEvents(run, event, next, { imagesPresent }).map((e) => `${e.type} ${e.reason} ${e.container}: ${e.message}`);
    run = next;
  }
  return recorded;
};

describe('kubeletEvents', () => {
  it.each<[string, PodEvent[], string[]]>([
    ['a start: Pulled (already present), Created, Started', [started(0, 10)], [
      'Normal Pulled c: Container image "logplane/crasher" already present on machine',
      'Normal Created c: Created container c',
      'Normal Started c: Started container c',
    ]],
    ['the first crash restarts at once: nothing', [started(0, 10), exited(0, 20)], []],
    ['the second crash waits: BackOff', [started(0, 10), exited(0, 20), started(1, 30), exited(1, 40)], ['Warning BackOff c: Back-off restarting failed container c in pod p_ns(u1)']],
    ['a liveness failure verdict: Killing (Unhealthy comes with each failed attempt)', [started(0, 10), { type: 'probe', container: 'c', restartCount: 0, probe: 'liveness', ok: false, detail: 'HTTP probe failed with statuscode: 500', at: 20 }], [
      'Normal Killing c: Container c failed liveness probe, will be restarted',
    ]],
    ['a readiness verdict turning to failure: nothing more', [started(0, 10), { type: 'probe', container: 'c', restartCount: 0, probe: 'readiness', ok: true, at: 15 }, { type: 'probe', container: 'c', restartCount: 0, probe: 'readiness', ok: false, at: 20 }], []],
    ['a probe of an old instance: nothing', [started(0, 10), exited(0, 20), started(1, 30), { type: 'probe', container: 'c', restartCount: 0, probe: 'liveness', ok: false, at: 40 }], []],
    ['deletion: Killing "Stopping container"', [started(0, 10), { type: 'terminate', graceMs: 500, at: 20 }], ['Normal Killing c: Stopping container c']],
    ['a start failure: Created, Failed', [{ type: 'startFailed', container: 'c', restartCount: 0, message: 'exec: "nope": executable file not found in $PATH', at: 10 }], [
      'Normal Created c: Created container c',
      'Warning Failed c: Error: exec: "nope": executable file not found in $PATH',
    ]],
    ['a refused container: Failed', [{ type: 'refused', container: 'c', reason: 'CreateContainerConfigError', message: 'configmap "cfg" not found', retryAfterMs: 1000, at: 10 }], [
      'Warning Failed c: Error: configmap "cfg" not found',
    ]],
  ])('%s', (_name, events, expected) => {
    expect(eventsOfLast(events)).toEqual(expected);
  });

  it('says nothing of images a runtime pulls itself, and nothing after an exit that does not restart', () => {
    expect(eventsOfLast([started(0, 10)], false)).toEqual(['Normal Created c: Created container c', 'Normal Started c: Started container c']);
    expect(eventsOfLast([started(0, 10), exited(0, 20)], true, 'Never')).toEqual([]);
  });

  it('records Unhealthy for a failed attempt of a probe of the running instance only', () => {
    const running = reducePod(newPod(), started(0, 10), policy).run;
    expect(unhealthyEvent(running, 'c', 0, 'readiness', 'dial tcp 127.100.0.7:8080: connect: connection refused')).toEqual({
      uid: 'u1',
      namespace: 'ns',
      name: 'p',
      container: 'c',
      type: 'Warning',
      reason: 'Unhealthy',
      message: 'Readiness probe failed: dial tcp 127.100.0.7:8080: connect: connection refused',
    });
    expect(unhealthyEvent(running, 'c', 0, 'liveness', 'HTTP probe failed with statuscode: 500')?.message).toBe('Liveness probe failed: HTTP probe failed with statuscode: 500');
    expect(unhealthyEvent(running, 'c', 1, 'liveness', 'old instance')).toBeUndefined();
    expect(unhealthyEvent(newPod(), 'c', 0, 'startup', 'not started yet')).toBeUndefined();
    const killing = reducePod(running, { type: 'probe', container: 'c', restartCount: 0, probe: 'liveness', ok: false, at: 20 }, policy).run;
    expect(unhealthyEvent(killing, 'c', 0, 'liveness', 'being stopped')).toBeUndefined();
  });
});

describe('containerFieldPath (kubelet GenerateContainerRef)', () => {
  it('names an init container under spec.initContainers and any other under spec.containers', () => {
    const pod = { spec: { initContainers: [{ name: 'setup' }], containers: [{ name: 'web' }] } };
    expect(containerFieldPath('setup', pod)).toBe('spec.initContainers{setup}');
    expect(containerFieldPath('web', pod)).toBe('spec.containers{web}');
    expect(containerFieldPath('web')).toBe('spec.containers{web}');
  });
});
