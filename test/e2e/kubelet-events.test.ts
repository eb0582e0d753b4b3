/**
 * kubelet's Events end to end: `logplane up` with the process runtime (a short crash-loop
 * backoff), a pod whose container crashes over and over. Its Events come from the node
 * agent (source kubelet on the node, fieldPath spec.containers{crash}): Pulled, Created,
 * Started and a BackOff "Back-off restarting failed container crash in pod NAME_NAMESPACE(UID)"
 * whose count grows; `kubectl get events --field-selector involvedObject.name=` lists them
 * and `kubectl describe pod` shows them.
 */
import { describe, expect, it } from 'vitest';
import type { Event, Pod } from '../../schemas/index.ts';
import { useKubectlCluster } from './kubectl-harness.ts';

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: crashy
spec:
  containers:
  - name: crash
    image: logplane/crasher
    env:
    - name: EXIT_AFTER_MS
      value: "100"
`;

describe('kubelet Events of a crash-looping process pod', () => {
  const harness = useKubectlCluster('embedded', 'e2e-kubelet-events', { runtime: 'process', crashLoop: { initialMs: 300, maxMs: 600 } });
  const { ok, file, waitUntil } = harness;
  const eventsOf = (pod: string, reason: string) => (view: Parameters<Parameters<typeof waitUntil>[1]>[0]): Event[] =>
    (view.list('Event', 'default') as Event[]).filter((e) => e.involvedObject.name === pod && e.reason === reason);

  it('records BackOff with kubelet as source, listed by kubectl get events and shown by kubectl describe', async () => {
    expect(await ok('apply', '-f', file('crashy.yaml', POD))).toBe('pod/crashy created\n');
    await waitUntil('a BackOff Event about crashy counted twice', (view) => (eventsOf('crashy', 'BackOff')(view)[0]?.count ?? 0) >= 2, 90_000);
    const view = harness.cluster.projection.view();
    const pod = view.list('Pod', 'default').find((p) => p.metadata.name === 'crashy') as Pod;
    const node = pod.spec.nodeName ?? '';
    const [backOff] = eventsOf('crashy', 'BackOff')(view);
    expect(backOff).toMatchObject({
      type: 'Warning',
      message: `Back-off restarting failed container crash in pod crashy_default(${pod.metadata.uid})`,
      source: { component: 'kubelet', host: node },
      reportingComponent: 'kubelet',
      involvedObject: { kind: 'Pod', name: 'crashy', namespace: 'default', uid: pod.metadata.uid, fieldPath: 'spec.containers{crash}' },
    });
    // One Started Event, counted per start (client-go's correlator), not one per start.
    const startedEvents = eventsOf('crashy', 'Started')(view);
    expect(startedEvents).toHaveLength(1);
    expect(startedEvents[0]!.count).toBeGreaterThanOrEqual(2);

    const listed = await ok('get', 'events', '--field-selector', 'involvedObject.name=crashy');
    expect(listed).toMatch(/Warning\s+BackOff\s+pod\/crashy\s+Back-off restarting failed container crash in pod crashy_default\(/);
    expect(listed).toMatch(/Normal\s+Started\s+pod\/crashy\s+Started container crash/);
    expect(listed).toMatch(/Normal\s+Pulled\s+pod\/crashy\s+Container image "logplane\/crasher" already present on machine/);

    const described = await ok('describe', 'pod', 'crashy');
    const section = described.slice(described.indexOf('\nEvents:'));
    expect(section).toMatch(/Warning\s+BackOff\s+.*kubelet\s+Back-off restarting failed container crash in pod crashy_default\(/);
    expect(section).toMatch(/Normal\s+Created\s+.*kubelet\s+Created container crash/);
  }, 150_000);
});
