/** Field numbers of k8s.io/api/autoscaling/v1 generated.proto messages. */
import { f, m, zero, type Message } from './spec.ts';

export const AUTOSCALING: Readonly<Record<string, Message>> = {
  Scale: { 1: f('metadata', m('ObjectMeta')), 2: f('spec', m('ScaleSpec')), 3: f('status', m('ScaleStatus')) },
  ScaleSpec: { 1: f('replicas', 'int32', zero) },
  ScaleStatus: { 1: f('replicas', 'int32', zero), 2: f('selector', 'string') },
};
