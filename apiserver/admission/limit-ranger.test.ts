/**
 * LimitRanger as kube-apiserver 1.32's plugin: container defaults and the annotation saying
 * what was set, min / max / maxLimitRequestRatio for Container, Pod and PersistentVolumeClaim
 * items with kube's messages (cases from plugin/pkg/admission/limitranger/admission_test.go),
 * and LimitRange validation (test/e2e/limitranger.test.ts: the HTTP API with the real kubectl).
 */
import { describe, expect, it } from 'vitest';
import type { ObjectOfKind } from '../../schemas/index.ts';
import { defaultLimitRange, validateLimitRange } from '../validation/limit-range.ts';
import type { Causes } from '../validation/objects.ts';
import { aggregateMessage, applyContainerDefaults, claimLimitViolations, LIMIT_RANGER_ANNOTATION, podLimitViolations } from './limit-ranger.ts';

type Pod = ObjectOfKind<'Pod'>;
type LimitRange = ObjectOfKind<'LimitRange'>;
type Item = NonNullable<LimitRange['spec']>['limits'][number];
type Resources = { requests?: Record<string, string>; limits?: Record<string, string> };

const limitRange = (...limits: Item[]): LimitRange => ({ apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'limits', namespace: 'default' }, spec: { limits } });

const pod = (containers: Resources[], initContainers: (Resources & { restartPolicy?: string })[] = []): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default' },
  spec: {
    containers: containers.map((resources, i) => ({ name: `c${i}`, image: 'logplane/echo:1', resources: { ...resources } })),
    ...(initContainers.length > 0
      ? { initContainers: initContainers.map(({ restartPolicy, ...resources }, i) => ({ name: `i${i}`, image: 'logplane/echo:1', resources, ...(restartPolicy ? { restartPolicy } : {}) })) }
      : {}),
  },
});

describe('LimitRanger defaults (PodMutateLimitFunc)', () => {
  it('gives containers and init containers the defaults they lack and says so in the annotation', () => {
    const target = pod([{}, { requests: { cpu: '50m' }, limits: { cpu: '100m' } }], [{}]);
    const changed = applyContainerDefaults(limitRange({ type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '250m', memory: '128Mi' } }), target);
    expect(changed).toBe(true);
    expect(target.spec.containers[0]!.resources).toEqual({ limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '250m', memory: '128Mi' } });
    expect(target.spec.containers[1]!.resources).toEqual({ limits: { cpu: '100m', memory: '256Mi' }, requests: { cpu: '50m', memory: '128Mi' } });
    expect(target.spec.initContainers![0]!.resources).toEqual({ limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '250m', memory: '128Mi' } });
    expect(target.metadata.annotations?.[LIMIT_RANGER_ANNOTATION]).toBe(
      'LimitRanger plugin set: cpu, memory request for container c0; cpu, memory limit for container c0; memory request for container c1; memory limit for container c1; cpu, memory request for init container i0; cpu, memory limit for init container i0',
    );
  });

  it('changes nothing (no annotation) when containers have everything, or only Pod items exist', () => {
    const full = pod([{ requests: { cpu: '1' }, limits: { cpu: '1' } }]);
    expect(applyContainerDefaults(limitRange({ type: 'Container', default: { cpu: '2' } }), full)).toBe(false);
    expect(full.metadata.annotations).toBeUndefined();
    expect(applyContainerDefaults(limitRange({ type: 'Pod', max: { cpu: '2' } }), pod([{}]))).toBe(false);
  });
});

