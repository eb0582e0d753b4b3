/**
 * The two kinds one replica-keeping decision serves: apps/v1 ReplicaSet (a set-based
 * `LabelSelector`) and core/v1 ReplicationController (an equality selector, a plain label
 * map). kube-controller-manager runs the same `ReplicaSetController` for both, the RC one
 * through a conversion of RCs to ReplicaSets (pkg/controller/replication); here the
 * decision reads both through {@link replicatedSpec}, and the kind is a parameter.
 */
import { labelSelectorToRequirements, type LabelRequirement } from '../../projections/selectors.ts';
import type { LabelSelector, PodTemplateSpec, ReplicaSet, ReplicationController } from '../../schemas/index.ts';

/** An object that keeps a number of pod replicas. */
export type Replicated = ReplicaSet | ReplicationController;

/** The kinds of {@link Replicated}. */
export type ReplicatedKind = Replicated['kind'];

/** What the decision reads of a {@link Replicated}'s spec, the same for both kinds. */
export interface ReplicatedSpec {
  /** `spec.replicas` (default 1). */
  readonly replicas: number;
  readonly minReadySeconds: number;
  readonly template: PodTemplateSpec | undefined;
  readonly selector: LabelSelector | undefined;
}

/** The spec of `object`, with an RC's equality selector as the `matchLabels` of a LabelSelector. */
export const replicatedSpec = (object: Replicated): ReplicatedSpec => {
  if (object.kind === 'ReplicaSet') {
    return {
      replicas: object.spec.replicas ?? 1,
      minReadySeconds: object.spec.minReadySeconds ?? 0,
      template: object.spec.template,
      selector: object.spec.selector,
    };
  }
  const spec = object.spec ?? {};
  return {
    replicas: spec.replicas ?? 1,
    minReadySeconds: spec.minReadySeconds ?? 0,
    template: spec.template,
    selector: spec.selector === undefined ? undefined : { matchLabels: { ...spec.selector } },
  };
};

/**
 * The requirements of `object`'s selector; empty when it has none or it does not parse
 * (an empty selector selects nothing here, as the validated objects never have one).
 */
export const selectorRequirements = (object: Replicated): readonly LabelRequirement[] => {
  const selector = replicatedSpec(object).selector;
  if (selector === undefined) return [];
  const parsed = labelSelectorToRequirements(selector);
  return parsed.type === 'ok' ? parsed.requirements : [];
};

/** Whether `object` is one of the {@link Replicated} kinds. */
export const isReplicated = (object: { readonly kind: string }, kind: ReplicatedKind): object is Replicated => object.kind === kind;
