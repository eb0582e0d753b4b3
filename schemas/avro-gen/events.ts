/**
 * The event records of the draft, carried over from the newest hand-written version
 * (`schemas/avro/v4/event/`): the envelope, its bodies and the scheduler's rationale,
 * unchanged but for what names objects:
 *
 * - a field annotated `"logplane.union": {"name": "KubeObject", …}` (ObjectCreated and
 *   ObjectUpdated `object`) becomes the union of every kind's record;
 * - the enum `logplane.k8s.Kind` (ObjectDeleted `kind`) gains the name of every kind,
 *   the released symbols first (a reader's enum must hold every symbol written); a kind
 *   name shared by two groups (Event) is one symbol, and the group is the envelope key's;
 * - a reference to a released object record (`logplane.k8s.PodStatus`) names the
 *   record it is read into (`logplane.k8s.core.v1.PodStatus`);
 * - the fields of {@link EVENT_FIELD_ADDITIONS} are appended to their records (the event
 *   changes of the generated versions after v5; each optional, so older events read).
 */
import { readFileSync } from 'node:fs';
import { SchemaError } from '../errors.ts';
import { UNION_ATTRIBUTE } from '../schema-view.ts';
import { avroNameOf } from './generate.ts';

/** The released version whose event records the draft carries over. */
export const EVENTS_SOURCE = new URL('../avro/v4/', import.meta.url);

/** The enum of kinds in ObjectDeleted. */
const KIND_ENUM = 'logplane.k8s.Kind';
const KUBE_OBJECT = 'KubeObject';
const ENVELOPE = 'EventEnvelope';

/** The envelope with {@link EVENT_BODY_ADDITIONS} appended to the union of its `body`. */
const withBodyAdditions = (envelope: Record<string, unknown>): Record<string, unknown> => ({
  ...envelope,
  fields: (envelope.fields as Record<string, unknown>[]).map((field) =>
    field.name === 'body' ? { ...field, type: [...(field.type as unknown[]), ...EVENT_BODY_ADDITIONS] } : field,
  ),
});

/**
 * Fields a generated version adds to a carried-over event record, by record name, in the
 * order they were added (never remove or reorder one: a released version holds them).
 */
export const EVENT_FIELD_ADDITIONS: Readonly<Record<string, readonly Readonly<Record<string, unknown>>[]>> = {
  ObjectCreated: [
    {
      // v6: the pod-admission rule the fold judges a Pod's create by (issue 15, item 5).
      name: 'nodeAdmission',
      type: ['null', { type: 'enum', name: 'NodeAdmission', symbols: ['Deferred'] }],
      default: null,
      'logplane.optional': true,
      doc:
        "How a Pod created with spec.nodeName is admitted to that node. Null (every event before v6): the node must exist and have room, else the create is rejected. 'Deferred' (as kube-apiserver): a node not registered yet is no reason to reject; the pod waits, uncharged, and the node's registration admits it if it fits (kubelet admission).",
    },
    {
      // v7: quota admission in the fold (issue 17).
      name: 'quotaAdmission',
      type: ['null', { type: 'enum', name: 'QuotaAdmission', symbols: ['Judged'] }],
      default: null,
      'logplane.optional': true,
      doc:
        "Whether the fold judges this create against the ResourceQuotas of its namespace. Null (every event before v7): it is not (no quota was enforced when it was written). 'Judged' (as kube-apiserver's quota admission): the object is charged against every matching ResourceQuota, and the create is rejected (Forbidden, exceeded quota) when one would go over its hard limits.",
    },
  ],
  BindingRationale: [
    {
      // v9: the preemption a binding follows (issue 23).
      name: 'preemption',
      type: [
        'null',
        {
          type: 'record',
          name: 'BindingPreemption',
          doc: "The preemption that made room for the pod (kube-scheduler's DefaultPreemption result): the node it was nominated to, why it had to preempt, and the pods evicted for it.",
          fields: [
            { name: 'nominatedNode', type: 'string', doc: "The node the preemption nominated the pod to (its status.nominatedNodeName); the binding may still go elsewhere if another node made room first." },
            { name: 'reason', type: 'string', doc: "Why the pod fit no node without preempting: the scheduler's filter summary when it preempted (kube's FitError, e.g. '0/3 nodes are available: 3 Insufficient cpu.')." },
            {
              name: 'victims',
              type: {
                type: 'array',
                items: {
                  type: 'record',
                  name: 'PreemptionVictim',
                  doc: 'A pod preempted (marked DisruptionTarget and deleted gracefully) to make room.',
                  fields: [
                    { name: 'namespace', type: 'string' },
                    { name: 'name', type: 'string' },
                    { name: 'uid', type: ['null', 'string'], default: null },
                    { name: 'priority', type: 'int', doc: 'Its priority (spec.priority; 0 when unset) when it was preempted.' },
                  ],
                },
              },
              doc: 'The victims, in the order the preemption chose them (most important first).',
            },
          ],
        },
      ],
      default: null,
      'logplane.optional': true,
      doc: 'Null (every binding before v9, and any binding that no preemption preceded): the pod was bound without preempting. Set when the scheduler had nominated the pod to a node by preempting lower-priority pods there: the victims and the reason.',
    },
  ],
  ObjectUpdated: [
    {
      // v7: a terminated pod's quota charge given back (issue 17).
      name: 'quotaRelease',
      type: ['null', { type: 'enum', name: 'QuotaRelease', symbols: ['Terminated'] }],
      default: null,
      'logplane.optional': true,
      doc:
        "'Terminated': the resource quota controller saw this Pod (the object names its uid) in phase Succeeded or Failed, so the fold gives back what the Pod was charged against the ResourceQuotas of its namespace, as kube's pod evaluator stops counting a terminal pod. The object is not changed. Null: an ordinary update.",
    },
  ],
};

