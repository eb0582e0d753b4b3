/**
 * Checks a request body against the Avro schema of its kind: which fields logplane stores
 * (everything else is an "unknown field", rejected with `fieldValidation=Strict`, dropped
 * with a warning otherwise) and which JSON type each field has (`replicas: "3"` is an
 * error naming `spec.replicas`). Works on the Kubernetes JSON view (absent = null).
 */
import type avro from 'avsc';
import { loadSchemaRegistry, type Kind } from '../../schemas/index.ts';
import { InvalidQuantityError } from '../../schemas/errors.ts';
import { canonicalQuantity } from '../../schemas/quantity.ts';
import { JSON_VALUE_RECORD, shortName, viewOf } from '../../schemas/schema-view.ts';
import { fieldErrors } from '../errors.ts';
import type { StatusCause } from '../status.ts';

/** What the schema check found. */
export interface ShapeReport {
  /** A copy of the input without unknown fields and without nulls (Kubernetes JSON: absent). */
  readonly value: Record<string, unknown>;
  /** Paths of fields the schema does not declare, e.g. `spec.foo`. */
  readonly unknownFields: readonly string[];
  /** Wrong types and missing required fields. */
  readonly problems: readonly StatusCause[];
}

/** Fields of real Kubernetes objects that logplane does not keep and drops without a warning. */
const SILENTLY_DROPPED: ReadonlySet<string> = new Set(['metadata.managedFields', 'metadata.selfLink']);

/** An unknown field that asks for nothing: empty (`{}`, `[]`, null) or Kubernetes' default. */
const asksForNothing = (_field: string, value: unknown): boolean => {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value) && value.length === 0) return true;
  if (isPlainObject(value) && Object.keys(value).length === 0) return true;
  return false;
};

let types: Readonly<Record<string, avro.Type>> | undefined;
const typeNamed = (name: string): avro.Type => {
  types ??= loadSchemaRegistry().current.types;
  const type = types[name];
  if (!type) throw new Error(`schema type ${name} not found`);
  return type;
};

let kindRecords: ReadonlyMap<string, avro.Type> | undefined;
/** The record of a stored kind: a branch of ObjectCreated's object union. */
const kindRecord = (kind: Kind): avro.Type => {
  if (!kindRecords) {
    const union = (typeNamed('logplane.event.ObjectCreated') as avro.types.RecordType).field('object').type as avro.types.WrappedUnionType;
    kindRecords = new Map(
      union.types.map((branch) => {
        const view = viewOf(branch);
        return [view.type === 'record' ? (view.kind?.kind ?? shortName(view.name)) : '', branch];
      }),
    );
  }
  const record = kindRecords.get(kind);
  if (!record) throw new Error(`the current schema has no record of ${kind}`);
  return record;
};

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const join = (path: string, field: string): string => (path === '' ? field : `${path}.${field}`);

const preview = (value: unknown): string => {
  if (Array.isArray(value)) return 'an array';
  if (isPlainObject(value)) return 'an object';
  return JSON.stringify(value) ?? String(value);
};

const describe = (type: avro.Type): string => {
  switch (type.typeName) {
    case 'int':
    case 'long':
      return 'integer';
    case 'float':
    case 'double':
      return 'number';
    case 'record':
    case 'map':
      return 'object';
    case 'union:unwrapped':
    case 'union:wrapped':
      return (type as avro.types.UnwrappedUnionType).types
        .filter((t) => t.typeName !== 'null')
        .map(describe)
        .join(' or ');
    default:
      return type.typeName;
  }
};

/** Whether a JSON value has the JSON type of an Avro branch (used to pick union branches). */
const fitsKind = (type: avro.Type, value: unknown): boolean => {
  switch (type.typeName) {
    case 'string':
    case 'enum':
      return typeof value === 'string';
    case 'int':
      return typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= 2 ** 31 - 1;
    case 'long':
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'float':
    case 'double':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'record':
    case 'map':
      return isPlainObject(value);
    default:
      return false;
  }
};

/**
 * Fields the API document marks required that kube-apiserver defaults before it validates
 * (so a manifest may leave them out), by record: the defaulting step (`defaults.ts`) fills them.
 */
