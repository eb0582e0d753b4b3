/**
 * The Events of the PersistentVolume controller's decisions, as kube's records them
 * (reporting component `persistentvolume-controller`): ExternalProvisioning when it hands
 * a claim to an external provisioner, and WaitForFirstConsumer when a claim of a
 * WaitForFirstConsumer class waits for a pod (kube records it on every sync; here once
 * per claim, so a wake that changes nothing writes nothing).
 */
import type { Event as CoreEvent, PersistentVolumeClaim, StorageClass } from '../../schemas/index.ts';
import type { Narrator } from '../events/index.ts';
import { ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER, isDelayBinding } from './volumes.ts';

/** kube's message for a claim handed to an external provisioner. */
export const externalProvisioningMessage = (provisioner: string): string =>
  `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`;

/** kube's message for a claim waiting for its first consumer. */
export const WAIT_FOR_FIRST_CONSUMER_MESSAGE = 'waiting for first consumer to be created before binding';

/** Records what the controller decided about claim `key`. */
export const narrateBinding: Narrator = (key, view, decision, recorder) => {
  const claim = view.get(key);
  if (claim?.kind !== 'PersistentVolumeClaim') return;
  for (const command of decision.commands) {
    if (command.type !== 'ObjectUpdated' || command.object.kind !== 'PersistentVolumeClaim' || command.subresource !== null) continue;
    const provisioner = command.object.metadata.annotations?.[ANN_STORAGE_PROVISIONER];
    if (provisioner !== undefined && claim.metadata.annotations?.[ANN_STORAGE_PROVISIONER] !== provisioner) {
      recorder.event(claim, 'Normal', 'ExternalProvisioning', externalProvisioningMessage(provisioner));
    }
  }
  if (decision.commands.length === 0 && waitsForConsumer(claim, (name) => view.get(`StorageClass//${name}`) as StorageClass | undefined) && !recorded(claim, view.list('Event', claim.metadata.namespace) as CoreEvent[])) {
    recorder.event(claim, 'Normal', 'WaitForFirstConsumer', WAIT_FOR_FIRST_CONSUMER_MESSAGE);
  }
};

/** Whether the claim already has its WaitForFirstConsumer Event. */
const recorded = (claim: PersistentVolumeClaim, events: readonly CoreEvent[]): boolean =>
  events.some((event) => event.involvedObject.uid === claim.metadata.uid && event.reason === 'WaitForFirstConsumer');

const waitsForConsumer = (claim: PersistentVolumeClaim, classOf: (name: string) => StorageClass | undefined): boolean =>
  !claim.spec?.volumeName && claim.metadata.annotations?.[ANN_SELECTED_NODE] === undefined && isDelayBinding(claim, classOf);
