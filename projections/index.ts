/** Projections: the deterministic fold of the log into LMDB, live and historical views. */
export * from './errors.ts';
export * from './fold.ts';
export { objectCreated, podAdmissionOf, type AdmissionRejection, type PodAdmission } from './node-admission.ts';
export * from './positions.ts';
export * from './projection.ts';
export * from './resources.ts';
export * from './qos.ts';
export { PVC_PROTECTION_FINALIZER, PV_PROTECTION_FINALIZER } from './storage-finalizers.ts';
export * from './store.ts';
export * from './view.ts';
export * from './writer.ts';
export * from './history.ts';
export * from './replay.ts';
export * from './metrics.ts';
export * from './event-correlator.ts';
export * from './event-recorder.ts';
export { isSchemaRegistered } from './custom-resources.ts';
export { encodeCustomObject, schemaRegistration, storageCodecOf, storageVersionOf, versionSchema } from './custom-writes.ts';