const DEFAULTED_REQUIRED: Readonly<Record<string, ReadonlySet<string>>> = {
  // SetDefaults_PodFailurePolicyOnPodConditionsPattern: status True.
  PodFailurePolicyOnPodConditionsPattern: new Set(['status']),
};

/** A record type's fields as the walk needs them, worked out once per type. */
interface RecordShape {
  /** `name` is the JSON property (the Avro field's `logplane.jsonName`, else its name: `$ref` is `_ref` in Avro). */
  readonly fields: readonly { readonly name: string; readonly type: avro.Type; readonly optional: boolean; readonly quantity: boolean }[];
  /** The JSON properties the record declares. */
  readonly declared: ReadonlySet<string>;
}
const recordShapes = new WeakMap<avro.types.RecordType, RecordShape>();
const recordShape = (record: avro.types.RecordType): RecordShape => {
  let shape = recordShapes.get(record);
  if (!shape) {
    const view = viewOf(record);
    const quantities = new Set(view.type === 'record' ? view.fields.filter((field) => field.quantity).map((field) => field.name) : []);
    const jsonNames = new Map(view.type === 'record' ? view.fields.map((field) => [field.name, field.jsonName]) : []);
    const defaulted = DEFAULTED_REQUIRED[shortName(record.name ?? '')];
    shape = {
      fields: record.fields.map((field) => ({
        name: jsonNames.get(field.name) ?? field.name,
        type: field.type,
        quantity: quantities.has(field.name),
        // A union with null may be absent; anything else is required.
        optional:
          defaulted?.has(field.name) === true ||
          (field.type.typeName.startsWith('union') && (field.type as avro.types.UnwrappedUnionType).types.some((t) => t.typeName === 'null')),
      })),
      declared: new Set(record.fields.map((field) => jsonNames.get(field.name) ?? field.name)),
    };
    recordShapes.set(record, shape);
  }
  return shape;
};

interface Walk {
  readonly unknownFields: string[];
  readonly problems: StatusCause[];
}

/** A JSON value for `logplane.json.JsonValue`: anything JSON, kept as is (nulls inside it too). */
const isJson = (value: unknown, depth = 0): boolean => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (depth > 10_000) return false;
  if (Array.isArray(value)) return value.every((item) => isJson(item, depth + 1));
  return isPlainObject(value) && Object.values(value).every((item) => isJson(item, depth + 1));
};

/**
 * A quantity where the schema has a string (`cpu: 1`, `cpu: "0.5"`): stored in kube's
 * canonical form (`1`, `500m`), as kube-apiserver does when it decodes a Quantity.
 */
const walkQuantities = (type: avro.Type, value: unknown, path: string, state: Walk): unknown => {
  if (type.typeName === 'string') {
    if (typeof value !== 'string' && typeof value !== 'number') {
      state.problems.push(fieldErrors.typeInvalid(path, `${preview(value)}: must be of type string or number (a quantity)`));
      return undefined;
    }
    try {
      return canonicalQuantity(value);
    } catch (error) {
      if (!(error instanceof InvalidQuantityError)) throw error;
      state.problems.push(fieldErrors.invalid(path, value, error.detail));
      return undefined;
    }
  }
  if (type.typeName === 'union:unwrapped') {
    const branch = (type as avro.types.UnwrappedUnionType).types.find((b) => b.typeName !== 'null');
    return branch ? walkQuantities(branch, value, path, state) : undefined;
  }
  if (type.typeName === 'map' && isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(value)) {
      if (entry === null || entry === undefined) continue;
      const checked = walkQuantities((type as avro.types.MapType).valuesType, entry, `${path}[${key}]`, state);
      if (checked !== undefined) out[key] = checked;
    }
    return out;
  }
  if (type.typeName === 'array' && Array.isArray(value)) {
    return value.map((item, index) => walkQuantities((type as avro.types.ArrayType).itemsType, item, `${path}[${index}]`, state));
  }
  return walk(type, value, path, state);
};

