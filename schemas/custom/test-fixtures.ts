/**
 * CRDs for the tests of `schemas/custom/`: an operator-style Database CRD with two versions
 * (v1alpha1, v1) shaped like real operators' (cert-manager's Certificate status, CloudNativePG
 * and Crossplane specs), later revisions of its v1 schema, and a schemaless CRD.
 */
import type { StructuralSchema } from './content-schema.ts';

const condition: StructuralSchema = {
  type: 'object',
  description: 'Condition contains details for one aspect of the current state of this API Resource.',
  required: ['lastTransitionTime', 'message', 'reason', 'status', 'type'],
  properties: {
    lastTransitionTime: { type: 'string', format: 'date-time' },
    message: { type: 'string', maxLength: 32768 },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    reason: { type: 'string', pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    type: { type: 'string' },
  },
};

const databaseSpecV1: StructuralSchema = {
  type: 'object',
  required: ['engine'],
  properties: {
    engine: { type: 'string', enum: ['postgres', 'mysql'] },
    version: { type: 'string' },
    replicas: { type: 'integer', format: 'int32', minimum: 1, default: 1 },
    port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
    cpuRatio: { type: 'number' },
    paused: { type: 'boolean' },
    storage: {
      type: 'object',
      properties: {
        size: { 'x-kubernetes-int-or-string': true, pattern: '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$' },
        storageClassName: { type: 'string', nullable: true },
        encrypted: { type: 'boolean', nullable: true },
      },
    },
    backup: {
      type: 'object',
      nullable: true,
      properties: {
        schedule: { type: 'string' },
        retentionDays: { type: 'integer' },
        destination: { type: 'object', properties: { bucket: { type: 'string' }, endpointURL: { type: 'string', format: 'uri' } } },
      },
    },
    users: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string' },
          roles: { type: 'array', items: { type: 'string' } },
          passwordSecretRef: { type: 'object', properties: { name: { type: 'string' }, key: { type: 'string' } } },
        },
      },
    },
    parameters: { type: 'object', additionalProperties: { type: 'string' } },
    shards: { type: 'object', additionalProperties: { type: 'array', items: { type: 'integer' } } },
    nodeSelectorTerms: { type: 'array', items: { type: 'object', additionalProperties: { type: 'string' } } },
    endpointsByZone: {
      type: 'object',
      additionalProperties: { type: 'object', properties: { host: { type: 'string' }, port: { type: 'integer' } } },
    },
    limits: { type: 'object', additionalProperties: { type: 'integer', nullable: true } },
    notes: { type: 'array', nullable: true, items: { type: 'string', nullable: true } },
    config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    tuning: {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: { workMem: { type: 'string' } },
    },
    podTemplate: {
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
    },
    anything: { description: 'no type: any JSON value' },
    $ref: { type: 'string' },
    'x-kubernetes-foo': { type: 'integer' },
    'a-b': { type: 'string' },
    '1st': { type: 'boolean' },
    'a.b': { type: 'string' },
    a_x2d_b: { type: 'string' },
    string: { type: 'object', properties: { int: { type: 'string' } } },
  },
};

const databaseStatus: StructuralSchema = {
  type: 'object',
  properties: {
    phase: { type: 'string' },
    observedGeneration: { type: 'integer', format: 'int64' },
    lastBackupTime: { type: 'string', format: 'date-time', nullable: true },
    readyReplicas: { type: 'integer', format: 'int32' },
    conditions: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      items: condition,
    },
  },
};

/** The openAPIV3Schema of Database v1 (the storage version). */
export const DATABASE_V1_SCHEMA: StructuralSchema = {
  type: 'object',
  description: 'Database is a managed database cluster.',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: databaseSpecV1,
    status: databaseStatus,
  },
};

/** The openAPIV3Schema of Database v1alpha1 (served, not stored): a flatter, older shape. */
export const DATABASE_V1ALPHA1_SCHEMA: StructuralSchema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      properties: {
        engine: { type: 'string' },
        size: { type: 'string' },
        replicaCount: { type: 'integer' },
      },
    },
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
};

