import type avro from 'avsc';
import { assertNever } from './assert-never.ts';
import { viewOf } from './schema-view.ts';

/** Whether a value (avsc representation) surely fits a type; see `compileFastCheck`. */
export type FastCheck = (value: unknown) => boolean;

/**
 * Compiles a check of a value against a type, as straight-line code per record (one
 * expression per field, constant property names), for the encode path: avsc's
 * `isValid(value, { noUndeclaredFields: true })` dispatches through every field's type and
 * lists every record's keys (`Object.keys`), which made validating an event about as costly
 * as writing it.
 *
 * It is at least as strict as avsc's check (true only when avsc's check is true too); it may
 * reject values avsc accepts where avsc is loose (an array where a record is expected,
 * inherited enumerable properties, prototype keys as enum symbols or union branch names). A
 * caller that gets false asks avsc (`findProblem`), which decides and describes the problem,
 * so the verdict on every value is avsc's. Field names are Avro names
 * (`[A-Za-z_][A-Za-z0-9_]*`) and are embedded as JSON string literals.
 */
export function compileFastCheck(root: avro.Type): FastCheck {
  /** The body of each generated function `f<index>(v)`: one per record, array, map, union. */
  const bodies: string[] = [];
  /** Symbol sets of enums, passed to the generated code as `e<index>`. */
  const enums: ReadonlySet<string>[] = [];
  const compiled = new Map<avro.Type, string>();
  const enumOf = new Map<avro.Type, string>();

  /** An expression that is true when `v` fits `type`. */
  const expression = (type: avro.Type, v: string): string => {
    const view = viewOf(type);
    switch (view.type) {
      case 'primitive':
        switch (view.primitive) {
          case 'null':
            return `${v} === null`;
          case 'boolean':
            return `typeof ${v} === 'boolean'`;
          case 'int':
            return `(typeof ${v} === 'number' && ${v} === (${v} | 0))`;
          case 'long':
            return `(typeof ${v} === 'number' && ${v} % 1 === 0 && ${v} >= -9007199254740990 && ${v} <= 9007199254740990)`;
          case 'float':
          case 'double':
            return `typeof ${v} === 'number'`;
          case 'string':
            return `typeof ${v} === 'string'`;
          case 'bytes':
            return `Buffer.isBuffer(${v})`;
          default:
            return assertNever(view.primitive, 'Avro primitive');
        }
      case 'enum': {
        let name = enumOf.get(type);
        if (name === undefined) {
          name = `e${enums.length}`;
          enumOf.set(type, name);
          enums.push(new Set(view.symbols));
        }
        return `(typeof ${v} === 'string' && ${name}.has(${v}))`;
      }
      case 'array':
      case 'map':
      case 'record':
      case 'union':
        return `${functionOf(type)}(${v})`;
      default:
        return assertNever(view, 'Avro type view');
    }
  };

  const functionOf = (type: avro.Type): string => {
    const known = compiled.get(type);
    if (known !== undefined) return known;
    const name = `f${bodies.length}`;
    compiled.set(type, name);
    const index = bodies.length;
    bodies.push('');
    bodies[index] = bodyOf(type);
    return name;
  };

  const bodyOf = (type: avro.Type): string => {
    const view = viewOf(type);
    switch (view.type) {
      case 'array':
        return `if (!Array.isArray(v)) return false; for (var i = 0; i < v.length; i++) { var x = v[i]; if (!(${expression(view.items, 'x')})) return false; } return true;`;
      case 'map':
        return `if (typeof v !== 'object' || v === null || Array.isArray(v)) return false; for (var k in v) { var x = v[k]; if (!(${expression(view.values, 'x')})) return false; } return true;`;
      case 'record': {
        const checks = view.fields.map((field, index) => {
          const check = expression(field.type, `x${index}`);
          const defaulted = hasDefault(type, field.name);
          return `var x${index} = v[${JSON.stringify(field.name)}]; if (!(${defaulted ? `x${index} === undefined || ` : ''}${check})) return false;`;
        });
        const cases = view.fields.map((field) => `case ${JSON.stringify(field.name)}:`).join(' ');
        const undeclared = view.fields.length === 0 ? 'for (var k in v) return false;' : `for (var k in v) { switch (k) { ${cases} break; default: return false; } }`;
        return `if (typeof v !== 'object' || v === null || Array.isArray(v)) return false; ${undeclared} ${checks.join(' ')} return true;`;
      }
      case 'union': {
        if (view.wrapped) {
          const cases = view.branches
            .filter((branch) => branch.typeName !== 'null')
            .map((branch) => `case ${JSON.stringify(branch.branchName)}: return ${expression(branch, 'x')};`)
            .join(' ');
          const nullable = view.branches.some((branch) => branch.typeName === 'null');
          return `if (v === null) return ${nullable}; if (typeof v !== 'object' || Array.isArray(v)) return false; var n = 0, key; for (var k in v) { n++; key = k; } if (n !== 1 || !Object.prototype.hasOwnProperty.call(v, key)) return false; var x = v[key]; switch (key) { ${cases} default: return false; }`;
        }
        // Unwrapped: the branch is picked by the value's JavaScript type, as avsc's buckets do.
        const byBucket = new Map<string, avro.Type>();
        for (const branch of view.branches) byBucket.set(bucketOfType(branch), branch);
        const cases = [...byBucket].map(([bucket, branch]) => `case ${JSON.stringify(bucket)}: return ${expression(branch, 'v')};`).join(' ');
        return `var bucket = v === null ? 'null' : Array.isArray(v) ? 'array' : Buffer.isBuffer(v) ? 'buffer' : typeof v; switch (bucket) { ${cases} default: return false; }`;
      }
      case 'primitive':
      case 'enum':
        return `return ${expression(type, 'v')};`;
      default:
        return assertNever(view, 'Avro type view');
    }
  };

  const rootName = functionOf(root);
  const declarations = bodies.map((body, index) => `function f${index}(v) { ${body} }`).join('\n');
  const enumNames = enums.map((_, index) => `e${index}`);
  const factory = new Function('Buffer', ...enumNames, `${declarations}\nreturn ${rootName};`) as (...args: unknown[]) => FastCheck;
  return factory(Buffer, ...enums);
}

/** avsc's bucket of a branch type in an unwrapped union (which JavaScript values it takes). */
function bucketOfType(type: avro.Type): string {
  const view = viewOf(type);
  switch (view.type) {
    case 'primitive':
      switch (view.primitive) {
        case 'null':
          return 'null';
        case 'boolean':
          return 'boolean';
        case 'int':
        case 'long':
        case 'float':
        case 'double':
          return 'number';
        case 'string':
          return 'string';
        case 'bytes':
          return 'buffer';
        default:
          return assertNever(view.primitive, 'Avro primitive');
      }
    case 'enum':
      return 'string';
    case 'array':
      return 'array';
    case 'map':
    case 'record':
      return 'object';
    case 'union':
      throw new Error('a union cannot be a branch of a union');
    default:
      return assertNever(view, 'Avro type view');
  }
}

function hasDefault(record: avro.Type, name: string): boolean {
  const field = (record as avro.types.RecordType).fields.find((candidate) => candidate.name === name);
  return field !== undefined && field.defaultValue() !== undefined;
}
