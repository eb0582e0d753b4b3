import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { PodStatus } from '../schemas/index.ts';
import { containerStates, createKubeletMetrics, operationType, type ReportedPod } from './metrics.ts';

describe('operationType', () => {
  it.each([
    ['version', 'version'],
    ['runPodSandbox', 'run_podsandbox'],
    ['stopPodSandbox', 'stop_podsandbox'],
    ['listPodSandbox', 'list_podsandbox'],
    ['podSandboxStatus', 'podsandbox_status'],
    ['createContainer', 'create_container'],
    ['listContainers', 'list_containers'],
    ['pullImage', 'pull_image'],
    ['imageFsInfo', 'image_fs_info'],
  ])('names the CRI method %s as kubelet does: %s', (method, expected) => {
    expect(operationType(method)).toBe(expected);
  });
});

const status = (phase: PodStatus['phase'], ...states: NonNullable<PodStatus['containerStatuses']>[number][]): PodStatus => ({ phase, containerStatuses: states });
const container = (state: object, lastState: object = {}) => ({ name: 'c', image: 'i', imageID: '', ready: false, restartCount: 0, state, lastState }) as NonNullable<PodStatus['containerStatuses']>[number];

describe('kubelet metrics of the pods an agent runs', () => {
  it('counts container states as kubelet does: a container waiting after it ran is exited, one never started is created', () => {
    expect(
      containerStates(
        status(
          'Running',
          container({ running: { startedAt: 'x' } }),
          container({ terminated: { exitCode: 0 } }),
          container({ waiting: { reason: 'CrashLoopBackOff' } }, { terminated: { exitCode: 1 } }),
          container({ waiting: { reason: 'ContainerCreating' } }),
          container({}),
        ),
      ),
    ).toEqual(['running', 'exited', 'exited', 'created', 'unknown']);
  });

  it('counts running pods and containers per node on scrape, from the latest reported statuses', async () => {
    const registry = new Registry();
    const metrics = createKubeletMetrics(registry);
    const pods: ReportedPod[] = [
      { node: 'a', status: status('Running', container({ running: { startedAt: 'x' } }), container({ running: { startedAt: 'x' } })) },
      { node: 'a', status: status('Pending', container({ waiting: { reason: 'ContainerCreating' } })) },
      { node: 'b', status: status('Succeeded', container({ terminated: { exitCode: 0 } })) },
    ];
    metrics.countFrom(() => pods);
    const text = await registry.metrics();
    expect(text).toContain('kubelet_running_pods{node="a"} 1');
    expect(text).toContain('kubelet_running_pods{node="b"} 0');
    expect(text).toContain('kubelet_running_containers{container_state="running",node="a"} 2');
    expect(text).toContain('kubelet_running_containers{container_state="created",node="a"} 1');
    expect(text).toContain('kubelet_running_containers{container_state="exited",node="b"} 1');
    // A pod gone from the source is gone from the counts at the next scrape.
    pods.splice(0, 2);
    const later = await registry.metrics();
    expect(later).not.toContain('node="a"');
  });
});
