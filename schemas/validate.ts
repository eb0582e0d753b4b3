import type avro from 'avsc';
import { assertNever } from './assert-never.ts';
import { viewOf, shortName, isNullable, type TypeView } from './schema-view.ts';

/** The first field of a value that does not fit a schema, and what is wrong with it. */
export type ShapeProblem = {
  /** Path in the TypeScript view, e.g. `spec.containers[0].ports[0].containerPort`. */
  path: string;
  /** What is wrong, e.g. `expected int, got "80"`. */
  detail: string;
};

type Failure = { segments: readonly string[]; value: unknown; type: avro.Type };

/**
 * Checks a value (avsc representation) against a type, rejecting fields the schema does
 * not declare, and describes the first problem; undefined when the value fits.
 * The fast path (a valid value) is a single avsc check without bookkeeping.
 */
export function findProblem(type: avro.Type, value: unknown): ShapeProblem | undefined {
  if (type.isValid(value, { noUndeclaredFields: true })) {
    return undefined;
  }
  let first: Failure | undefined;
  type.isValid(value, {
    noUndeclaredFields: true,
    errorHook: (segments, failedValue, failedType) => {
      first ??= { segments: [...segments], value: failedValue, type: failedType };
    },
  });
  return first === undefined ? { path: '', detail: 'does not fit the schema' } : describe(type, first);
}

/** Appends a step (a field name, or `[…]` for an item or map entry) to a path. */
function joinPath(path: string, step: string): string {
  if (step === '') {
    return path;
  }
  if (path === '' || step.startsWith('[')) {
    return `${path}${step}`;
  }
  return `${path}.${step}`;
}

function describe(root: avro.Type, failure: Failure): ShapeProblem {
  const path = renderPath(root, failure.segments);
  const { value, type } = failure;
  if (value === undefined) {
    return { path, detail: 'required field is missing' };
  }
  const view = viewOf(type);
  if (view.type === 'record' && isObject(value)) {
    const declared = new Set(view.fields.map((field) => field.name));
    const unknown = Object.keys(value).find((key) => !declared.has(key));
    if (unknown !== undefined) {
      return { path: joinPath(path, unknown), detail: `unknown field (${shortName(view.name)} has no such field)` };
    }
  }
  if (view.type === 'union' && view.annotation !== undefined && isObject(value)) {
    const key = view.annotation.discriminator;
    const expected = view.branches.map((branch) => JSON.stringify(shortName(branch.name ?? ''))).join(', ');
    return { path: joinPath(path, key), detail: `expected one of ${expected}, got ${preview(value[key])}` };
  }
  return { path, detail: `expected ${describeType(view)}, got ${preview(value)}` };
}

function renderPath(root: avro.Type, segments: readonly string[]): string {
  let type = root;
  let path = '';
  for (const segment of segments) {
    const view = viewOf(type);
    const step = stepInto(view, segment);
    path = joinPath(path, step.rendered);
    type = step.type;
  }
  return path;
}

function stepInto(view: TypeView, segment: string): { type: avro.Type; rendered: string } {
  switch (view.type) {
    case 'record': {
      const field = view.fields.find((candidate) => candidate.name === segment);
      if (field === undefined) {
        break;
      }
      return { type: field.type, rendered: segment };
    }
    case 'array':
      return { type: view.items, rendered: `[${segment}]` };
    case 'map':
      return { type: view.values, rendered: `[${JSON.stringify(segment)}]` };
    case 'union': {
      // Wrapped unions name the branch in the path; unwrapped ones hold at most one
      // branch with inner fields, which the segment steps into.
      const branch = view.wrapped
        ? view.branches.find((candidate) => candidate.branchName === segment)
        : view.branches.find((candidate) => ['record', 'array', 'map'].includes(candidate.typeName));
      if (branch === undefined) {
        break;
      }
      return view.wrapped ? { type: branch, rendered: '' } : stepInto(viewOf(branch), segment);
    }
    case 'primitive':
    case 'enum':
      break;
    default:
      return assertNever(view, 'Avro type view');
  }
  throw new Error(`avsc reported a path segment ${JSON.stringify(segment)} the schema does not have`);
}

function describeType(view: TypeView): string {
  switch (view.type) {
    case 'primitive':
      return view.primitive;
    case 'enum':
      return `one of ${view.symbols.map((symbol) => JSON.stringify(symbol)).join(', ')}`;
    case 'array':
      return 'an array';
    case 'map':
      return 'an object of string keys (map)';
    case 'record':
      return `an object (${shortName(view.name)})`;
    case 'union': {
      const alternatives = view.branches
        .filter((branch) => branch.typeName !== 'null')
        .map((branch) => describeType(viewOf(branch)))
        .join(' or ');
      return isNullable(view.branches) ? `${alternatives} or null` : alternatives;
    }
    default:
      return assertNever(view, 'Avro type view');
  }
}

function preview(value: unknown): string {
  if (value === undefined) {
    return 'nothing';
  }
  if (Array.isArray(value)) {
    return 'an array';
  }
  if (typeof value === 'object' && value !== null) {
    return 'an object';
  }
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
