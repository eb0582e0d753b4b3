/** Field numbers of k8s.io/api/scheduling/v1 generated.proto messages (kubectl create priorityclass). */
import { f, m, zero, type Message } from './spec.ts';

export const SCHEDULING: Readonly<Record<string, Message>> = {
  PriorityClass: {
    1: f('metadata', m('ObjectMeta')), 2: f('value', 'int32', zero), 3: f('globalDefault', 'bool'), 4: f('description', 'string'),
    5: f('preemptionPolicy', 'string', zero),
  },
};
