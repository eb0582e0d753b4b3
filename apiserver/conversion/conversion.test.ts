/**
 * Served versions that are conversions: events.k8s.io/v1 Event over core/v1 Event's records
 * and autoscaling/v1 HorizontalPodAutoscaler over autoscaling/v2's, as kube-apiserver 1.32
 * converts them (field renames; v1's CPU target and the annotations that carry what v1
 * cannot show), through the API on both logs: an object written through one version is
 * read, listed, watched and patched through the other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../../log/port.ts';
import { describeOnBothLogs, logEnd, openTestLog, startTestApiServer, tempDir, type TestApiServer } from '../testing.ts';
import { autoscalingV1HorizontalPodAutoscaler as hpaV1 } from './autoscaling-v1.ts';
import { eventsV1Event } from './events.ts';
import { storedFromServed } from './index.ts';

const v2Hpa = {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'web', namespace: 'default', annotations: { team: 'a' } },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    minReplicas: 2,
    maxReplicas: 10,
    metrics: [
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } },
      { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '1k' } } },
      {
        type: 'Object',
        object: { describedObject: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'main' }, metric: { name: 'rps' }, target: { type: 'Value', value: '10k' } },
      },
      { type: 'External', external: { metric: { name: 'queue', selector: { matchLabels: { q: 'jobs' } } }, target: { type: 'AverageValue', averageValue: '30' } } },
      { type: 'ContainerResource', containerResource: { name: 'cpu', container: 'app', target: { type: 'Utilization', averageUtilization: 70 } } },
    ],
    behavior: { scaleDown: { stabilizationWindowSeconds: 300, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }] } },
  },
  status: {
    currentReplicas: 3,
    desiredReplicas: 4,
    currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 55, averageValue: '110m' } } }],
    conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'ReadyForNewScale', message: 'ok' }],
  },
};

describe('autoscaling/v1 HorizontalPodAutoscaler conversion', () => {
  it('shows the CPU target in v1 fields and everything else in the round-trip annotations', () => {
    const served = hpaV1.fromStored(structuredClone(v2Hpa));
    expect(served).toMatchObject({
      apiVersion: 'autoscaling/v1',
      spec: { minReplicas: 2, maxReplicas: 10, targetCPUUtilizationPercentage: 60, scaleTargetRef: { kind: 'Deployment', name: 'web' } },
      status: { currentReplicas: 3, desiredReplicas: 4, currentCPUUtilizationPercentage: 55 },
    });
    const annotations = (served['metadata'] as { annotations: Record<string, string> }).annotations;
    expect(annotations['team']).toBe('a');
    expect(JSON.parse(annotations['autoscaling.alpha.kubernetes.io/metrics']!)).toEqual([
      { type: 'Resource', resource: { name: 'memory', targetAverageValue: '500Mi' } },
      { type: 'Pods', pods: { metricName: 'qps', targetAverageValue: '1k' } },
      { type: 'Object', object: { target: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', name: 'main' }, metricName: 'rps', targetValue: '10k' } },
      { type: 'External', external: { metricName: 'queue', metricSelector: { matchLabels: { q: 'jobs' } }, targetAverageValue: '30' } },
      { type: 'ContainerResource', containerResource: { name: 'cpu', targetAverageUtilization: 70, container: 'app' } },
    ]);
    expect(JSON.parse(annotations['autoscaling.alpha.kubernetes.io/current-metrics']!)).toEqual([
      { type: 'Resource', resource: { name: 'cpu', currentAverageUtilization: 55, currentAverageValue: '110m' } },
    ]);
    expect(JSON.parse(annotations['autoscaling.alpha.kubernetes.io/conditions']!)).toEqual(v2Hpa.status.conditions);
    // kube marshals its internal behavior type, which has no JSON tags: Go field names.
    expect(JSON.parse(annotations['autoscaling.alpha.kubernetes.io/behavior']!)).toEqual({
      ScaleUp: null,
      ScaleDown: { StabilizationWindowSeconds: 300, SelectPolicy: 'Max', Policies: [{ Type: 'Percent', Value: 10, PeriodSeconds: 60 }] },
    });
  });

  it('round-trips v2 → v1 → v2 without losing a metric, status, condition or behavior', () => {
    const back = hpaV1.toStored(hpaV1.fromStored(structuredClone(v2Hpa)));
    expect((back['metadata'] as { annotations: unknown }).annotations).toEqual({ team: 'a' });
    const spec = back['spec'] as typeof v2Hpa.spec;
    // kube appends the CPU target after the annotation's metrics.
    expect(spec.metrics).toEqual([...v2Hpa.spec.metrics.slice(1), v2Hpa.spec.metrics[0]]);
    expect(spec.behavior).toEqual(v2Hpa.spec.behavior);
    expect(back['status']).toEqual(v2Hpa.status);
  });

  it('gives a v1 HPA without a CPU target kube 80 % CPU utilization, and drops round-trip annotations a client sends', () => {
    const stored = hpaV1.toStored({
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'x' },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'x' }, maxReplicas: 3 },
    });
    expect((stored['spec'] as { metrics: unknown }).metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
    expect(() =>
      hpaV1.toStored({ metadata: { name: 'x', annotations: { 'autoscaling.alpha.kubernetes.io/metrics': '[{' } }, spec: { maxReplicas: 1 } }),
    ).toThrow(/autoscaling.alpha.kubernetes.io\/metrics.*not valid JSON/);
  });
});

describe('events.k8s.io/v1 Event conversion', () => {
  it('renames the fields kube renames and keeps the rest', () => {
    const stored = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e', namespace: 'default' },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
      reason: 'Started',
      message: 'Started container app',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: '2026-01-01T00:00:00Z',
      lastTimestamp: '2026-01-01T00:00:05Z',
      count: 3,
      type: 'Normal',
      reportingComponent: 'kubelet',
      reportingInstance: 'node-1',
    };
    const served = eventsV1Event.fromStored(stored);
    expect(served).toEqual({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: stored.metadata,
      regarding: stored.involvedObject,
      reason: 'Started',
      note: 'Started container app',
      deprecatedSource: stored.source,
      deprecatedFirstTimestamp: stored.firstTimestamp,
      deprecatedLastTimestamp: stored.lastTimestamp,
      deprecatedCount: 3,
      type: 'Normal',
      reportingController: 'kubelet',
      reportingInstance: 'node-1',
    });
    expect(eventsV1Event.toStored(served)).toEqual(stored);
  });

  it('reports the core field names an events.k8s.io/v1 body may not use as unknown', () => {
    const { stored, unknownFields } = storedFromServed(eventsV1Event, { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'e' }, message: 'old name', note: 'new name' });
    expect(unknownFields).toEqual(['message']);
    expect(stored['message']).toBe('new name');
  });
});

describeOnBothLogs('served versions that are conversions', (adapter) => {
  const temp = tempDir('conversion-');
  let log: EventLog;
  let api: TestApiServer;
  const appended = async (): Promise<number> => (await logEnd(log, 'desired')) + (await logEnd(log, 'observed'));

  beforeAll(async () => {
    log = await openTestLog(adapter, { dir: temp.dir });
    api = await startTestApiServer(log, temp.dir);
    expect((await api.client.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'conv' } } })).status).toBe(201);
  });

  afterAll(async () => {
    await api?.close();
    await log?.close();
    temp.remove();
  });

  it('serves both groups in discovery, autoscaling with v2 preferred', async () => {
    const autoscaling = await api.client.request('GET', '/apis/autoscaling');
    expect(autoscaling.body).toMatchObject({ versions: [{ version: 'v2' }, { version: 'v1' }], preferredVersion: { version: 'v2' } });
    const events = await api.client.request('GET', '/apis/events.k8s.io/v1');
    expect(events.body).toMatchObject({ resources: [{ name: 'events', kind: 'Event', namespaced: true }] });
    const v1 = await api.client.request('GET', '/apis/autoscaling/v1');
    expect((v1.body as { resources: { name: string }[] }).resources.map((r) => r.name)).toEqual(['horizontalpodautoscalers', 'horizontalpodautoscalers/status']);
  });

  it('creates an Event through events.k8s.io/v1 and reads it through core/v1, and back', async () => {
    const created = await api.client.request('POST', '/apis/events.k8s.io/v1/namespaces/conv/events', {
      body: {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: 'started' },
        eventTime: '2026-01-01T00:00:00.000000Z',
        regarding: { kind: 'Pod', name: 'web-1', namespace: 'conv' },
        reason: 'Started',
        note: 'Started container app',
        type: 'Normal',
        action: 'Start',
        reportingController: 'example.com/agent',
        reportingInstance: 'agent-1',
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ apiVersion: 'events.k8s.io/v1', regarding: { name: 'web-1' }, note: 'Started container app' });
    const core = await api.client.request('GET', '/api/v1/namespaces/conv/events/started');
    expect(core.body).toMatchObject({ apiVersion: 'v1', involvedObject: { name: 'web-1' }, message: 'Started container app', reportingComponent: 'example.com/agent' });
    const list = await api.client.request('GET', '/apis/events.k8s.io/v1/namespaces/conv/events');
    expect(list.body).toMatchObject({ kind: 'EventList', apiVersion: 'events.k8s.io/v1', items: [{ apiVersion: 'events.k8s.io/v1', note: 'Started container app' }] });
    const patched = await api.client.request('PATCH', '/apis/events.k8s.io/v1/namespaces/conv/events/started', {
      body: { metadata: { labels: { seen: 'yes' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ apiVersion: 'events.k8s.io/v1', metadata: { labels: { seen: 'yes' } }, note: 'Started container app' });
  });

  it("judges an events.k8s.io/v1 write by that API's strict rules, naming kube's fields, and appends nothing", async () => {
    const before = await appended();
    const refused = await api.client.request('POST', '/apis/events.k8s.io/v1/namespaces/conv/events', {
      body: { metadata: { name: 'bad' }, regarding: { kind: 'Pod', name: 'p', namespace: 'conv' }, reason: 'X', type: 'Odd', deprecatedCount: 2 },
    });
    expect(refused.status).toBe(422);
    const fields = (refused.body as { details: { causes: { field: string }[] } }).details.causes.map((cause) => cause.field);
    expect(fields).toEqual(expect.arrayContaining(['eventTime', 'type', 'count']));
    const immutable = await api.client.request('PATCH', '/apis/events.k8s.io/v1/namespaces/conv/events/started', {
      body: { note: 'rewritten' },
      contentType: 'application/merge-patch+json',
    });
    expect(immutable.status).toBe(422);
    expect((immutable.body as { message: string }).message).toContain('message: Invalid value: "rewritten": field is immutable');
    expect(await appended()).toBe(before);
    // core/v1 keeps the legacy rules only: an old-style event may be written and changed.
    const legacy = await api.client.request('POST', '/api/v1/namespaces/conv/events', {
      body: { metadata: { name: 'old' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'conv' }, reason: 'Pulled', message: 'pulled', count: 1 },
    });
    expect(legacy.status).toBe(201);
    const mismatch = await api.client.request('POST', '/api/v1/namespaces/conv/events', {
      body: { metadata: { name: 'elsewhere' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'other' }, reason: 'Pulled', message: 'pulled' },
    });
    expect(mismatch.status).toBe(422);
    expect((mismatch.body as { message: string }).message).toContain('involvedObject.namespace: Invalid value: "other": does not match event.namespace');
  });

  it('creates an HPA through autoscaling/v1, reads it through v2 with the implicit default, and watches it through v1', async () => {
    const created = await api.client.request('POST', '/apis/autoscaling/v1/namespaces/conv/horizontalpodautoscalers', {
      body: { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5 } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ apiVersion: 'autoscaling/v1', spec: { minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 80 } });
    const v2 = await api.client.request('GET', '/apis/autoscaling/v2/namespaces/conv/horizontalpodautoscalers/web');
    expect(v2.body).toMatchObject({
      apiVersion: 'autoscaling/v2',
      spec: { metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }] },
    });
    // A v2 change v1 cannot show survives a v1 read-modify-write in the annotations.
    const memory = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' } } };
    const updated = await api.client.request('PUT', '/apis/autoscaling/v2/namespaces/conv/horizontalpodautoscalers/web', {
      body: { ...(v2.body as object), spec: { ...(v2.body as { spec: object }).spec, metrics: [memory] } },
    });
    expect(updated.status).toBe(200);
    const asV1 = (await api.client.request('GET', '/apis/autoscaling/v1/namespaces/conv/horizontalpodautoscalers/web')).body as Record<string, unknown>;
    expect(asV1).toMatchObject({ spec: { maxReplicas: 5 } });
    expect((asV1['spec'] as Record<string, unknown>)['targetCPUUtilizationPercentage']).toBeUndefined();
    const rewritten = await api.client.request('PUT', '/apis/autoscaling/v1/namespaces/conv/horizontalpodautoscalers/web', {
      body: { ...asV1, spec: { ...(asV1['spec'] as object), maxReplicas: 7 } },
    });
    expect(rewritten.status).toBe(200);
    const again = await api.client.request('GET', '/apis/autoscaling/v2/namespaces/conv/horizontalpodautoscalers/web');
    expect(again.body).toMatchObject({ spec: { maxReplicas: 7, metrics: [memory] } });
    expect((again.body as { metadata: { annotations?: object } }).metadata.annotations).toBeUndefined();
    const watch = await api.client.watch('/apis/autoscaling/v1/namespaces/conv/horizontalpodautoscalers?watch=true&resourceVersion=0');
    expect(await watch.next()).toMatchObject({ type: 'ADDED', object: { apiVersion: 'autoscaling/v1', spec: { maxReplicas: 7 } } });
    watch.close();
  });
});
