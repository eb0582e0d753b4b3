/**
 * The names the `local-path` provisioner (reconcilers/local-path-provisioner) and the node
 * agent (node-agent/local-path.ts) agree on: the agent says on its Node where local-path
 * volumes go, the provisioner puts them there and marks each with a finalizer that the
 * agent of the volume's node removes once it has removed the directory.
 */

/** The provisioner's name, as StorageClasses name it (rancher's local-path-provisioner). */
export const LOCAL_PATH_PROVISIONER = 'rancher.io/local-path';
/** On a provisioned volume: its directory is still on its node. */
export const LOCAL_PATH_CLEANUP_FINALIZER = 'logplane.io/local-path-cleanup';
/** On a Node: the directory local-path volumes go under on it. */
export const LOCAL_PATH_DIR_ANNOTATION = 'logplane.io/local-path-dir';
/** On a volume: the provisioner that created it (kube's `pv.kubernetes.io/provisioned-by`). */
export const ANN_PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
