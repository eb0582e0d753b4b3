/**
 * The Events of a ReplicaSet's (or ReplicationController's) decision, as kube's
 * RealPodControl records them on the controller: SuccessfulCreate "Created pod: NAME" and
 * SuccessfulDelete "Deleted pod: NAME".
 */
import { recordPodControl, type Narrator } from '../events/index.ts';

/** Records the pod creates and deletes of the decision on the ReplicaSet or ReplicationController `key`. */
export const narrateReplicated: Narrator = (key, view, decision, recorder) => {
  const owner = view.get(key);
  if (owner) recordPodControl(owner, decision, recorder);
};
