/**
 * The Events kubelet 1.32 records about a pod's containers, read off one lifecycle transition
 * (pure: the pod before, what happened, the pod after), with kubelet's reasons and messages:
 *
 * - Pulled "Container image \"X\" already present on machine" (runtimes whose images are
 *   built in; kubelet says so for an image it need not pull), Created "Created container X",
 *   Started "Started container X" when an instance starts;
 * - Failed "Error: …" when a container cannot be created or started;
 * - BackOff "Back-off restarting failed container X in pod NAME_NAMESPACE(UID)" when a
 *   crashed container waits in CrashLoopBackOff;
 * - Unhealthy "Liveness probe failed: …" (Readiness, Startup) for every failed attempt of a
 *   probe of a running instance ({@link unhealthyEvent}; the probe workers report attempts
 *   beside verdicts);
 * - Killing "Container X failed liveness probe, will be restarted" (startup likewise) or
 *   "Stopping container X" when a stop signal is sent;
 * - FailedPreStopHook and FailedPostStartHook with the handler runner's message when a hook
 *   fails (recorded by the pod driver, which runs the hooks: hooks.ts); Killing
 *   "FailedPostStartHook" when a failed postStart hook's container is stopped.
 *
 * Each is about the Pod, with fieldPath `spec.containers{X}` (kubelet's GenerateContainerRef).
 */
import type { Pod } from '../../schemas/index.ts';
import { assertNever } from '../../schemas/index.ts';
import type { ContainerRun, PodEvent, PodRun, ProbeKind } from './lifecycle.ts';

/** One Event kubelet records about a container of a pod. */
export interface KubeletEvent {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly container: string;
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** kubelet's events.* reasons. */
export const KUBELET_REASONS = {
  pulled: 'Pulled',
  created: 'Created',
  started: 'Started',
  failed: 'Failed',
  backOff: 'BackOff',
  unhealthy: 'Unhealthy',
  killing: 'Killing',
  failedPreStopHook: 'FailedPreStopHook',
  failedPostStartHook: 'FailedPostStartHook',
} as const;

const PROBE_NAMES: { readonly [K in ProbeKind]: string } = { liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup' };

/** What a runtime says about its images. */
export interface KubeletEventOptions {
  /** Images are on the machine already (built-in images): Pulled "already present" with each start. */
  readonly imagesPresent: boolean;
}

/** The fieldPath of a container in kubelet's references: `spec.initContainers{X}` for an init container of `pod`. */
export const containerFieldPath = (container: string, pod?: Pick<Pod, 'spec'>): string =>
  (pod?.spec.initContainers ?? []).some((c) => c.name === container) ? `spec.initContainers{${container}}` : `spec.containers{${container}}`;

/** kubelet's format.Pod: `name_namespace(uid)`. */
export const formatPod = (run: PodRun): string => `${run.name}_${run.namespace}(${run.uid})`;

const containerOf = (run: PodRun, name: string): ContainerRun | undefined => run.containers.find((c) => c.name === name);

/** The Events kubelet records for the transition of `before` to `after` on `event`. */
export const kubeletEvents = (before: PodRun, event: PodEvent, after: PodRun, options: KubeletEventOptions): KubeletEvent[] => {
  const events: KubeletEvent[] = [];
  const add = (container: string, type: KubeletEvent['type'], reason: string, message: string): void => {
    events.push({ uid: after.uid, namespace: after.namespace, name: after.name, container, type, reason, message });
  };
  switch (event.type) {
    case 'started': {
      const c = containerOf(after, event.container);
      if (c?.phase.type === 'running' && c.restartCount === event.restartCount && containerOf(before, event.container)?.phase.type !== 'running') {
        if (options.imagesPresent) add(c.name, 'Normal', KUBELET_REASONS.pulled, `Container image "${c.image}" already present on machine`);
        add(c.name, 'Normal', KUBELET_REASONS.created, `Created container ${c.name}`);
        add(c.name, 'Normal', KUBELET_REASONS.started, `Started container ${c.name}`);
      }
      break;
    }
    case 'startFailed':
      if (before !== after) {
        add(event.container, 'Normal', KUBELET_REASONS.created, `Created container ${event.container}`);
        add(event.container, 'Warning', KUBELET_REASONS.failed, `Error: ${event.message}`);
      }
      break;
    case 'refused':
      if (before !== after) add(event.container, 'Warning', KUBELET_REASONS.failed, `Error: ${event.message}`);
      break;
    case 'probe':
    case 'postStartFailed':
    case 'exited':
    case 'retryElapsed':
    case 'backoffElapsed':
    case 'killTimeout':
    case 'terminate':
    case 'graceElapsed':
      break;
    default:
      assertNever(event, 'pod event');
  }
  if (before === after) return events;
  for (const c of after.containers) {
    const previous = containerOf(before, c.name)?.phase;
    if (c.phase.type === 'backoff' && previous?.type !== 'backoff') {
      add(c.name, 'Warning', KUBELET_REASONS.backOff, `Back-off restarting failed container ${c.name} in pod ${formatPod(after)}`);
    }
    if (c.phase.type === 'running' && c.phase.killing !== null && (previous?.type !== 'running' || previous.killing === null)) {
      const cause = c.phase.killing;
      // kubelet's killContainer message: its default, the hook's reason, or the probe's.
      const message =
        cause === 'termination' ? `Stopping container ${c.name}` : cause === 'postStart' ? KUBELET_REASONS.failedPostStartHook : `Container ${c.name} failed ${cause} probe, will be restarted`;
      add(c.name, 'Normal', KUBELET_REASONS.killing, message);
    }
  }
  return events;
};

/** kubelet's prober on a failed attempt: Unhealthy "<Kind> probe failed: <detail>", while instance `restartCount` of `container` runs and is not being stopped. */
export const unhealthyEvent = (run: PodRun, container: string, restartCount: number, probe: ProbeKind, detail: string): KubeletEvent | undefined => {
  const c = containerOf(run, container);
  if (c?.phase.type !== 'running' || c.restartCount !== restartCount || c.phase.killing !== null || run.termination !== null) return undefined;
  return {
    uid: run.uid,
    namespace: run.namespace,
    name: run.name,
    container,
    type: 'Warning',
    reason: KUBELET_REASONS.unhealthy,
    message: `${PROBE_NAMES[probe]} probe failed: ${detail}`.trimEnd(),
  };
};