describe('LimitRanger validation (PodValidateLimitFunc, PersistentVolumeClaimValidateLimitFunc)', () => {
  it.each<[string, Item, Pod, string[]]>([
    ['within min and max', { type: 'Container', min: { cpu: '100m' }, max: { cpu: '1' } }, pod([{ requests: { cpu: '200m' }, limits: { cpu: '500m' } }]), []],
    ['limit over max', { type: 'Container', max: { cpu: '500m' } }, pod([{ requests: { cpu: '100m' }, limits: { cpu: '1' } }]), ['maximum cpu usage per Container is 500m, but limit is 1']],
    ['no limit under a max', { type: 'Container', max: { memory: '1Gi' } }, pod([{ requests: { memory: '1Gi' } }]), ['maximum memory usage per Container is 1Gi.  No limit is specified']],
    ['request over max (limit within)', { type: 'Container', max: { cpu: '1' } }, pod([{ requests: { cpu: '2' }, limits: { cpu: '1' } }]), ['maximum cpu usage per Container is 1, but request is 2']],
    ['request under min', { type: 'Container', min: { memory: '100Mi' } }, pod([{ requests: { memory: '50Mi' }, limits: { memory: '200Mi' } }]), ['minimum memory usage per Container is 100Mi, but request is 50Mi']],
    ['limit under min', { type: 'Container', min: { cpu: '100m' } }, pod([{ requests: { cpu: '200m' }, limits: { cpu: '50m' } }]), ['minimum cpu usage per Container is 100m, but limit is 50m']],
    ['no request under a min', { type: 'Container', min: { cpu: '100m' } }, pod([{}]), ['minimum cpu usage per Container is 100m.  No request is specified']],
    ['ratio exceeded', { type: 'Container', maxLimitRequestRatio: { cpu: '2' } }, pod([{ requests: { cpu: '100m' }, limits: { cpu: '300m' } }]), ['cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000']],
    ['ratio without a limit', { type: 'Container', maxLimitRequestRatio: { cpu: '2' } }, pod([{ requests: { cpu: '100m' } }]), ['cpu max limit to request ratio per Container is 2, but no limit is specified or limit is 0']],
    ['ratio within', { type: 'Container', maxLimitRequestRatio: { memory: '1500m' } }, pod([{ requests: { memory: '100Mi' }, limits: { memory: '150Mi' } }]), []],
    ['init container over max', { type: 'Container', max: { cpu: '1' } }, pod([{ limits: { cpu: '1' } }], [{ limits: { cpu: '2' } }]), ['maximum cpu usage per Container is 1, but limit is 2']],
    ['pod total over max', { type: 'Pod', max: { cpu: '1' } }, pod([{ limits: { cpu: '600m' } }, { limits: { cpu: '600m' } }]), ['maximum cpu usage per Pod is 1, but limit is 1200m']],
    ['pod: an init container larger than the containers', { type: 'Pod', max: { memory: '1Gi' } }, pod([{ limits: { memory: '512Mi' } }], [{ limits: { memory: '2Gi' } }]), ['maximum memory usage per Pod is 1Gi, but limit is 2Gi']],
    ['pod: a sidecar counts with the containers', { type: 'Pod', min: { cpu: '1' } }, pod([{ requests: { cpu: '600m' } }], [{ requests: { cpu: '500m' }, restartPolicy: 'Always' }]), []],
    [
      'several failures, in resource order',
      { type: 'Container', max: { cpu: '500m', memory: '1Gi' } },
      pod([{ limits: { cpu: '1', memory: '2Gi' } }]),
      ['maximum cpu usage per Container is 500m, but limit is 1', 'maximum memory usage per Container is 1Gi, but limit is 2Gi'],
    ],
  ])('%s', (_name, item, target, expected) => {
    expect(podLimitViolations(limitRange(item), target)).toEqual(expected);
  });

  it.each<[string, Item, string | undefined, string[]]>([
    ['within', { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } }, '5Gi', []],
    ['under min', { type: 'PersistentVolumeClaim', min: { storage: '1Gi' } }, '500Mi', ['minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi']],
    ['over max', { type: 'PersistentVolumeClaim', max: { storage: '2Gi' } }, '5Gi', ['maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 5Gi']],
    ['no request', { type: 'PersistentVolumeClaim', max: { storage: '2Gi' } }, undefined, ['maximum storage usage per PersistentVolumeClaim is 2Gi.  No request is specified']],
  ])('claim %s', (_name, item, storage, expected) => {
    const claim: ObjectOfKind<'PersistentVolumeClaim'> = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], resources: storage ? { requests: { storage } } : {} },
    };
    expect(claimLimitViolations(limitRange(item), claim)).toEqual(expected);
  });

  it('aggregates as utilerrors.NewAggregate: one message bare, several bracketed, duplicates once', () => {
    expect(aggregateMessage(['a'])).toBe('a');
    expect(aggregateMessage(['a', 'b', 'a'])).toBe('[a, b]');
    expect(aggregateMessage(['a', 'a'])).toBe('a');
  });
});

