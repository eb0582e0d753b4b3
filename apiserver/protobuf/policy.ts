/** Field numbers of k8s.io/api/policy/v1 generated.proto messages (kubectl create poddisruptionbudget). */
import { f, list, m, map, OBJECT, zero, type Message } from './spec.ts';

export const POLICY: Readonly<Record<string, Message>> = {
  PodDisruptionBudget: OBJECT('PodDisruptionBudgetSpec', 'PodDisruptionBudgetStatus'),
  PodDisruptionBudgetSpec: {
    1: f('minAvailable', 'intOrString', zero), 2: f('selector', m('LabelSelector')), 3: f('maxUnavailable', 'intOrString', zero),
    4: f('unhealthyPodEvictionPolicy', 'string', zero),
  },
  PodDisruptionBudgetStatus: {
    1: f('observedGeneration', 'int64'), 2: f('disruptedPods', 'time', map), 3: f('disruptionsAllowed', 'int32', zero),
    4: f('currentHealthy', 'int32', zero), 5: f('desiredHealthy', 'int32', zero), 6: f('expectedPods', 'int32', zero),
    7: f('conditions', m('Condition'), list),
  },
};
