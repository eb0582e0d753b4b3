/** Field numbers of k8s.io/api/apps/v1 generated.proto messages. */
import { f, list, m, OBJECT, zero, type Message } from './spec.ts';

export const APPS: Readonly<Record<string, Message>> = {
  Deployment: OBJECT('DeploymentSpec', 'DeploymentStatus'),
  DeploymentSpec: {
    1: f('replicas', 'int32', zero), 2: f('selector', m('LabelSelector')), 3: f('template', m('PodTemplateSpec')),
    4: f('strategy', m('DeploymentStrategy')), 5: f('minReadySeconds', 'int32'), 6: f('revisionHistoryLimit', 'int32', zero),
    7: f('paused', 'bool'), 9: f('progressDeadlineSeconds', 'int32', zero),
  },
  DeploymentStrategy: { 1: f('type', 'string'), 2: f('rollingUpdate', m('RollingUpdateDeployment')) },
  RollingUpdateDeployment: { 1: f('maxUnavailable', 'intOrString', zero), 2: f('maxSurge', 'intOrString', zero) },
  DeploymentStatus: {
    1: f('observedGeneration', 'int64'), 2: f('replicas', 'int32'), 3: f('updatedReplicas', 'int32'), 4: f('availableReplicas', 'int32'),
    5: f('unavailableReplicas', 'int32'), 6: f('conditions', m('DeploymentCondition'), list), 7: f('readyReplicas', 'int32'),
    8: f('collisionCount', 'int32', zero),
  },
  DeploymentCondition: {
    1: f('type', 'string', zero), 2: f('status', 'string', zero), 4: f('reason', 'string'), 5: f('message', 'string'),
    6: f('lastUpdateTime', 'time'), 7: f('lastTransitionTime', 'time'),
  },
  ReplicaSet: OBJECT('ReplicaSetSpec', 'ReplicaSetStatus'),
  ReplicaSetSpec: { 1: f('replicas', 'int32', zero), 2: f('selector', m('LabelSelector')), 3: f('template', m('PodTemplateSpec')), 4: f('minReadySeconds', 'int32') },
  ReplicaSetStatus: {
    1: f('replicas', 'int32', zero), 2: f('fullyLabeledReplicas', 'int32'), 3: f('observedGeneration', 'int64'), 4: f('readyReplicas', 'int32'),
    5: f('availableReplicas', 'int32'), 6: f('conditions', m('ReplicaSetCondition'), list),
  },
  ReplicaSetCondition: { 1: f('type', 'string', zero), 2: f('status', 'string', zero), 3: f('lastTransitionTime', 'time'), 4: f('reason', 'string'), 5: f('message', 'string') },

};