/** The Database CRD (apiextensions.k8s.io/v1) with both versions. */
export const DATABASE_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'databases.db.example.com' },
  spec: {
    group: 'db.example.com',
    names: { kind: 'Database', listKind: 'DatabaseList', plural: 'databases', singular: 'database', shortNames: ['db'] },
    scope: 'Namespaced',
    versions: [
      { name: 'v1alpha1', served: true, storage: false, schema: { openAPIV3Schema: DATABASE_V1ALPHA1_SCHEMA } },
      { name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: DATABASE_V1_SCHEMA } },
    ],
  },
} as const;

/** Database v1, a later revision that adds an optional field (compatible). */
export const DATABASE_V1_WITH_MAINTENANCE: StructuralSchema = {
  ...DATABASE_V1_SCHEMA,
  properties: {
    ...DATABASE_V1_SCHEMA.properties,
    spec: {
      ...databaseSpecV1,
      properties: {
        ...databaseSpecV1.properties,
        maintenanceWindow: { type: 'object', properties: { day: { type: 'string' }, startHour: { type: 'integer' } } },
      },
    },
  },
};

/** Database v1, a later revision that makes `spec.version` an integer (incompatible; kube accepts it). */
export const DATABASE_V1_VERSION_AS_INTEGER: StructuralSchema = {
  ...DATABASE_V1_SCHEMA,
  properties: {
    ...DATABASE_V1_SCHEMA.properties,
    spec: { ...databaseSpecV1, properties: { ...databaseSpecV1.properties, version: { type: 'integer' } } },
  },
};

/** A schemaless CRD, as `kubectl` users convert v1beta1 CRDs without validation. */
export const SCHEMALESS_SCHEMA: StructuralSchema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

/** A Database v1 object's content (no apiVersion, kind, metadata) using every shape. */
export const DATABASE_CONTENT = {
  spec: {
    engine: 'postgres',
    version: '16.2',
    replicas: 3,
    port: 'postgresql',
    cpuRatio: 0.75,
    paused: false,
    storage: { size: '10Gi', storageClassName: null },
    backup: null,
    users: [
      { name: 'app', roles: ['login', 'createdb'], passwordSecretRef: { name: 'app-secret', key: 'password' } },
      { name: 'readonly', roles: [] },
    ],
    parameters: { max_connections: '200', 'shared_buffers': '1GB' },
    shards: { east: [0, 1, 2], west: [] },
    nodeSelectorTerms: [{ 'topology.kubernetes.io/zone': 'eu-1a' }, {}],
    endpointsByZone: { 'eu-1a': { host: 'db-0.db', port: 5432 }, 'eu-1b': {} },
    limits: { connections: 100, 'statement-timeout': null },
    notes: ['first', null, ''],
    config: { 'wal_level': 'logical', extensions: ['pgcrypto', { name: 'postgis', version: 3.4 }], empty: {}, nothing: null, big: 2 ** 53 - 1, tiny: 1e-300 },
    tuning: { workMem: '64MB', effectiveCacheSize: '4GB', custom: { nested: [true, false] } },
    podTemplate: { apiVersion: 'v1', kind: 'Pod', metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'pg', image: 'postgres:16' }] } },
    anything: [1, 'two', { three: 3 }],
    $ref: '#/definitions/x',
    'x-kubernetes-foo': -7,
    'a-b': 'dash',
    '1st': true,
    'a.b': 'dot',
    a_x2d_b: 'looks escaped',
    string: { int: 'primitive names as properties' },
  },
  status: {
    phase: 'Ready',
    observedGeneration: 4,
    lastBackupTime: null,
    readyReplicas: 3,
    conditions: [
      { type: 'Ready', status: 'True', reason: 'ClusterReady', message: 'all 3 replicas ready', lastTransitionTime: '2026-01-02T03:04:05Z', observedGeneration: 4 },
      { type: 'BackupFailing', status: 'False', reason: 'NoBackupConfigured', message: '', lastTransitionTime: '2026-01-02T03:04:05Z' },
    ],
  },
};