/**
 * Records a generated version appends to the envelope's `body` union, in the order they
 * were added (never remove or reorder one: a released version holds them).
 *
 * v8 (issue 16), custom resources typed in the log:
 * - `SchemaRegistered`: the Avro schema of one CustomResourceDefinition version's objects
 *   (`schemas/custom/`), with its CRC-64-AVRO fingerprint, appended in the partition of the
 *   CRD's group before the first object written with it, so the log carries the schemas its
 *   custom objects are read with;
 * - `CustomObjectCreated`, `CustomObjectUpdated`, `CustomObjectDeleted`: ObjectCreated,
 *   ObjectUpdated and ObjectDeleted of a custom object, whose content (everything but
 *   apiVersion, kind and metadata) is the Avro binary of a registered schema.
 */
export const EVENT_BODY_ADDITIONS: readonly Readonly<Record<string, unknown>>[] = [
  {
    type: 'record',
    name: 'SchemaRegistered',
    doc: 'The Avro schema of the objects of one version of a custom resource: custom objects name it by fingerprint, and are read with it.',
    fields: [
      { name: 'resource', type: 'string', doc: 'The name of the CustomResourceDefinition, `<plural>.<group>`: the event is keyed by it.' },
      { name: 'group', type: 'string', doc: 'The API group of the custom resource.' },
      { name: 'version', type: 'string', doc: 'The served version the schema is of.' },
      { name: 'kind', type: 'string', doc: 'The kind of the custom resource.' },
      { name: 'fingerprint', type: 'string', doc: 'The CRC-64-AVRO fingerprint of the schema, 16 lowercase hex digits.' },
      { name: 'schema', type: 'string', doc: 'The Avro schema, as JSON text.' },
    ],
  },
  {
    type: 'record',
    name: 'CustomObjectCreated',
    doc: 'A custom object was created; precondition: its CustomResourceDefinition serves its version, and no live object with that key exists.',
    fields: [
      {
        name: 'object',
        type: {
          type: 'record',
          name: 'CustomObject',
          doc: 'A custom object: its type meta and metadata, and its content encoded with a registered schema.',
          fields: [
            { name: 'apiVersion', type: 'string' },
            { name: 'kind', type: 'string' },
            { name: 'metadata', type: 'logplane.k8s.meta.v1.ObjectMeta' },
            { name: 'schema', type: 'string', doc: 'The fingerprint of the registered schema (SchemaRegistered) the content is encoded with.' },
            { name: 'content', type: 'bytes', doc: 'Every field of the object but apiVersion, kind and metadata: the Avro binary of the schema.' },
          ],
        },
      },
    ],
  },
  {
    type: 'record',
    name: 'CustomObjectUpdated',
    doc: 'A custom object was replaced (carries the expected resourceVersion), as ObjectUpdated.',
    fields: [
      { name: 'object', type: 'CustomObject' },
      { name: 'expectedResourceVersion', type: ['null', 'string'], default: null },
      { name: 'subresource', type: ['null', 'Subresource'], default: null, doc: 'Set when only that subresource was written.' },
    ],
  },
  {
    type: 'record',
    name: 'CustomObjectDeleted',
    doc: 'A custom object was deleted (or, with finalizers or Foreground propagation, marked for deletion), as ObjectDeleted.',
    fields: [
      { name: 'apiVersion', type: 'string' },
      { name: 'kind', type: 'string' },
      { name: 'namespace', type: ['null', 'string'], default: null },
      { name: 'name', type: 'string' },
      { name: 'expectedResourceVersion', type: ['null', 'string'], default: null },
      { name: 'uid', type: ['null', 'string'], default: null, doc: 'Precondition: the live object has this uid.' },
      { name: 'propagationPolicy', type: ['null', 'PropagationPolicy'], default: null },
      { name: 'gracePeriodSeconds', type: ['null', 'long'], default: null },
    ],
  },
];

