/**
 * The ephemeral volume controller (kube-controller-manager's `ephemeral-volume-controller`,
 * pkg/controller/volume/ephemeral/controller.go, 1.32): for every volume of a pod with
 * `ephemeral.volumeClaimTemplate`, it creates the PersistentVolumeClaim `<pod>-<volume>` in the
 * pod's namespace, with the template's labels, annotations and spec, controlled by the pod
 * (`controller` and `blockOwnerDeletion`), so the garbage collector deletes it with the pod.
 * The scheduler's VolumeBinding, the persistentvolume-binder and the provisioners then treat it
 * as any claim.
 *
 * As kube's:
 * - a pod being deleted gets nothing; a claim that exists is left alone;
 * - a claim of that name the pod does not control is never taken over: the pod's volume waits,
 *   and the pod gets the Warning `FailedBinding` "ephemeral volume <v>: PVC <ns>/<claim> was not
 *   created for pod <ns>/<pod> (pod is not owner)"; the volumes after it wait for the next try;
 * - a deleted claim whose pod still stands is created again (kube enqueues the pod on a claim's
 *   deletion).
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import { createRecorder } from '../../projections/event-recorder.ts';
import type { KubeObject, PersistentVolumeClaim, Pod } from '../../schemas/index.ts';
import { objectKey } from '../../schemas/index.ts';
import { withEvents } from '../events/index.ts';
import type { Controller, DecideContext, Decision } from '../runtime.ts';

/** The controller's name (its consumer group and the actor of its commands). */
export const EPHEMERAL_VOLUME_CONTROLLER = 'ephemeral-volume';
/** The source kube's controller records its Events as. */
const EVENT_SOURCE = { component: 'ephemeral_volume' } as const;

const NONE: Decision = { commands: [] };

type Volume = NonNullable<Pod['spec']['volumes']>[number];

/** kube's ephemeral.VolumeClaimName: `<pod>-<volume>`. */
export const ephemeralClaimName = (pod: Pod, volume: Volume): string => `${pod.metadata.name}-${volume.name}`;

/** The pod's volumes that have a claim template. */
const ephemeralVolumes = (pod: Pod): Volume[] => (pod.spec?.volumes ?? []).filter((volume) => volume.ephemeral?.volumeClaimTemplate !== undefined);

/** kube's ephemeral.VolumeIsForPod: the claim is controlled by the pod. */
const isForPod = (pod: Pod, claim: KubeObject): boolean => (claim.metadata.ownerReferences ?? []).some((ref) => ref.controller === true && ref.uid === pod.metadata.uid);

const claimKey = (namespace: string, name: string): string => objectKey({ kind: 'PersistentVolumeClaim', metadata: { namespace, name } });

/** The claim kube's handleVolume creates for `volume` of `pod`. */
const claimFor = (pod: Pod, volume: Volume): PersistentVolumeClaim => {
  const template = volume.ephemeral!.volumeClaimTemplate!;
  const labels = template.metadata?.labels;
  const annotations = template.metadata?.annotations;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: ephemeralClaimName(pod, volume),
      namespace: pod.metadata.namespace ?? 'default',
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
      ...(annotations ? { annotations: { ...annotations } } : {}),
      ...(labels ? { labels: { ...labels } } : {}),
    },
    spec: structuredClone(template.spec),
  };
};

/** Creates the claims of pod `key`'s ephemeral volumes that are missing (kube's syncHandler). */
export const decideEphemeralVolumes = (key: string, view: View, context: Pick<DecideContext, 'now' | 'recordEvents'>): Decision => {
  const pod = view.get(key);
  if (pod?.kind !== 'Pod' || pod.metadata.deletionTimestamp || !pod.metadata.uid) return NONE;
  const namespace = pod.metadata.namespace ?? 'default';
  const commands: Decision['commands'][number][] = [];
  for (const volume of ephemeralVolumes(pod)) {
    const name = ephemeralClaimName(pod, volume);
    const existing = view.get(claimKey(namespace, name));
    if (!existing) {
      commands.push({ type: 'ObjectCreated', object: claimFor(pod, volume) });
      continue;
    }
    if (isForPod(pod, existing)) continue;
    // kube returns the error: this volume and the ones after it wait; the pod is told why.
    if (context.recordEvents === false) break;
    const recorder = createRecorder(view, context.now, EVENT_SOURCE);
    recorder.event(pod, 'Warning', 'FailedBinding', `ephemeral volume ${volume.name}: PVC ${namespace}/${name} was not created for pod ${namespace}/${pod.metadata.name} (pod is not owner)`);
    commands.push(...recorder.commands());
    break;
  }
  return { commands };
};

/** The pods of `namespace` with an ephemeral volume whose claim is `claim`. */
const podsClaiming = (view: View, namespace: string, claim: string): string[] =>
  (view.list('Pod', namespace) as Pod[])
    .filter((pod) => ephemeralVolumes(pod).some((volume) => ephemeralClaimName(pod, volume) === claim))
    .map((pod) => objectKey(pod));

/** A pod with ephemeral volumes maps to itself; a deleted claim to the pods it was for. */
export const ephemeralVolumeKeysFor = (change: AppliedChange, view: View): readonly string[] => {
  const object = change.object;
  if (object.kind === 'Pod') return change.type !== 'DELETED' && ephemeralVolumes(object).length > 0 ? [change.key] : [];
  if (object.kind === 'PersistentVolumeClaim' && change.type === 'DELETED') return podsClaiming(view, object.metadata.namespace ?? 'default', object.metadata.name);
  return [];
};

/** Creates the ephemeral volume controller (its creates go through the create admission, as kube's through the apiserver). */
export const createEphemeralVolumeController = (): Controller =>
  withEvents(
    {
      name: EPHEMERAL_VOLUME_CONTROLLER,
      keysFor: ephemeralVolumeKeysFor,
      initialKeys: (view) => (view.list('Pod') as Pod[]).filter((pod) => ephemeralVolumes(pod).length > 0).map((pod) => objectKey(pod)),
      decide: decideEphemeralVolumes,
    },
    EVENT_SOURCE,
    () => undefined,
  );
