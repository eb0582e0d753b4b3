import { describe, expect, it } from 'vitest';
import type { Container, Pod } from '../schemas/index.ts';
import { computePodQos, podQos } from './qos.ts';

type Resources = Container['resources'];
const pod = (containers: Resources[], initContainers: Resources[] = [], podLevel?: Resources): Pick<Pod, 'spec'> => ({
  spec: {
    containers: containers.map((resources, i) => ({ name: `c${i}`, image: 'x', ...(resources ? { resources } : {}) })),
    ...(initContainers.length > 0 ? { initContainers: initContainers.map((resources, i) => ({ name: `i${i}`, image: 'x', ...(resources ? { resources } : {}) })) } : {}),
    ...(podLevel ? { resources: podLevel } : {}),
  },
});
const both = { cpu: '500m', memory: '128Mi' };

describe('computePodQos (kube 1.32 ComputePodQOS)', () => {
  it.each<[string, Pick<Pod, 'spec'>, string]>([
    ['no resources at all', pod([undefined]), 'BestEffort'],
    ['only zero quantities', pod([{ requests: { cpu: '0', memory: '0' }, limits: { cpu: '0' } }]), 'BestEffort'],
    ['only resources other than cpu and memory', pod([{ requests: { 'ephemeral-storage': '1Gi' }, limits: { 'example.com/gpu': '1' } }]), 'BestEffort'],
    ['requests equal limits for cpu and memory', pod([{ requests: both, limits: both }]), 'Guaranteed'],
    ['equal amounts spelled differently', pod([{ requests: { cpu: '0.5', memory: '134217728' }, limits: both }]), 'Guaranteed'],
    ['requests below limits', pod([{ requests: { cpu: '100m', memory: '128Mi' }, limits: both }]), 'Burstable'],
    ['limits without memory', pod([{ requests: { cpu: '500m' }, limits: { cpu: '500m' } }]), 'Burstable'],
    ['only requests', pod([{ requests: { cpu: '1' } }]), 'Burstable'],
    ['one container Guaranteed, the other BestEffort', pod([{ requests: both, limits: both }, undefined]), 'Burstable'],
    ['every container Guaranteed', pod([{ requests: both, limits: both }, { requests: both, limits: both }]), 'Guaranteed'],
    ['an init container without resources', pod([{ requests: both, limits: both }], [undefined]), 'Burstable'],
    ['an init container with resources makes a BestEffort pod Burstable', pod([undefined], [{ requests: { memory: '1Mi' } }]), 'Burstable'],
    ['init and main containers all Guaranteed', pod([{ requests: both, limits: both }], [{ requests: both, limits: both }]), 'Guaranteed'],
    ['pod-level resources do not count in 1.32 (PodLevelResources is off)', pod([undefined], [], { requests: both, limits: both }), 'BestEffort'],
  ])('%s: %s', (_case, subject, expected) => {
    expect(computePodQos(subject)).toBe(expected);
  });

  it('podQos keeps the class recorded in the status (GetPodQOS) and computes one otherwise', () => {
    const guaranteed = pod([{ requests: both, limits: both }]);
    expect(podQos({ ...guaranteed, status: { qosClass: 'Burstable' } })).toBe('Burstable');
    expect(podQos({ ...guaranteed, status: { qosClass: '' } })).toBe('Guaranteed');
    expect(podQos({ ...guaranteed, status: {} })).toBe('Guaranteed');
  });
});
