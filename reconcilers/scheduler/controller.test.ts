import { describe, expect, it } from 'vitest';
import { createProjection, type Projection } from '../../projections/projection.ts';
import { makeEvent, toBatches } from '../../projections/testing.ts';
import type { EventBody, KubeObject, Node, Pod } from '../../schemas/index.ts';
import { createSchedulerController, decidePods, defaultSchedulerProfiles } from './controller.ts';
import { tempProjections } from '../../projections/temp-projections.ts';
import { parseSchedulerConfig } from './config/index.ts';
import { createSchedulerMetrics } from './metrics.ts';
import { Registry } from 'prom-client';

const defaultProfiles = defaultSchedulerProfiles();

const temp = tempProjections('logplane-sched-');

const node = (name: string): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name } },
  spec: {},
  status: {
    capacity: { cpu: '4', memory: '8Gi', pods: '110' },
    allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True' }],
  },
});
const pod = (name: string, cpu?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'main', image: 'logplane/echo', ...(cpu ? { resources: { requests: { cpu } } } : {}) }] },
});

const cluster = (objects: KubeObject[]): Projection => {
  const dir = temp.dir();
  const projection = createProjection({ dir });
  temp.track(projection);
  const events = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } } as KubeObject,
    ...objects,
  ].map((o) => makeEvent(`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, { type: 'ObjectCreated', object: o }));
  for (const batch of toBatches('desired', events)) projection.applyBatch(batch);
  return projection;
};

const boundNode = (commands: readonly EventBody[] | undefined): string | undefined => {
  const bind = commands?.find((c) => c.type === 'PodBound');
  return bind?.type === 'PodBound' ? bind.node : undefined;
};

describe('scheduler controller round', () => {
  it.each([
    ['pods without requests', undefined],
    ['pods with cpu requests', '500m'],
  ])('spreads %s of one round over equal nodes (each binding is assumed for the next pod)', (_label, cpu) => {
    const projection = cluster([node('node-1'), node('node-2'), pod('a', cpu), pod('b', cpu)]);
    const decisions = decidePods(['Pod/default/a', 'Pod/default/b'], projection.view(), { now: 0 }, defaultProfiles);
    const nodes = ['Pod/default/a', 'Pod/default/b'].map((k) => boundNode(decisions.get(k)?.commands));
    expect(new Set(nodes)).toEqual(new Set(['node-1', 'node-2']));
  });

  it('is deterministic: the same view gives the same commands', () => {
    const projection = cluster([node('node-1'), node('node-2'), node('node-3'), pod('a', '1'), pod('b', '1'), pod('c', '1')]);
    const keys = ['Pod/default/a', 'Pod/default/b', 'Pod/default/c'];
    const first = decidePods(keys, projection.view(), { now: 0 }, defaultProfiles);
    const second = decidePods(keys, projection.view(), { now: 0 }, defaultProfiles);
    expect(JSON.stringify([...second])).toBe(JSON.stringify([...first]));
  });
});

describe('scheduler controller: SchedulingGates', () => {
  const gated = (name: string, gates: string[]): Pod => {
    const base = pod(name);
    return { ...base, spec: { ...base.spec, schedulingGates: gates.map((gate) => ({ name: gate })) } };
  };

  it('does not bind a gated pod; says so in PodScheduled once; binds it once the gates are gone', () => {
    const projection = cluster([node('node-1'), gated('g', ['example.com/quota']), pod('free')]);
    const view = projection.view();
    const decisions = decidePods(['Pod/default/g', 'Pod/default/free'], view, { now: 0 }, defaultProfiles);
    expect(boundNode(decisions.get('Pod/default/free')?.commands)).toBe('node-1');
    const commands = decisions.get('Pod/default/g')?.commands ?? [];
    expect(boundNode(commands)).toBeUndefined();
    const update = commands[0];
    expect(update?.type === 'ObjectUpdated' && (update.object as Pod).status?.conditions).toEqual([
      {
        type: 'PodScheduled',
        status: 'False',
        reason: 'SchedulingGated',
        message: 'Scheduling is blocked due to non-empty scheduling gates',
        lastTransitionTime: '1970-01-01T00:00:00Z',
      },
    ]);
    // With the condition already there, nothing more is written.
    const conditioned = update?.type === 'ObjectUpdated' ? (update.object as Pod) : gated('g', ['x']);
    const again = cluster([node('node-1'), conditioned]);
    expect(decidePods(['Pod/default/g'], again.view(), { now: 1 }, defaultProfiles).get('Pod/default/g')).toEqual({ commands: [] });
    // Gates removed (a pod update): it is scheduled.
    const ungated = cluster([node('node-1'), { ...conditioned, spec: { ...conditioned.spec, schedulingGates: [] } }]);
    expect(boundNode(decidePods(['Pod/default/g'], ungated.view(), { now: 2 }, defaultProfiles).get('Pod/default/g')?.commands)).toBe('node-1');
  });

  it('a node change retries waiting pods but not gated ones', () => {
    const projection = cluster([gated('g', ['wait']), pod('w')]);
    const controller = createSchedulerController();
    const change = { type: 'ADDED', key: 'Node//node-9', object: node('node-9') } as unknown as Parameters<typeof controller.keysFor>[0];
    expect(controller.keysFor(change, projection.view())).toEqual(['Pod/default/w']);
    expect(controller.initialKeys?.(projection.view())).toEqual(['Pod/default/g', 'Pod/default/w']);
  });
});

describe('scheduler controller: cluster objects', () => {
  it('evaluates a namespaceSelector against the Namespace object labels in the view', () => {
    const db: Pod = { ...pod('db'), metadata: { name: 'db', namespace: 'prod', labels: { app: 'db' } }, spec: { ...pod('db').spec, nodeName: 'node-2' } };
    const app: Pod = {
      ...pod('app'),
      spec: {
        ...pod('app').spec,
        affinity: {
          podAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { labelSelector: { matchLabels: { app: 'db' } }, namespaceSelector: { matchLabels: { env: 'production' } }, topologyKey: 'kubernetes.io/hostname' },
            ],
          },
        },
      },
    };
    const prod = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod', labels: { env: 'production' } } } as KubeObject;
    const projection = cluster([prod, node('node-1'), node('node-2'), node('node-3'), db, app]);
    expect(boundNode(decidePods(['Pod/default/app'], projection.view(), { now: 0 }, defaultProfiles).get('Pod/default/app')?.commands)).toBe('node-2');
    const unlabelled = { ...prod, metadata: { name: 'prod' } } as KubeObject;
    const other = cluster([unlabelled, node('node-1'), node('node-2'), node('node-3'), db, app]);
    const decision = decidePods(['Pod/default/app'], other.view(), { now: 0 }, defaultProfiles).get('Pod/default/app');
    expect(boundNode(decision?.commands)).toBeUndefined();
  });
});

describe('scheduler controller: PrioritySort', () => {
  it('a round tries higher-priority pods first, so they take the last room', () => {
    const small: Node = { ...node('node-1'), status: { ...node('node-1').status, allocatable: { cpu: '1', memory: '8Gi', pods: '110' } } };
    const low = pod('a-low', '1');
    const high: Pod = { ...pod('b-high', '1'), spec: { ...pod('b-high', '1').spec, priority: 1000 } };
    const projection = cluster([small, low, high]);
    const decisions = decidePods(['Pod/default/a-low', 'Pod/default/b-high'], projection.view(), { now: 0 }, defaultProfiles);
    expect(boundNode(decisions.get('Pod/default/b-high')?.commands)).toBe('node-1');
    expect(boundNode(decisions.get('Pod/default/a-low')?.commands)).toBeUndefined();
    const update = decisions.get('Pod/default/a-low')?.commands[0];
    expect(update?.type === 'ObjectUpdated' && (update.object as Pod).status?.conditions?.[0]?.message).toBe(
      // kube's PostFilter suffix: no pod of lower priority than a-low's to preempt.
      '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..',
    );
  });
});

describe('scheduler controller: extended resources', () => {
  it('a nvidia.com/gpu pod waits with kube message until a node advertising the GPU joins, then binds there', () => {
    const gpuPod: Pod = { ...pod('trainer'), spec: { ...pod('trainer').spec, containers: [{ name: 'main', image: 'logplane/echo', resources: { limits: { 'nvidia.com/gpu': '1' } } }] } };
    const before = cluster([node('node-1'), node('node-2'), gpuPod]);
    const waiting = decidePods(['Pod/default/trainer'], before.view(), { now: 0 }, defaultProfiles).get('Pod/default/trainer');
    const update = waiting?.commands[0];
    expect(update?.type === 'ObjectUpdated' && (update.object as Pod).status?.conditions?.[0]?.message).toBe(
      // More GPUs than the nodes advertise: removing pods cannot help (kube's UnschedulableAndUnresolvable).
      '0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..',
    );
    const gpuNode: Node = { ...node('node-gpu'), status: { ...node('node-gpu').status, allocatable: { cpu: '4', memory: '8Gi', pods: '110', 'nvidia.com/gpu': '1' } } };
    const after = cluster([node('node-1'), node('node-2'), gpuNode, gpuPod]);
    // The node's arrival retries the pod; it binds to the GPU node.
    const controller = createSchedulerController();
    const change = { type: 'ADDED', key: 'Node//node-gpu', object: gpuNode } as unknown as Parameters<typeof controller.keysFor>[0];
    expect(controller.keysFor(change, after.view())).toEqual(['Pod/default/trainer']);
    expect(boundNode(decidePods(['Pod/default/trainer'], after.view(), { now: 1 }, defaultProfiles).get('Pod/default/trainer')?.commands)).toBe('node-gpu');
  });
});

describe('scheduler controller: default topology spreading from the view', () => {
  const sized = (name: string, cpu: string): Node => ({ ...node(name), status: { ...node(name).status, allocatable: { cpu, memory: '64Gi', pods: '110' } } });
  const web = (name: string, extra: Partial<Pod['metadata']> = {}, nodeName?: string): Pod => ({
    ...pod(name, '1'),
    metadata: { name, namespace: 'default', labels: { app: 'web' }, ...extra },
    spec: { ...pod(name, '1').spec, ...(nodeName === undefined ? {} : { nodeName }) },
  });
  const placeNew = (objects: KubeObject[]) =>
    boundNode(decidePods(['Pod/default/new'], cluster(objects).view(), { now: 0 }, defaultProfiles).get('Pod/default/new')?.commands);

  it('a Service selecting the pods spreads them over hosts; without it resources alone decide', () => {
    // node-1 is much bigger: LeastAllocated alone prefers it even with a web pod on it.
    const base = [sized('node-1', '64'), sized('node-2', '8'), web('old', {}, 'node-1'), web('new')];
    expect(placeNew(base)).toBe('node-1');
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } } as KubeObject;
    expect(placeNew([service, ...base])).toBe('node-2');
  });

  it('so does the ReplicaSet that controls them', () => {
    const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-1', namespace: 'default', uid: 'rs-uid' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'logplane/echo' }] } } } } as KubeObject;
    const owned = { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'rs-uid', controller: true }] };
    expect(placeNew([rs, sized('node-1', '64'), sized('node-2', '8'), web('old', owned, 'node-1'), web('new', owned)])).toBe('node-2');
  });
});

describe('scheduler controller: preemption (DefaultPreemption)', () => {
  const prioritized = (name: string, cpu: string, priority: number, more: Partial<Pod['spec']> = {}): Pod => ({
    ...pod(name, cpu),
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { ...pod(name, cpu).spec, priority, ...more },
  });
  const full = (): KubeObject[] => [
    node('node-1'),
    node('node-2'),
    ...['a', 'b', 'c', 'd'].map((n) => prioritized(`low-1${n}`, '1', 0, { nodeName: 'node-1' })),
    ...['a', 'b', 'c'].map((n) => prioritized(`low-2${n}`, '1', 0, { nodeName: 'node-2' })),
    prioritized('mid-2', '1', 10, { nodeName: 'node-2' }),
  ];

  it('marks and gracefully deletes exactly the victims it needs, and nominates the node', () => {
    const projection = cluster([...full(), prioritized('high', '2', 1000)]);
    const decision = decidePods(['Pod/default/high'], projection.view(), { now: 0 }, defaultProfiles).get('Pod/default/high');
    const commands = decision?.commands ?? [];
    // node-1 holds only priority-0 pods (node-2's most important victim would be priority 10).
    const deleted = commands.flatMap((c) => (c.type === 'ObjectDeleted' ? [[c.name, c.uid, c.gracePeriodSeconds]] : []));
    expect(deleted).toEqual([
      ['low-1c', 'uid-low-1c', null],
      ['low-1d', 'uid-low-1d', null],
    ]);
    const marked = commands.flatMap((c) => (c.type === 'ObjectUpdated' && c.object.metadata.name.startsWith('low') ? [c.object as Pod] : []));
    expect(marked.map((p) => [p.metadata.name, p.status?.conditions?.find((c) => c.type === 'DisruptionTarget')])).toEqual(
      ['low-1c', 'low-1d'].map((name) => [
        name,
        { type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler', message: 'default-scheduler: preempting to accommodate a higher priority pod', lastTransitionTime: '1970-01-01T00:00:00Z' },
      ]),
    );
    const own = commands.at(-1);
    expect(own?.type === 'ObjectUpdated' && own.object.kind === 'Pod' && own.object.status).toMatchObject({
      nominatedNodeName: 'node-1',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: '0/2 nodes are available: 2 Insufficient cpu. preemption: nominated node node-1, preempting 2 pod(s): default/low-1c, default/low-1d.',
        },
        {
          type: 'scheduler.logplane.io/Preemption',
          status: 'True',
          reason: 'VictimsPreempted',
          message:
            'nominated node node-1, preempting 2 pod(s): default/low-1c (uid uid-low-1c, priority 0), default/low-1d (uid uid-low-1d, priority 0); reason: 0/2 nodes are available: 2 Insufficient cpu.',
        },
      ],
    });
    expect(commands.some((c) => c.type === 'PodBound')).toBe(false);
  });

  it('binds the preemptor once its victims are gone, with the preemption (victims and reason) in the rationale', () => {
    const objects = [...full(), prioritized('high', '2', 1000)];
    const projection = cluster(objects);
    // The log so far: the namespace and `objects` on the desired topic; the scheduler's commands follow.
    const next = { desired: [objects.length + 1], observed: [0] };
    const append = (commands: readonly EventBody[]): void => {
      for (const command of commands) {
        const topic = command.type === 'ObjectUpdated' && command.subresource === 'status' ? 'observed' : 'desired';
        const name = command.type === 'ObjectUpdated' ? command.object.metadata.name : command.type === 'ObjectDeleted' || command.type === 'PodBound' ? command.name : '';
        for (const batch of toBatches(topic, [makeEvent(`Pod/default/${name}`, command, { type: 'controller', name: 'scheduler' })], 1, next[topic])) projection.applyBatch(batch);
      }
    };
    const decideHigh = (): readonly EventBody[] => {
      const commands = decidePods(['Pod/default/high'], projection.view(), { now: 1000 }, defaultProfiles).get('Pod/default/high')?.commands ?? [];
      // Re-run on the same view (`debug reconcile`), the decision is the same.
      expect(decidePods(['Pod/default/high'], projection.view(), { now: 1000 }, defaultProfiles).get('Pod/default/high')?.commands).toEqual(commands);
      return commands;
    };
    const high = (): Pod => projection.view().get('Pod/default/high') as Pod;
    const record = (): unknown => high().status?.conditions?.find((c) => c.type === 'scheduler.logplane.io/Preemption');

    append(decideHigh());
    const victims = ['low-1c', 'low-1d'];
    expect(victims.map((name) => (projection.view().get(`Pod/default/${name}`) as Pod).metadata.deletionTimestamp)).toEqual([expect.any(String), expect.any(String)]);
    const recorded = record();
    expect(recorded).toBeDefined();
    // While the victims terminate the pod waits (kube's "not eligible"): its PodScheduled message changes, the record stays.
    append(decideHigh());
    expect(high().status?.conditions?.find((c) => c.type === 'PodScheduled')?.message).toBe(
      '0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to a terminating pod on the nominated node..',
    );
    expect(record()).toEqual(recorded);
    // Gone (the kubelet's final delete): the pod binds to its node, and the binding names the preemption it followed.
    append(victims.map((name) => ({ type: 'ObjectDeleted', kind: 'Pod', namespace: 'default', name, expectedResourceVersion: null, uid: `uid-${name}`, propagationPolicy: null, gracePeriodSeconds: 0 })));
    expect(victims.map((name) => projection.view().get(`Pod/default/${name}`))).toEqual([undefined, undefined]);
    const bound = decideHigh();
    expect(boundNode(bound)).toBe('node-1');
    const binding = bound.find((c) => c.type === 'PodBound');
    expect(binding?.type === 'PodBound' && binding.rationale.preemption).toEqual({
      nominatedNode: 'node-1',
      reason: '0/2 nodes are available: 2 Insufficient cpu.',
      victims: victims.map((name) => ({ namespace: 'default', name, uid: `uid-${name}`, priority: 0 })),
    });
  });

  it('a binding that no preemption preceded, or whose nomination was cleared, has no preemption in its rationale', () => {
    const record = {
      type: 'scheduler.logplane.io/Preemption',
      status: 'True',
      reason: 'VictimsPreempted',
      message: 'nominated node node-2, preempting 1 pod(s): default/gone (uid uid-gone, priority 0); reason: 0/2 nodes are available: 2 Insufficient cpu.',
    };
    const rationaleOf = (status: Pod['status']): unknown => {
      const projection = cluster([node('node-1'), node('node-2'), { ...prioritized('p', '1', 10), status } as Pod]);
      const bind = decidePods(['Pod/default/p'], projection.view(), { now: 0 }, defaultProfiles).get('Pod/default/p')?.commands.find((c) => c.type === 'PodBound');
      return bind?.type === 'PodBound' ? bind.rationale : undefined;
    };
    expect(rationaleOf(undefined)).not.toHaveProperty('preemption');
    expect(rationaleOf({ phase: 'Pending', conditions: [record] })).not.toHaveProperty('preemption');
    expect(rationaleOf({ phase: 'Pending', nominatedNodeName: 'node-1', conditions: [record] })).not.toHaveProperty('preemption');
    expect(rationaleOf({ phase: 'Pending', nominatedNodeName: 'node-2', conditions: [record] })).toHaveProperty('preemption.victims', [
      { namespace: 'default', name: 'gone', uid: 'uid-gone', priority: 0 },
    ]);
  });

  it('a pod of lower or equal priority does not take the room kept for a nominated pod; a higher one does', () => {
    const nominatedPod: Pod = { ...prioritized('nominated', '3', 100), status: { phase: 'Pending', nominatedNodeName: 'node-1' } };
    const objects = [node('node-1'), prioritized('low-1', '1', 0, { nodeName: 'node-1' }), nominatedPod];
    const projection = cluster([...objects, prioritized('equal', '1', 100), prioritized('higher', '1', 101)]);
    const view = projection.view();
    expect(view.get('Pod/default/nominated')).toMatchObject({ status: { nominatedNodeName: 'node-1' } });
    const equal = decidePods(['Pod/default/equal'], view, { now: 0 }, defaultProfiles).get('Pod/default/equal');
    expect(boundNode(equal?.commands)).toBeUndefined();
    const higher = decidePods(['Pod/default/higher'], view, { now: 0 }, defaultProfiles).get('Pod/default/higher');
    expect(boundNode(higher?.commands)).toBe('node-1');
  });

  it('with preemptionPolicy Never it only waits, with kube’s message', () => {
    const projection = cluster([...full(), prioritized('polite', '2', 1000, { preemptionPolicy: 'Never' })]);
    const commands = decidePods(['Pod/default/polite'], projection.view(), { now: 0 }, defaultProfiles).get('Pod/default/polite')?.commands ?? [];
    expect(commands.map((c) => c.type)).toEqual(['ObjectUpdated']);
    const update = commands[0];
    expect(update?.type === 'ObjectUpdated' && (update.object as Pod).status?.conditions?.[0]?.message).toBe(
      '0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never..',
    );
  });
});

describe('scheduler profiles (KubeSchedulerConfiguration)', () => {
  const config = parseSchedulerConfig(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
  - schedulerName: bin-packing
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
`);
  const withScheduler = (p: Pod, schedulerName: string): Pod => ({ ...p, spec: { ...p.spec, schedulerName } });
  const objects = (): KubeObject[] => [node('node-1'), node('node-2'), { ...pod('placed', '2'), spec: { ...pod('placed', '2').spec, nodeName: 'node-1' } }];

  it('routes each pod to the profile its schedulerName names, and leaves pods of other schedulers alone', () => {
    const projection = cluster([
      ...objects(),
      withScheduler(pod('packer', '500m'), 'bin-packing'),
      pod('spreader', '500m'),
      withScheduler(pod('orphan', '500m'), 'other-scheduler'),
    ]);
    const keys = ['Pod/default/packer', 'Pod/default/spreader', 'Pod/default/orphan'];
    const decisions = decidePods(keys, projection.view(), { now: 0 }, config.profiles);
    expect(boundNode(decisions.get('Pod/default/packer')?.commands)).toBe('node-1');
    expect(boundNode(decisions.get('Pod/default/spreader')?.commands)).toBe('node-2');
    expect(decisions.get('Pod/default/orphan')).toEqual({ commands: [] });
    // The same view and configuration decide the same again.
    expect(decidePods(keys, projection.view(), { now: 0 }, config.profiles)).toEqual(decisions);
  });

  it('the controller built from the configuration binds by profile', () => {
    const projection = cluster([...objects(), withScheduler(pod('packer', '500m'), 'bin-packing')]);
    const controller = createSchedulerController({ config });
    const decision = controller.decide('Pod/default/packer', projection.view(), { now: 0 });
    expect(boundNode(decision.commands)).toBe('node-1');
    const byDefault = createSchedulerController().decide('Pod/default/packer', projection.view(), { now: 0 });
    expect(byDefault).toEqual({ commands: [] });
  });

  it('records each pod\'s Events as its profile (kube\'s recorder per schedulerName)', () => {
    const projection = cluster([...objects(), withScheduler(pod('packer', '500m'), 'bin-packing'), pod('spreader', '500m')]);
    const decisions = createSchedulerController({ config }).decideAll?.(['Pod/default/packer', 'Pod/default/spreader'], projection.view(), { now: 0 });
    const scheduledBy = (key: string): (string | undefined)[] =>
      (decisions?.get(key)?.commands ?? []).flatMap((command) =>
        command.type === 'ObjectCreated' && command.object.kind === 'Event' && command.object.reason === 'Scheduled'
          ? [command.object.source?.component, command.object.reportingComponent]
          : [],
      );
    expect(scheduledBy('Pod/default/packer')).toEqual(['bin-packing', 'bin-packing']);
    expect(scheduledBy('Pod/default/spreader')).toEqual(['default-scheduler', 'default-scheduler']);
  });

  it('counts each attempt under its profile\'s name (kube\'s profile label)', async () => {
    const projection = cluster([...objects(), withScheduler(pod('packer', '500m'), 'bin-packing'), pod('spreader', '500m')]);
    const registry = new Registry();
    const controller = createSchedulerController({ config, metrics: createSchedulerMetrics(registry) });
    controller.decideAll?.(['Pod/default/packer', 'Pod/default/spreader'], projection.view(), { now: 0 });
    const text = await registry.metrics();
    expect(text).toContain('scheduler_schedule_attempts_total{result="scheduled",profile="bin-packing"} 1');
    expect(text).toContain('scheduler_schedule_attempts_total{result="scheduled",profile="default-scheduler"} 1');
  });
});
