/**
 * Test fixture: an operator-style CustomResourceDefinition (two versions, status and scale
 * subresources, printer columns, nested objects, list-type maps and sets, an
 * int-or-string, an embedded resource) and a valid object of it. Fresh copies each call.
 */

/** The storage version's openAPIV3Schema. */
export const databaseSchema = (): Record<string, any> => ({
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 40 } } },
    spec: {
      type: 'object',
      required: ['engine'],
      properties: {
        engine: { type: 'string', enum: ['postgres', 'mysql'] },
        replicas: { type: 'integer', format: 'int32', minimum: 1, maximum: 9, default: 3 },
        version: { type: 'string', pattern: '^[0-9]+\\.[0-9]+$', default: '16.2' },
        storage: {
          type: 'object',
          default: {},
          properties: {
            size: { 'x-kubernetes-int-or-string': true, default: '10Gi' },
            className: { type: 'string', minLength: 1, maxLength: 63 },
          },
        },
        users: {
          type: 'array',
          maxItems: 5,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: {
              name: { type: 'string' },
              roles: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
              passwordSecret: { type: 'string', nullable: true },
              connectionLimit: { type: 'integer', default: 10 },
            },
          },
        },
        backup: {
          type: 'object',
          properties: {
            schedule: { type: 'string' },
            retention: { type: 'string', format: 'duration' },
            startAt: { type: 'string', format: 'date-time' },
            ratio: { type: 'number', exclusiveMinimum: true, minimum: 0, exclusiveMaximum: true, maximum: 1, multipleOf: 0.25 },
          },
        },
        parameters: { type: 'object', maxProperties: 3, additionalProperties: { type: 'string' } },
        podTemplate: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'string' } } },
      },
    },
    status: {
      type: 'object',
      properties: {
        readyReplicas: { type: 'integer' },
        selector: { type: 'string' },
        conditions: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
          items: {
            type: 'object',
            required: ['type', 'status'],
            properties: {
              type: { type: 'string' },
              status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
              lastTransitionTime: { type: 'string', format: 'date-time' },
            },
          },
        },
      },
    },
  },
});

/** The CRD: v1beta1 (served, deprecated) and v1 (served, storage). */
export const databaseCrd = (): Record<string, any> => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'databaseclusters.db.example.com' },
  spec: {
    group: 'db.example.com',
    scope: 'Namespaced',
    names: { plural: 'databaseclusters', singular: 'databasecluster', kind: 'DatabaseCluster', listKind: 'DatabaseClusterList', shortNames: ['dbc'], categories: ['all', 'databases'] },
    versions: [
      {
        name: 'v1beta1',
        served: true,
        storage: false,
        deprecated: true,
        deprecationWarning: 'db.example.com/v1beta1 DatabaseCluster is deprecated; use db.example.com/v1',
        schema: { openAPIV3Schema: databaseSchema() },
        subresources: { status: {} },
      },
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: databaseSchema() },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.readyReplicas', labelSelectorPath: '.status.selector' } },
        additionalPrinterColumns: [
          { name: 'Engine', type: 'string', jsonPath: '.spec.engine' },
          { name: 'Replicas', type: 'integer', format: 'int32', jsonPath: '.spec.replicas' },
          { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
      },
    ],
    conversion: { strategy: 'None' },
  },
});

/** A valid DatabaseCluster of the v1 schema. */
export const databaseObject = (): Record<string, any> => ({
  apiVersion: 'db.example.com/v1',
  kind: 'DatabaseCluster',
  metadata: { name: 'orders', namespace: 'shop' },
  spec: {
    engine: 'postgres',
    replicas: 3,
    version: '16.2',
    storage: { size: '20Gi', className: 'fast' },
    users: [
      { name: 'app', roles: ['read', 'write'], passwordSecret: null, connectionLimit: 20 },
      { name: 'report', roles: ['read'], connectionLimit: 5 },
    ],
    backup: { schedule: '0 3 * * *', retention: '7d', startAt: '2025-01-31T03:00:00Z', ratio: 0.5 },
    parameters: { max_connections: '200' },
    podTemplate: { apiVersion: 'v1', kind: 'PodTemplate', metadata: { labels: { a: 'b' } }, template: { spec: {} } },
  },
  status: { readyReplicas: 3, selector: 'app=orders', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2025-01-31T03:00:00Z' }] },
});
