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
 *   record it is read into (`logplane.k8s.core.v1.PodStatus`).
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
    return Object.fromEntries(
      Object.entries(object).map(([key, value]) => [key, key === 'type' || key === 'fields' || key === 'items' || key === 'values' ? rewrite(value) : value]),
    );
  };

  return manifest.files
    .filter((file) => file.startsWith('event/'))
    .map((path) => ({ path, schema: rewrite(JSON.parse(readFileSync(new URL(path, source), 'utf8'))) }));
}
