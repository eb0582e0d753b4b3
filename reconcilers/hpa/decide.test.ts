/**
 * One HPA sync on a folded view: the scale write, the status (conditions with kube's reasons
 * and messages, currentMetrics), the Events, the failure paths (no metrics, a target that
 * is not there), and the re-run of a decision from the inputs its status write recorded.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeCustomObject, schemaRegistration, storageCodecOf } from '../../projections/index.ts';
import { CUSTOM_RESOURCE_DEFINITION_REF } from '../../schemas/kinds/domains.ts';
import type { CustomResourceDefinition, Deployment, Event, EventBody, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec, ObjectUpdated } from '../../schemas/index.ts';
import { createTestCluster, deploymentObject, runningPodStatus, type TestCluster } from '../testing.ts';
import { createHpaController, DECISION_INPUTS_ANNOTATION, recordedInputs, type MetricsSource, type PodMetricsItem } from './index.ts';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const HPA_KEY = 'HorizontalPodAutoscaler.autoscaling/default/web';

const hpaObject = (spec: Partial<HorizontalPodAutoscalerSpec> = {}): HorizontalPodAutoscaler => ({
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    minReplicas: 1,
    maxReplicas: 5,
    metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
    ...spec,
  },
});

/** A source answering `cpu` (a quantity) for each pod of the namespace. */
const sourceOf = (usage: Record<string, string>): MetricsSource => ({
  podMetrics: async () =>
    Object.entries(usage).map(([name, cpu]): PodMetricsItem => ({
      metadata: { name, namespace: 'default' },
      timestamp: new Date(NOW - 1000).toISOString(),
      window: '15s',
      containers: [{ name: 'main', usage: { cpu, memory: '10Mi' } }],
    })),
});

const kinds = (commands: readonly EventBody[]): string[] =>
  commands.map((c) => (c.type === 'ObjectCreated' || c.type === 'ObjectUpdated' ? `${c.type} ${c.object.kind}${c.type === 'ObjectUpdated' && c.subresource ? `/${c.subresource}` : ''}` : c.type));

