/**
 * The finalizers of kube's StorageObjectInUseProtection: the apiserver's admission puts them
 * on every new PersistentVolumeClaim and PersistentVolume, the pvc-protection and
 * pv-protection controllers take them off once the object is no longer in use.
 */
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';
