/**
 * The Events of the PersistentVolume controller's decisions, as kube's records them
 * (reporting component `persistentvolume-controller`): ExternalProvisioning when it hands
 * a claim to an external provisioner. (kube's WaitForFirstConsumer Event, recorded on every
 * sync of a waiting claim, is not: a decision that writes nothing records nothing here.)
 */
import type { Narrator } from '../events/index.ts';
import { ANN_STORAGE_PROVISIONER } from './volumes.ts';

/** kube's message for a claim handed to an external provisioner. */
export const externalProvisioningMessage = (provisioner: string): string =>
  `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`;

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
};
