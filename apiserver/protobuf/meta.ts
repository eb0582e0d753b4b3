/** Field numbers of k8s.io/apimachinery generated.proto messages: runtime, meta/v1, intstr, resource. */
import { f, list, m, map, zero, type Message } from './spec.ts';

export const META: Readonly<Record<string, Message>> = {
  Unknown: { 1: f('typeMeta', m('TypeMeta')), 2: f('raw', 'opaque'), 3: f('contentEncoding', 'string'), 4: f('contentType', 'string') },
  TypeMeta: { 1: f('apiVersion', 'string'), 2: f('kind', 'string') },
  ObjectMeta: {
    1: f('name', 'string'), 2: f('generateName', 'string'), 3: f('namespace', 'string'), 4: f('selfLink', 'string'),
    5: f('uid', 'string'), 6: f('resourceVersion', 'string'), 7: f('generation', 'int64'), 8: f('creationTimestamp', 'time'),
    9: f('deletionTimestamp', 'time'), 10: f('deletionGracePeriodSeconds', 'int64', zero), 11: f('labels', 'string', map),
    12: f('annotations', 'string', map), 13: f('ownerReferences', m('OwnerReference'), list), 14: f('finalizers', 'string', list),
    17: f('managedFields', 'opaque', list),
  },
  OwnerReference: {
    1: f('kind', 'string'), 3: f('name', 'string'), 4: f('uid', 'string'), 5: f('apiVersion', 'string'),
    6: f('controller', 'bool', zero), 7: f('blockOwnerDeletion', 'bool', zero),
  },
  LabelSelector: { 1: f('matchLabels', 'string', map), 2: f('matchExpressions', m('LabelSelectorRequirement'), list) },
  LabelSelectorRequirement: { 1: f('key', 'string'), 2: f('operator', 'string'), 3: f('values', 'string', list) },
  DeleteOptions: {
    1: f('gracePeriodSeconds', 'int64', zero), 2: f('preconditions', m('Preconditions')), 3: f('orphanDependents', 'bool', zero),
    4: f('propagationPolicy', 'string'), 5: f('dryRun', 'string', list),
  },
  Preconditions: { 1: f('uid', 'string'), 2: f('resourceVersion', 'string') },
  Condition: {
    1: f('type', 'string', zero), 2: f('status', 'string', zero), 3: f('observedGeneration', 'int64'), 4: f('lastTransitionTime', 'time'),
    5: f('reason', 'string', zero), 6: f('message', 'string', zero),
  },
  Time: { 1: f('seconds', 'int64'), 2: f('nanos', 'int32') },
  IntOrString: { 1: f('type', 'int64'), 2: f('intVal', 'int32'), 3: f('strVal', 'string') },
  Quantity: { 1: f('string', 'string') },
};