/** One carried-over event file. */
export interface EventFile {
  /** Relative to the version directory, as in the source (`event/EventEnvelope.avsc`). */
  readonly path: string;
  readonly schema: unknown;
}

/**
 * Reads the event files of `source` (those of its manifest under `event/`) and rewrites
 * their object references. `kindRecords` are the records of the kinds in union order,
 * `kindNames` their kind names; `definitions` maps each released record name to the
 * definition it is read into.
 */
export function carryOverEvents(options: {
  source?: URL;
  kindRecords: readonly string[];
  kindNames: readonly string[];
  definitions: ReadonlyMap<string, string>;
}): EventFile[] {
  const source = options.source ?? EVENTS_SOURCE;
  const manifest = JSON.parse(readFileSync(new URL('manifest.json', source), 'utf8')) as { files: string[] };
  const rename = (name: string): string => {
    const definition = options.definitions.get(name);
    return definition === undefined ? name : avroNameOf(definition);
  };

  const rewrite = (schema: unknown): unknown => {
    if (typeof schema === 'string') {
      if (schema.startsWith('logplane.k8s.') && schema !== KIND_ENUM && !options.definitions.has(schema)) {
        throw new SchemaError(`the event records refer to ${schema}, which no released object record was read into`);
      }
      return rename(schema);
    }
    if (Array.isArray(schema)) {
      return schema.map(rewrite);
    }
    if (typeof schema !== 'object' || schema === null) {
      return schema;
    }
    const object = schema as Record<string, unknown>;
    if (object.type === 'enum' && object.name === KIND_ENUM) {
      const symbols = object.symbols as string[];
      return { ...object, symbols: [...symbols, ...options.kindNames.filter((kind, index, all) => !symbols.includes(kind) && all.indexOf(kind) === index)] };
    }
    const annotation = object[UNION_ATTRIBUTE] as { name?: string } | undefined;
    if (annotation?.name === KUBE_OBJECT) {
      return { ...object, type: [...options.kindRecords] };
    }
    const rewritten = Object.fromEntries(
      Object.entries(object).map(([key, value]) => [key, key === 'type' || key === 'fields' || key === 'items' || key === 'values' ? rewrite(value) : value]),
    );
    const name = object.type === 'record' && typeof object.name === 'string' ? object.name : '';
    const additions = Object.hasOwn(EVENT_FIELD_ADDITIONS, name) ? EVENT_FIELD_ADDITIONS[name] : undefined;
    const extended = additions === undefined ? rewritten : { ...rewritten, fields: [...(rewritten.fields as unknown[]), ...additions] };
    return name === ENVELOPE ? withBodyAdditions(extended) : extended;
  };

  return manifest.files
    .filter((file) => file.startsWith('event/'))
    .map((path) => ({ path, schema: rewrite(JSON.parse(readFileSync(new URL(path, source), 'utf8'))) }));
}
