/** Builders of Nodes and Pods for the scheduler's tests and benchmark. */
import type { Affinity, ContainerPort, Node, NodeCondition, Pod, PodAffinityTerm, Taint, Toleration, TopologySpreadConstraint } from '../../schemas/index.ts';

/** What a test node looks like; everything but the name has a roomy default. */
export interface NodeOptions {
  readonly name: string;
  readonly cpu?: string;
  readonly memory?: string;
  readonly pods?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly Taint[];
  readonly unschedulable?: boolean;
  /** The Ready condition's status; null leaves the condition out. */
  readonly ready?: 'True' | 'False' | 'Unknown' | null;
  /** More allocatable resources, e.g. `{ 'nvidia.com/gpu': '2' }`. */
  readonly allocatable?: Readonly<Record<string, string>>;
}

/** A Ready node with 4 cpu, 8Gi and 110 pod slots unless told otherwise. */
export function makeNode(options: NodeOptions): Node {
  const ready = options.ready === undefined ? 'True' : options.ready;
  const conditions: NodeCondition[] = ready === null ? [] : [{ type: 'Ready', status: ready }];
  return {
    kind: 'Node',
    apiVersion: 'v1',
    metadata: { name: options.name, labels: { 'kubernetes.io/hostname': options.name, ...options.labels } },
    spec: {
      ...(options.unschedulable === undefined ? {} : { unschedulable: options.unschedulable }),
      ...(options.taints === undefined ? {} : { taints: [...options.taints] }),
    },
    status: {
      allocatable: { cpu: options.cpu ?? '4', memory: options.memory ?? '8Gi', pods: options.pods ?? '110', ...options.allocatable },
      conditions,
    },
  };
}

/** What a test pod looks like. */
export interface PodOptions {
  readonly name: string;
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly cpu?: string;
  readonly memory?: string;
  readonly nodeName?: string;
  readonly nodeSelector?: Readonly<Record<string, string>>;
  readonly tolerations?: readonly Toleration[];
  readonly antiAffinity?: readonly PodAffinityTerm[];
  /** The whole `spec.affinity` (overrides `antiAffinity`). */
  readonly affinity?: Affinity;
  readonly phase?: string;
  /** More requests of the container, e.g. `{ 'nvidia.com/gpu': '1' }`. */
  readonly requests?: Readonly<Record<string, string>>;
  readonly ports?: readonly ContainerPort[];
  readonly schedulingGates?: readonly string[];
  readonly topologySpreadConstraints?: readonly TopologySpreadConstraint[];
  readonly ownerReferences?: NonNullable<Pod['metadata']['ownerReferences']>;
  readonly priority?: number;
}

/** A one-container pod requesting `cpu`/`memory` when given (none otherwise). */
export function makePod(options: PodOptions): Pod {
  const requests: Record<string, string> = { ...options.requests };
  if (options.cpu !== undefined) requests.cpu = options.cpu;
  if (options.memory !== undefined) requests.memory = options.memory;
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name: options.name,
      namespace: options.namespace ?? 'default',
      labels: { ...options.labels },
      ...(options.ownerReferences === undefined ? {} : { ownerReferences: [...options.ownerReferences] }),
    },
    spec: {
      containers: [{ name: 'main', resources: { requests }, ...(options.ports === undefined ? {} : { ports: [...options.ports] }) }],
      ...(options.schedulingGates === undefined ? {} : { schedulingGates: options.schedulingGates.map((name) => ({ name })) }),
      ...(options.topologySpreadConstraints === undefined ? {} : { topologySpreadConstraints: [...options.topologySpreadConstraints] }),
      ...(options.priority === undefined ? {} : { priority: options.priority }),
      ...(options.nodeName === undefined ? {} : { nodeName: options.nodeName }),
      ...(options.nodeSelector === undefined ? {} : { nodeSelector: { ...options.nodeSelector } }),
      ...(options.tolerations === undefined ? {} : { tolerations: [...options.tolerations] }),
      ...(options.affinity !== undefined
        ? { affinity: options.affinity }
        : options.antiAffinity === undefined
          ? {}
          : { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [...options.antiAffinity] } } }),
    },
    ...(options.phase === undefined ? {} : { status: { phase: options.phase } }),
  };
}

/** A required anti-affinity term against pods labelled `app=<app>`, one per node. */
export function antiAffinityToApp(app: string): PodAffinityTerm {
  return { labelSelector: { matchLabels: { app } }, topologyKey: 'kubernetes.io/hostname' };
}
