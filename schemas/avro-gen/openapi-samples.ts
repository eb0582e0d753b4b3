/**
 * Objects with every field set, built by walking the Kubernetes API document: each
 * property gets a value of its OpenAPI type. Deliberately independent of the Avro
 * generator (it imports nothing from `generate.ts`), so that a round trip through the
 * generated schemas checks them rather than restating them.
 *
 * Values: strings by format (`date-time` an RFC 3339 time, `byte` base64,
 * `int-or-string` alternately a number and a percentage), int32 small and int64 beyond
 * 2^32, numbers fractional, booleans alternating, arrays of two scalars or one object,
 * maps of two entries, and for schemas that hold arbitrary JSON (no type, or an object
 * without properties, or `x-kubernetes-preserve-unknown-fields`) a JSON value with every
 * JSON type nested in it. Recursion stops at `maxDepth` definitions deep, where only
 * required properties are filled.
 */
import type { ApiDocument, OpenApiSchema } from './openapi.ts';

/** A JSON value using every JSON type, nested, including integers beyond int32 and a non-integer. */
export const ARBITRARY_JSON = {
  string: 'text ✓',
  integer: 42,
  negative: -7,
  large: 2 ** 40 + 1,
  beyondSafe: 2 ** 60,
  fraction: 0.25,
  true: true,
  false: false,
  null: null,
  empty: {},
  emptyList: [],
  list: [1, 'two', 3.5, null, [false], { deep: { deeper: ['x'] } }],
};

/** A sample object for `definition` with every property set (its `kind`/`apiVersion` from its GVK). */
export function sampleObject(document: ApiDocument, definition: string, options: { maxDepth?: number } = {}): Record<string, unknown> {
  const maxDepth = options.maxDepth ?? 12;
  let counter = 0;
  const next = (): number => ++counter;

  /** The definitions the sample is inside of, outermost first: a recursive one (JSONSchemaProps) is entered twice at most, then sampled empty. */
  const inside: string[] = [];
  const sample = (schema: OpenApiSchema, depth: number, path: string): unknown => {
    if (schema.$ref !== undefined) {
      const name = schema.$ref.replace('#/definitions/', '');
      const target = document.definitions[name];
      if (target === undefined) {
        throw new Error(`${path}: no definition ${name}`);
      }
      if (inside.filter((entered) => entered === name).length >= 2) return {};
      inside.push(name);
      try {
        return sample(target, depth + 1, path);
      } finally {
        inside.pop();
      }
    }
    if (schema['x-kubernetes-preserve-unknown-fields'] === true) {
      return ARBITRARY_JSON;
    }
    switch (schema.type) {
      case 'string':
        switch (schema.format) {
          case 'date-time':
            return `2026-01-05T10:${String(next() % 60).padStart(2, '0')}:00Z`;
          case 'byte':
            return Buffer.from(`bytes of ${path}`).toString('base64');
          case 'int-or-string':
            return next() % 2 === 0 ? next() : `${next() % 100}%`;
          default:
            return `${path.slice(path.lastIndexOf('.') + 1)}-${next()}`;
        }
      case 'integer':
        return schema.format === 'int32' ? next() : 2 ** 33 + next();
      case 'number':
        return next() + 0.5;
      case 'boolean':
        return next() % 2 === 0;
      case 'array': {
        const items = schema.items as OpenApiSchema;
        const scalar = items.$ref === undefined && items.type !== 'array' && items.type !== 'object';
        return scalar ? [sample(items, depth, `${path}[0]`), sample(items, depth, `${path}[1]`)] : [sample(items, depth, `${path}[0]`)];
      }
      case 'object':
      case undefined: {
        if (schema.properties !== undefined) {
          const required = new Set(schema.required ?? []);
          return Object.fromEntries(
            Object.entries(schema.properties)
              .filter(([property]) => depth <= maxDepth || required.has(property))
              .map(([property, propertySchema]) => [property, sample(propertySchema, depth, `${path}.${property}`)]),
          );
        }
        if (typeof schema.additionalProperties === 'object') {
          const values = schema.additionalProperties;
          return { [`key-${next()}`]: sample(values, depth, `${path}{a}`), [`key-${next()}`]: sample(values, depth, `${path}{b}`) };
        }
        return ARBITRARY_JSON;
      }
      default:
        throw new Error(`${path}: unknown OpenAPI type ${schema.type}`);
    }
  };

  const root = document.definitions[definition];
  if (root === undefined) {
    throw new Error(`no definition ${definition}`);
  }
  const object = sample(root, 0, definition) as Record<string, unknown>;
  const gvk = root['x-kubernetes-group-version-kind']?.[0];
  if (gvk !== undefined) {
    object.kind = gvk.kind;
    object.apiVersion = gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`;
  }
  return object;
}
