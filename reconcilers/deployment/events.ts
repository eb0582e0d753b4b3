/**
 * The Events of a Deployment's decision (kube's deployment controller, sync.go): every
 * ReplicaSet it scales records ScalingReplicaSet "Scaled up|down replica set NAME from A to
 * B" on the Deployment, a new ReplicaSet created with replicas "… from 0 to N".
 */
import type { ReplicaSet } from '../../schemas/index.ts';
import type { Narrator } from '../events/index.ts';
import { keyOf } from '../replicaset/objects.ts';

/** Records the ReplicaSet scalings of the decision on the Deployment `key`. */
export const narrateDeployment: Narrator = (key, view, decision, recorder) => {
  const deployment = view.get(key);
  if (deployment?.kind !== 'Deployment') return;
  const scaled = (name: string, from: number, to: number): void => {
    if (from === to) return;
    recorder.event(deployment, 'Normal', 'ScalingReplicaSet', `Scaled ${to > from ? 'up' : 'down'} replica set ${name} from ${from} to ${to}`);
  };
  for (const command of decision.commands) {
    if (command.type === 'ObjectCreated' && command.object.kind === 'ReplicaSet') {
      const replicas = command.object.spec?.replicas ?? 1;
      if (replicas > 0) scaled(command.object.metadata.name, 0, replicas);
    } else if (command.type === 'ObjectUpdated' && command.subresource === null && command.object.kind === 'ReplicaSet') {
      const current = view.get(keyOf(command.object)) as ReplicaSet | undefined;
      if (current) scaled(command.object.metadata.name, current.spec?.replicas ?? 1, command.object.spec?.replicas ?? 1);
    }
  }
};