describe('LimitRange defaults and validation (SetDefaults_LimitRangeItem, ValidateLimitRange)', () => {
  it('defaults a Container item: default from max, defaultRequest from default, then from min', () => {
    const range = limitRange({ type: 'Container', max: { cpu: '1' }, min: { memory: '64Mi' } }, { type: 'Pod', max: { cpu: '2' } });
    defaultLimitRange(range);
    expect(range.spec!.limits[0]).toMatchObject({ default: { cpu: '1' }, defaultRequest: { cpu: '1', memory: '64Mi' } });
    expect(range.spec!.limits[1]!.default).toBeUndefined();
  });

  const messages = (range: LimitRange): string[] => {
    defaultLimitRange(range);
    const causes: Causes = [];
    validateLimitRange(causes, range);
    return causes.map((cause) => `${cause.field}: ${cause.message}`);
  };

  it.each<[string, Item[], string[]]>([
    ['a valid range', [{ type: 'Container', min: { cpu: '100m' }, max: { cpu: '1' }, default: { cpu: '500m' }, defaultRequest: { cpu: '200m' }, maxLimitRequestRatio: { cpu: '4' } }], []],
    ['min over max', [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }], [
      'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1',
      'spec.limits[0].defaultRequest[cpu]: Invalid value: "1": min value 2 is greater than default request value 1',
      'spec.limits[0].default[cpu]: Invalid value: "2": min value 2 is greater than default value 1',
    ]],
    ['default over max', [{ type: 'Container', max: { memory: '1Gi' }, default: { memory: '2Gi' }, defaultRequest: { memory: '512Mi' } }], [
      'spec.limits[0].default[memory]: Invalid value: "1Gi": default value 2Gi is greater than max value 1Gi',
    ]],
    ['defaultRequest over default', [{ type: 'Container', default: { cpu: '500m' }, defaultRequest: { cpu: '1' } }], [
      'spec.limits[0].defaultRequest[cpu]: Invalid value: "1": default request value 1 is greater than default limit value 500m',
    ]],
    ['ratio below 1', [{ type: 'Container', maxLimitRequestRatio: { cpu: '500m' } }], ['spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less than 1']],
    ['ratio over max/min', [{ type: 'Pod', min: { cpu: '1' }, max: { cpu: '2' }, maxLimitRequestRatio: { cpu: '3' } }], [
      'spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "3": ratio 3 is greater than max/min = 2.000000',
    ]],
    ['Pod defaults', [{ type: 'Pod', default: { cpu: '1' } }], ["spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"]],
    ['a claim item without storage', [{ type: 'PersistentVolumeClaim', max: { memory: '1Gi' } }], [
      'spec.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither was provided',
    ]],
    ['a duplicate type and a non-container resource', [{ type: 'Container', max: { cpu: '1' } }, { type: 'Container', max: { pods: '1' } }], [
      'spec.limits[1].type: Duplicate value: "Container"',
      'spec.limits[1].max[pods]: Invalid value: "pods": must be a standard resource for containers',
      'spec.limits[1].default[pods]: Invalid value: "pods": must be a standard resource for containers',
      'spec.limits[1].defaultRequest[pods]: Invalid value: "pods": must be a standard resource for containers',
    ]],
  ])('%s', (_name, items, expected) => {
    expect(messages(limitRange(...items))).toEqual(expected);
  });
});