describe('hpa decide', () => {
  let cluster: TestCluster;

  /** A Deployment `web` with `replicas` running, ready pods requesting 10m CPU each (started long ago). */
  const withPods = (replicas: number): string[] => {
    cluster.create(deploymentObject({ name: 'web', replicas }));
    const names = Array.from({ length: replicas }, (_, i) => `web-${i}`);
    for (const name of names) {
      cluster.create({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'default', labels: { app: 'web' } },
        spec: { containers: [{ name: 'main', image: 'x', resources: { requests: { cpu: '10m' } } }] },
      });
      cluster.podStatus(name, runningPodStatus(true, NOW - 3_600_000));
    }
    return names;
  };

  /** Decides twice: the first decision starts the fetch of the namespace's figures, the second uses them. */
  const decide = async (controller: ReturnType<typeof createHpaController>, now = NOW) => {
    expect(controller.decide(HPA_KEY, cluster.view(), { now })).toEqual({ commands: [], requeueAfterMs: 1000 });
    await new Promise((resolve) => setImmediate(resolve));
    return controller.decide(HPA_KEY, cluster.view(), { now });
  };

  beforeEach(() => {
    cluster = createTestCluster();
  });
  afterEach(async () => {
    await cluster.close();
  });

  it('scales a custom resource through its CRD\'s scale paths: its schema registered, then the object updated at specReplicasPath', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'databases.ops.example.com' },
      spec: {
        group: 'ops.example.com',
        scope: 'Namespaced',
        names: { plural: 'databases', singular: 'database', kind: 'Database', listKind: 'DatabaseList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', properties: { replicas: { type: 'integer' }, engine: { type: 'string' } } },
                  status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } },
                },
              },
            },
          },
        ],
      },
    } as unknown as CustomResourceDefinition;
    cluster.create(crd);
    const stored = cluster.view().get(`${CUSTOM_RESOURCE_DEFINITION_REF}//databases.ops.example.com`) as CustomResourceDefinition;
    const { codec, version } = storageCodecOf(stored, 'Database');
    const database = { apiVersion: 'ops.example.com/v1', kind: 'Database', metadata: { name: 'web', namespace: 'default', uid: 'db-uid' }, spec: { replicas: 2, engine: 'postgres' }, status: { replicas: 2, selector: 'app=web' } };
    expect(cluster.apply(schemaRegistration(stored, 'Database', codec, version), { type: 'CustomObjectCreated', object: encodeCustomObject(database as never, codec, 'ops.example.com/v1') }).map((r) => r.verdict.type)).toEqual(['accepted', 'accepted']);
    for (const name of ['web-0', 'web-1']) {
      cluster.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'x', resources: { requests: { cpu: '10m' } } }] } });
      cluster.podStatus(name, runningPodStatus(true, NOW - 3_600_000));
    }
    cluster.create(hpaObject({ scaleTargetRef: { apiVersion: 'ops.example.com/v1', kind: 'Database', name: 'web' } }));
    const decision = await decide(createHpaController({ metrics: sourceOf({ 'web-0': '20m', 'web-1': '30m' }) }));
    expect(kinds(decision.commands)).toEqual(['SchemaRegistered', 'CustomObjectUpdated', 'ObjectCreated Event', 'ObjectUpdated HorizontalPodAutoscaler/status']);
    expect(cluster.apply(...decision.commands).map((r) => r.verdict.type)).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
    const scaled = cluster.view().get('Database.ops.example.com/default/web') as unknown as typeof database;
    expect(scaled.spec).toEqual({ replicas: 4, engine: 'postgres' });
    expect(scaled.status).toEqual({ replicas: 2, selector: 'app=web' });
    const hpa = cluster.view().get(HPA_KEY) as HorizontalPodAutoscaler;
    expect(hpa.status).toMatchObject({ currentReplicas: 2, desiredReplicas: 4 });
  });

  it('reports a custom target without a scale subresource, or without replicas at its path, as kube\'s FailedGetScale', async () => {
    cluster.create(hpaObject({ scaleTargetRef: { apiVersion: 'ops.example.com/v1', kind: 'Missing', name: 'web' } }));
    const decision = await decide(createHpaController({ metrics: sourceOf({}) }));
    const status = decision.commands.find((c): c is ObjectUpdated => c.type === 'ObjectUpdated' && c.object.kind === 'HorizontalPodAutoscaler')!;
    expect((status.object as HorizontalPodAutoscaler).status?.conditions?.[0]).toMatchObject({ type: 'AbleToScale', status: 'False', reason: 'FailedGetScale', message: expect.stringContaining('no matches for kind "Missing" in group "ops.example.com"') });
  });

  it('scales a Deployment above its target through the scale subresource, with status, conditions and the SuccessfulRescale Event', async () => {
    withPods(2);
    cluster.create(hpaObject());
    // 20m and 30m of 10m requests: 250 % of request, 5x the 50 % target → 10, capped at max 5.
    const decision = await decide(createHpaController({ metrics: sourceOf({ 'web-0': '20m', 'web-1': '30m' }) }));
    expect(decision.requeueAfterMs).toBe(15_000);
    expect(kinds(decision.commands)).toEqual(['ObjectUpdated Deployment/scale', 'ObjectCreated Event', 'ObjectUpdated HorizontalPodAutoscaler/status']);
    const [scale, event, status] = decision.commands as [ObjectUpdated, { object: Event }, ObjectUpdated];
    expect((scale.object as Deployment).spec?.replicas).toBe(4);
    expect(event.object).toMatchObject({ type: 'Normal', reason: 'SuccessfulRescale', message: 'New size: 4; reason: cpu resource utilization (percentage of request) above target', source: { component: 'horizontal-pod-autoscaler' } });
    const hpaStatus = (status.object as HorizontalPodAutoscaler).status!;
    expect(hpaStatus).toMatchObject({
      currentReplicas: 2,
      desiredReplicas: 4,
      lastScaleTime: '2026-06-01T12:00:00Z',
      currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 250, averageValue: '25m' } } }],
    });
    // No behavior: kube's legacy limit, max(2 × 2, 4) = 4 replicas, below maxReplicas 5.
    expect(hpaStatus.conditions?.map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['AbleToScale', 'True', 'SucceededRescale', 'the HPA controller was able to update the target scale to 4'],
      ['ScalingActive', 'True', 'ValidMetricFound', 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)'],
      ['ScalingLimited', 'True', 'ScaleUpLimit', 'the desired replica count is increasing faster than the maximum scale rate'],
    ]);
    // The fold accepts every command.
    expect(cluster.apply(...decision.commands).map((r) => r.verdict.type)).toEqual(['accepted', 'accepted', 'accepted']);
    expect((cluster.view().get('Deployment/default/web') as Deployment).spec?.replicas).toBe(4);
  });

  it('re-runs a recorded decision from the inputs on its status write into the same commands', async () => {
    withPods(2);
    cluster.create(hpaObject());
    const live = await decide(createHpaController({ metrics: sourceOf({ 'web-0': '20m', 'web-1': '30m', other: '900m' }) }));
    const status = live.commands.find((c) => c.type === 'ObjectUpdated' && c.subresource === 'status') as ObjectUpdated;
    const inputs = recordedInputs(live.commands, HPA_KEY);
    // Only the target's pods are recorded.
    expect(inputs?.metrics).toMatchObject({ type: 'ok', pods: [{ name: 'web-0' }, { name: 'web-1' }] });
    expect(JSON.parse(status.object.metadata.annotations?.[DECISION_INPUTS_ANNOTATION] ?? '{}').history).toBeNull();
    // A controller without a source, as `debug reconcile` makes it.
    const again = createHpaController().decide(HPA_KEY, cluster.view(), { now: NOW, recorded: live.commands });
    expect(again.commands).toEqual(live.commands);
  });

  it('keeps the count within tolerance and writes nothing when nothing changed', async () => {
    withPods(2);
    cluster.create(hpaObject());
    const controller = createHpaController({ metrics: sourceOf({ 'web-0': '5m', 'web-1': '5m' }) });
    const first = await decide(controller);
    expect(kinds(first.commands)).toEqual(['ObjectUpdated HorizontalPodAutoscaler/status']);
    cluster.apply(...first.commands);
    expect(controller.decide(HPA_KEY, cluster.view(), { now: NOW + 15_000 }).commands).toEqual([]);
  });

  it('reports missing metrics as kube does (FailedGetResourceMetric, FailedComputeMetricsReplicas, ScalingActive False)', async () => {
    withPods(1);
    cluster.create(hpaObject());
    const decision = await decide(createHpaController({ metrics: sourceOf({}) }));
    expect(kinds(decision.commands)).toEqual(['ObjectCreated Event', 'ObjectCreated Event', 'ObjectUpdated HorizontalPodAutoscaler/status']);
    const events = decision.commands.slice(0, 2).map((c) => (c as { object: Event }).object);
    expect(events.map((e) => [e.type, e.reason, e.message])).toEqual([
      ['Warning', 'FailedGetResourceMetric', 'failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API'],
      [
        'Warning',
        'FailedComputeMetricsReplicas',
        'invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API',
      ],
    ]);
    const status = ((decision.commands[2] as ObjectUpdated).object as HorizontalPodAutoscaler).status!;
    expect(status.conditions?.find((c) => c.type === 'ScalingActive')).toMatchObject({
      status: 'False',
      reason: 'FailedGetResourceMetric',
      message: 'the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API',
    });
    expect(status.currentReplicas).toBe(1);
  });

  it('reports a target that does not exist (FailedGetScale, AbleToScale False)', async () => {
    cluster.create(hpaObject());
    const decision = await decide(createHpaController({ metrics: sourceOf({}) }));
    const event = (decision.commands[0] as { object: Event }).object;
    expect([event.reason, event.message]).toEqual(['FailedGetScale', 'deployments.apps "web" not found']);
    const status = ((decision.commands[1] as ObjectUpdated).object as HorizontalPodAutoscaler).status!;
    expect(status.conditions).toEqual([
      { type: 'AbleToScale', status: 'False', reason: 'FailedGetScale', message: 'the HPA controller was unable to get the target\'s current scale: deployments.apps "web" not found', lastTransitionTime: '2026-06-01T12:00:00Z' },
    ]);
  });

  it('scales down after the stabilization window, as far as the policy allows', async () => {
    withPods(4);
    cluster.create(hpaObject({ behavior: { scaleDown: { stabilizationWindowSeconds: 30, policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } } }));
    const controller = createHpaController({ metrics: sourceOf({ 'web-0': '0', 'web-1': '0', 'web-2': '0', 'web-3': '0' }) });
    // The first sync records the current count as a recommendation: the window holds it at 4.
    const first = await decide(controller);
    expect(first.commands.some((c) => c.type === 'ObjectUpdated' && c.subresource === 'scale')).toBe(false);
    cluster.apply(...first.commands);
    const later = controller.decide(HPA_KEY, cluster.view(), { now: NOW + 31_000 });
    const scale = later.commands.find((c) => c.type === 'ObjectUpdated' && c.subresource === 'scale') as ObjectUpdated;
    expect((scale.object as Deployment).spec?.replicas).toBe(3);
    const event = later.commands.find((c) => c.type === 'ObjectCreated' && c.object.kind === 'Event') as { object: Event };
    expect(event.object.message).toBe('New size: 3; reason: All metrics below target');
  });
});
