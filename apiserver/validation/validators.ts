/**
 * Each kind's semantic validation (kube-apiserver's pkg/apis/<group>/validation), as one
 * map the compiler checks for completeness: metadata for every kind, then the kind's own
 * rules. A kind without rules of its own beyond the schema check and its metadata is
 * `NONE` (the default every kind starts from: an inert kind needs no line here).
 */
import { sameJson } from '../../schemas/canonical-json.ts';
import { KINDS } from '../../schemas/index.ts';
import type { ConfigMap, Kind, KubeObject, ObjectOfKind, Secret } from '../../schemas/index.ts';
import { fieldErrors } from '../errors.ts';
import type { ResourceInfo } from '../resources.ts';
import {
  checkImmutableSelector,
  checkNonNegative,
  validateDeployment,
  validateEndpoints,
  validateMetadata,
  validateNamespace,
  validateNode,
  validatePodSpec,
  validatePodUpdate,
  validateService,
  validateWorkloadTemplate,
  type Causes,
} from './objects.ts';
import { validateHorizontalPodAutoscaler, validatePodDisruptionBudget } from './autoscaling-policy.ts';
import { crdWarnings, validateCustomResourceDefinition } from '../custom-resources/crd-validation.ts';
import { unmappableSchemaCauses } from '../custom-resources/schema-mapping.ts';
import { validateEvent } from './events.ts';
import { validateLimitRange } from './limit-range.ts';
import { checkSecretType } from './secrets.ts';
import { checkClaimSpec } from './volumes.ts';
import { validateCronJob, validateDaemonSet, validateJob, validateReplicationController, validateStatefulSet } from './workloads.ts';

type Validator<K extends Kind> = (causes: Causes, object: ObjectOfKind<K>, old: ObjectOfKind<K> | undefined, resource: ResourceInfo) => void;

const NONE = (): void => undefined;

/** IsConfigMapKey: a key of ConfigMap and Secret data. */
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const MAX_DATA_BYTES = 1024 * 1024;

const checkDataKeys = (causes: Causes, object: ConfigMap | Secret, fields: readonly ('data' | 'binaryData' | 'stringData')[]): void => {
  const seen = new Set<string>();
  let bytes = 0;
  for (const field of fields) {
    for (const [key, value] of Object.entries((object as Record<string, unknown>)[field] ?? {})) {
      if (key.length > 253 || !CONFIG_KEY.test(key) || key === '.' || key === '..' || key.startsWith('..')) {
        causes.push(fieldErrors.invalid(`${field}[${key}]`, key, "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"));
      }
      if (field !== 'stringData' && seen.has(key)) causes.push(fieldErrors.invalid(`${field}[${key}]`, key, 'duplicate of key present in data'));
      seen.add(key);
      bytes += typeof value === 'string' ? value.length : 0;
    }
  }
  if (bytes > MAX_DATA_BYTES) causes.push(fieldErrors.tooLong('data', MAX_DATA_BYTES));
};

const immutableData = (causes: Causes, object: ConfigMap | Secret, old: ConfigMap | Secret | undefined): void => {
  if (old?.immutable !== true) return;
  if (object.immutable !== true) causes.push(fieldErrors.forbidden('immutable', 'field is immutable when `immutable` is set'));
  if (!sameJson(object.data ?? {}, old.data ?? {})) causes.push(fieldErrors.forbidden('data', 'field is immutable when `immutable` is set'));
};

const VALIDATORS: { readonly [K in Kind]: Validator<K> } = {
  // Kinds without their own: none (an inert kind needs no line here).
  ...(Object.fromEntries(KINDS.map((kind) => [kind, NONE])) as unknown as { [K in Kind]: Validator<K> }),
  Pod: (causes, object, old) => {
    causes.push(...validatePodSpec('spec', object.spec));
    if (old) causes.push(...validatePodUpdate(object, old));
  },
  Deployment: (causes, object, old) => {
    validateDeployment(causes, object);
    if (old) checkImmutableSelector(causes, object.spec.selector, old.spec.selector);
  },
  ReplicaSet: (causes, object, old) => {
    validateWorkloadTemplate(causes, object.spec.selector, object.spec.template, object.spec.replicas);
    checkNonNegative(causes, 'spec.minReadySeconds', object.spec.minReadySeconds);
    if (old) checkImmutableSelector(causes, object.spec.selector, old.spec.selector);
  },
  Service: (causes, object, old) => {
    validateService(causes, object, old === undefined);
    if (old && object.spec.clusterIP && old.spec.clusterIP && object.spec.clusterIP !== old.spec.clusterIP) {
      causes.push(fieldErrors.invalid('spec.clusterIP', object.spec.clusterIP, 'field is immutable'));
    }
  },
  Endpoints: (causes, object) => validateEndpoints(causes, object),
  Node: (causes, object) => validateNode(causes, object),
  Namespace: (causes, object) => validateNamespace(causes, object),
  ConfigMap: (causes, object, old) => {
    checkDataKeys(causes, object, ['data', 'binaryData']);
    immutableData(causes, object, old);
  },
  Secret: (causes, object, old) => {
    checkDataKeys(causes, object, ['data', 'stringData']);
    immutableData(causes, object, old);
    if (old && (object.type ?? 'Opaque') !== (old.type ?? 'Opaque')) causes.push(fieldErrors.invalid('type', object.type ?? 'Opaque', 'field is immutable'));
    checkSecretType(causes, object);
  },
  PersistentVolumeClaim: (causes, object) => checkClaimSpec(causes, 'spec', object.spec),
  HorizontalPodAutoscaler: (causes, object) => validateHorizontalPodAutoscaler(causes, object),
  PodDisruptionBudget: (causes, object) => validatePodDisruptionBudget(causes, object),
  DaemonSet: validateDaemonSet,
  StatefulSet: validateStatefulSet,
  Job: validateJob,
  CronJob: validateCronJob,
  ReplicationController: (causes, object) => validateReplicationController(causes, object),
  Event: validateEvent,
  LimitRange: (causes, object) => validateLimitRange(causes, object),
  PodTemplate: (causes, object) => {
    if (object.template) causes.push(...validatePodSpec('template.spec', object.template.spec));
  },
  CustomResourceDefinition: (causes, object, old) => {
    validateCustomResourceDefinition(causes, object, old);
    // Only a schema kube accepts is mapped: its own causes say what else is wrong.
    if (causes.length === 0) causes.push(...unmappableSchemaCauses(object));
  },
};

/** Warnings a kind's writes return besides the unknown fields (kube's WarningsOnCreate / WarningsOnUpdate); kinds without are absent. */
const WARNINGS: { readonly [K in Kind]?: (object: ObjectOfKind<K>) => string[] } = {
  CustomResourceDefinition: crdWarnings,
};

/** The warnings a create or update of `object` returns. */
export const warningsOf = (object: KubeObject): string[] => (WARNINGS[object.kind] as ((object: KubeObject) => string[]) | undefined)?.(object) ?? [];

/** Validates an object (metadata and spec) about to be created or to replace `old`. */
export const validateObject = (resource: ResourceInfo, object: KubeObject, old?: KubeObject): Causes => {
  const causes = validateMetadata(resource, object.metadata);
  (VALIDATORS[object.kind] as Validator<Kind>)(causes, object, old?.kind === object.kind ? old : undefined, resource);
  return causes;
};
