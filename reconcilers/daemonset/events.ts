/**
 * The Events of a DaemonSet's decision (kube's daemonset controller through RealPodControl):
 * SuccessfulCreate "Created pod: NAME" and SuccessfulDelete "Deleted pod: NAME" on the DaemonSet.
 */
import { recordPodControl, type Narrator } from '../events/index.ts';

/** Records the pod creates and deletes of the decision on the DaemonSet `key`. */
export const narrateDaemonSet: Narrator = (key, view, decision, recorder) => {
  const set = view.get(key);
  if (set?.kind === 'DaemonSet') recordPodControl(set, decision, recorder);
};