const walk = (type: avro.Type, value: unknown, path: string, state: Walk): unknown => {
  if (type.name === JSON_VALUE_RECORD) {
    if (!isJson(value)) {
      state.problems.push(fieldErrors.typeInvalid(path, `${preview(value)}: must be a JSON value`));
      return undefined;
    }
    return value;
  }
  switch (type.typeName) {
    case 'union:unwrapped':
    case 'union:wrapped': {
      const branches = (type as avro.types.UnwrappedUnionType).types;
      const json = branches.find((b) => b.name === JSON_VALUE_RECORD);
      if (json) return walk(json, value, path, state);
      const branch = branches.find((b) => b.typeName !== 'null' && fitsKind(b, value));
      if (!branch) {
        state.problems.push(fieldErrors.typeInvalid(path, `${preview(value)}: must be of type ${describe(type)}`));
        return undefined;
      }
      return walk(branch, value, path, state);
    }
    case 'record': {
      if (!isPlainObject(value)) {
        state.problems.push(fieldErrors.typeInvalid(path, `${preview(value)}: must be of type object`));
        return undefined;
      }
      const { fields, declared } = recordShape(type as avro.types.RecordType);
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        if (declared.has(key) || (path === '' && key === 'kind')) continue;
        const fieldPath = join(path, key);
        if (!SILENTLY_DROPPED.has(fieldPath) && !asksForNothing(key, value[key])) state.unknownFields.push(fieldPath);
      }
      // Most declared fields are absent from a request body: their paths are built only when needed.
      for (const field of fields) {
        const fieldValue = value[field.name];
        if (fieldValue === undefined || fieldValue === null) {
          if (!field.optional) state.problems.push(fieldErrors.required(join(path, field.name)));
          continue;
        }
        const checked = (field.quantity ? walkQuantities : walk)(field.type, fieldValue, join(path, field.name), state);
        if (checked !== undefined) out[field.name] = checked;
      }
      return out;
    }
    case 'map': {
      if (!isPlainObject(value)) {
        state.problems.push(fieldErrors.typeInvalid(path, `${preview(value)}: must be of type object`));
        return undefined;
      }
      const values = (type as avro.types.MapType).valuesType;
      const out: Record<string, unknown> = {};
      for (const [key, entry] of Object.entries(value)) {
        if (entry === null || entry === undefined) continue;
        const checked = walk(values, entry, `${path}[${key}]`, state);
        if (checked !== undefined) out[key] = checked;
      }
      return out;
    }
    case 'array': {
      if (!Array.isArray(value)) {
        state.problems.push(fieldErrors.typeInvalid(path, `${preview(value)}: must be of type array`));
        return undefined;
      }
      const items = (type as avro.types.ArrayType).itemsType;
      return value.map((item, index) => {
        if (item === null || item === undefined) {
          state.problems.push(fieldErrors.required(`${path}[${index}]`));
          return undefined;
        }
        return walk(items, item, `${path}[${index}]`, state);
      });
    }
    default: {
      if (!fitsKind(type, value)) {
        state.problems.push(fieldErrors.typeInvalid(path, `${preview(value)}: must be of type ${describe(type)}`));
        return undefined;
      }
      if (type.typeName === 'enum' && !(type as avro.types.EnumType).symbols.includes(value as string)) {
        state.problems.push(fieldErrors.notSupported(path, value, (type as avro.types.EnumType).symbols));
        return undefined;
      }
      return value;
    }
  }
};

/**
 * Checks `value` against the schema type `typeName` (e.g. `logplane.k8s.PodStatus`);
 * paths in the report start with `pathPrefix`.
 */
export const checkShapeOf = (typeName: string | avro.Type, value: unknown, pathPrefix = ''): ShapeReport => {
  const state: Walk = { unknownFields: [], problems: [] };
  const checked = walk(typeof typeName === 'string' ? typeNamed(typeName) : typeName, value, pathPrefix, state);
  return { value: (checked ?? {}) as Record<string, unknown>, unknownFields: state.unknownFields, problems: state.problems };
};

/** Checks a whole object of `kind`; the `kind` field itself is kept. */
export const checkShape = (kind: Kind, object: Record<string, unknown>): ShapeReport => {
  const report = checkShapeOf(kindRecord(kind), object);
  const { apiVersion, ...rest } = report.value;
  return { ...report, value: { apiVersion, kind, ...rest } };
};
