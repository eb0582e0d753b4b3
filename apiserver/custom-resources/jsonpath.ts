/**
 * Kubernetes' JSONPath templates (client-go `util/jsonpath`, as kube-apiserver 1.32 and
 * kubectl use them): `{.spec.replicas}`, `{.items[*].name}`, `{..name}`,
 * `{.status.conditions[?(@.type=="Ready")].status}`, `{.a['b.c']}`, `{.x[1:3]}`, unions
 * `[0,2]`. The parser and the evaluator follow client-go's `parser.go` and `jsonpath.go`
 * step by step, quirks included (an out-of-range index is an error, `..` collects only
 * non-empty containers and strings, a filter compares Go-typed values and fails on mixed
 * types), because a general JSONPath library answers differently on exactly those cases.
 *
 * Data is plain JSON. Map lookups read own properties only (`Object.hasOwn`), so a path never
 * reaches a prototype, whatever keys (`__proto__`, `constructor`) the data holds.
 *
 * Not supported: the `range`/`end` keywords of multi-line templates (an evaluation error
 * here); JSON numbers are told apart as kube's decoder does (int64 when integral) from
 * their JS value, so `1.0` in the data counts as an integer.
 */
import { GoByte, GoFloat, type JsonPathTemplate, type JsonPathValue, type ListNode, type Node, type SliceParam } from './jsonpath-parse.ts';

export { GoByte, GoFloat, parseJsonPathTemplate, type JsonPathParse, type JsonPathTemplate, type JsonPathValue } from './jsonpath-parse.ts';

/** What a template evaluates to: one list of values per template part (client-go's `FindResults`), or the evaluation's error. */
export type JsonPathResults = { readonly type: 'found'; readonly results: readonly (readonly JsonPathValue[])[] } | { readonly type: 'error'; readonly message: string };

// ---- evaluation -------------------------------------------------------------------------

/** A walk's answer, as Go's `([]reflect.Value, error)`: on error the values are what Go returns beside it. */
interface Step {
  readonly values: JsonPathValue[];
  readonly error?: string;
}

const isMap = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof GoByte) && !(value instanceof GoFloat);
const isNil = (value: unknown): boolean => value === null || value === undefined;
const utf8 = new TextEncoder();

/** The elements `.*` and `..` walk into: map values, array items, a string's bytes. */
const children = (value: unknown): JsonPathValue[] => {
  if (Array.isArray(value)) return [...value];
  if (typeof value === 'string') return [...utf8.encode(value)].map((byte) => new GoByte(byte));
  if (isMap(value)) return Object.keys(value).map((key) => value[key]);
  return [];
};

type BasicKind = 'bool' | 'int' | 'uint' | 'float' | 'string';

/** text/template's `basicKind`: JSON integers decode as int64, other numbers as float64. */
const basicKind = (value: unknown): BasicKind | undefined => {
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return Number.isSafeInteger(value) ? 'int' : 'float';
  if (value instanceof GoFloat) return 'float';
  if (value instanceof GoByte) return 'uint';
  return undefined;
};

const numberOf = (value: unknown): number => (value instanceof GoFloat || value instanceof GoByte ? value.value : (value as number));

/** Go's string order: by bytes of UTF-8, which is by code points. */
const compareStrings = (a: string, b: string): number => {
  const left = [...a];
  const right = [...b];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const difference = left[i]!.codePointAt(0)! - right[i]!.codePointAt(0)!;
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
};

type Comparison = { readonly ok: true; readonly truth: boolean } | { readonly ok: false; readonly error: string };
const BAD_TYPE: Comparison = { ok: false, error: 'invalid type for comparison' };
const BAD_COMPARISON: Comparison = { ok: false, error: 'incompatible types for comparison' };

/** The forked text/template `Equal`. */
const equal = (left: unknown, right: unknown): Comparison => {
  const k1 = basicKind(left);
  const k2 = basicKind(right);
  if (k1 === undefined || k2 === undefined) return BAD_TYPE;
  if (k1 !== k2) {
    const mixedIntegers = (k1 === 'int' && k2 === 'uint') || (k1 === 'uint' && k2 === 'int');
    return mixedIntegers ? { ok: true, truth: numberOf(left) === numberOf(right) } : BAD_COMPARISON;
  }
  if (k1 === 'bool' || k1 === 'string') return { ok: true, truth: left === right };
  return { ok: true, truth: numberOf(left) === numberOf(right) };
};

/** The forked text/template `Less`. */
const less = (left: unknown, right: unknown): Comparison => {
  const k1 = basicKind(left);
  const k2 = basicKind(right);
  if (k1 === undefined || k2 === undefined) return BAD_TYPE;
  if (k1 !== k2) {
    const mixedIntegers = (k1 === 'int' && k2 === 'uint') || (k1 === 'uint' && k2 === 'int');
    return mixedIntegers ? { ok: true, truth: numberOf(left) < numberOf(right) } : BAD_COMPARISON;
  }
  if (k1 === 'bool') return BAD_TYPE;
  if (k1 === 'string') return { ok: true, truth: compareStrings(left as string, right as string) < 0 };
  return { ok: true, truth: numberOf(left) < numberOf(right) };
};

const not = (comparison: Comparison): Comparison => (comparison.ok ? { ok: true, truth: !comparison.truth } : comparison);
const lessOrEqual = (left: unknown, right: unknown): Comparison => {
  const lessThan = less(left, right);
  return !lessThan.ok || lessThan.truth ? lessThan : equal(left, right);
};

const COMPARATORS: Readonly<Record<string, (left: unknown, right: unknown) => Comparison>> = {
  '<': less,
  '>': (left, right) => not(lessOrEqual(left, right)),
  '==': equal,
  '!=': (left, right) => not(equal(left, right)),
  '<=': lessOrEqual,
  '>=': (left, right) => not(less(left, right)),
};

interface Evaluation {
  readonly allowMissingKeys: boolean;
}

const evalList = (input: JsonPathValue[], node: ListNode, options: Evaluation): Step => {
  let current = input;
  for (const child of node.nodes) {
    const step = walk(current, child, options);
    if (step.error !== undefined) return step;
    current = step.values;
  }
  return { values: current };
};

const evalField = (input: JsonPathValue[], name: string, options: Evaluation): Step => {
  const results: JsonPathValue[] = [];
  for (const value of input) {
    if (isMap(value) && Object.hasOwn(value, name)) results.push(value[name]);
  }
  if (results.length === 0 && input.length > 0 && !options.allowMissingKeys) return { values: results, error: `${name} is not found` };
  return { values: results };
};

const evalArray = (input: JsonPathValue[], params: readonly [SliceParam, SliceParam, SliceParam]): Step => {
  const result: JsonPathValue[] = [];
  for (const value of input) {
    if (isNil(value)) continue;
    if (!Array.isArray(value)) return { values: input, error: 'not array or slice' };
    const length = value.length;
    let from = params[0].known ? params[0].value : 0;
    if (from < 0) from += length;
    let to = params[1].known ? params[1].value : length;
    if (to < 0 || (to === 0 && params[1].derived)) to += length;
    if (to === from) return { values: result };
    if (from >= length || from < 0) return { values: input, error: `array index out of bounds: index ${from}, length ${length}` };
    if (to > length || to < 0) return { values: input, error: `array index out of bounds: index ${to - 1}, length ${length}` };
    if (from > to) return { values: input, error: `starting index ${from} is greater than ending index ${to}` };
    let step = 1;
    if (params[2].known) {
      if (params[2].value <= 0) return { values: input, error: 'step must be > 0' };
      step = params[2].value;
    }
    for (let i = from; i < to; i += step) result.push(value[i]);
  }
  return { values: result };
};

const evalFilter = (input: JsonPathValue[], node: Extract<Node, { type: 'filter' }>, options: Evaluation): Step => {
  const results: JsonPathValue[] = [];
  for (const value of input) {
    if (!Array.isArray(value)) return { values: input, error: 'not array or slice and cannot be filtered' };
    for (const item of value) {
      const lefts = evalList([item], node.left, options);
      if (node.operator === 'exists') {
        if (lefts.values.length > 0) results.push(item);
        continue;
      }
      if (lefts.error !== undefined) return { values: input, error: lefts.error };
      if (lefts.values.length === 0) continue;
      if (lefts.values.length > 1) return { values: input, error: 'can only compare one element at a time' };
      const rights = evalList([item], node.right, options);
      if (rights.error !== undefined) return { values: input, error: rights.error };
      if (rights.values.length === 0) continue;
      if (rights.values.length > 1) return { values: input, error: 'can only compare one element at a time' };
      const comparator = COMPARATORS[node.operator];
      if (comparator === undefined) return { values: results, error: `unrecognized filter operator ${node.operator}` };
      const comparison = comparator(lefts.values[0], rights.values[0]);
      if (!comparison.ok) return { values: results, error: comparison.error };
      if (comparison.truth) results.push(item);
    }
  }
  return { values: results };
};

/** Every non-empty container (and non-empty string) below and including each input, depth first. */
const evalRecursive = (input: JsonPathValue[]): Step => {
  const result: JsonPathValue[] = [];
  for (const value of input) {
    const stack: JsonPathValue[] = [value];
    while (stack.length > 0) {
      const current = stack.pop();
      const inner = isNil(current) ? [] : children(current);
      if (inner.length === 0) continue;
      result.push(current);
      for (let i = inner.length - 1; i >= 0; i--) stack.push(inner[i]);
    }
  }
  return { values: result };
};

const walk = (input: JsonPathValue[], node: Node, options: Evaluation): Step => {
  switch (node.type) {
    case 'list':
      return evalList(input, node, options);
    case 'text':
      return { values: [node.text] };
    case 'field':
      return evalField(input, node.name, options);
    case 'array':
      return evalArray(input, node.params);
    case 'filter':
      return evalFilter(input, node, options);
    case 'int':
    case 'bool':
      return { values: input.map(() => node.value) };
    case 'float':
      return { values: input.map(() => new GoFloat(node.value)) };
    case 'wildcard':
      return { values: input.flatMap((value) => (isNil(value) ? [] : children(value))) };
    case 'recursive':
      return evalRecursive(input);
    case 'union': {
      const result: JsonPathValue[] = [];
      for (const branch of node.nodes) {
        const step = evalList(input, branch, options);
        if (step.error !== undefined) return { values: input, error: step.error };
        result.push(...step.values);
      }
      return { values: result };
    }
    case 'identifier':
      return { values: input, error: node.name === 'range' || node.name === 'end' ? `${node.name} is not supported` : `unrecognized identifier ${node.name}` };
  }
};

/**
 * client-go's `FindResults`: one list of values per top-level node of the template. With
 * `allowMissingKeys` (as kube's printer columns set it) a missing field selects nothing
 * instead of failing.
 */
export const findResults = (template: JsonPathTemplate, data: unknown, options: { readonly allowMissingKeys?: boolean } = {}): JsonPathResults => {
  const evaluation: Evaluation = { allowMissingKeys: options.allowMissingKeys ?? false };
  const results: JsonPathValue[][] = [];
  for (const node of template.nodes) {
    const step = walk([data], node, evaluation);
    if (step.error !== undefined) return { type: 'error', message: step.error };
    results.push(step.values);
  }
  return { type: 'found', results };
};

// ---- Go's text for a value ---------------------------------------------------------------

/** Go's `fmt.Sprint` of a float64 (`%v`, shortest digits): `1.5`, `1e-05`, `1.2345675e+06`. */
export const goFloatText = (value: number): string => {
  if (Object.is(value, -0)) return '-0';
  if (value === 0) return '0';
  const [mantissa, exponentText] = value.toExponential().split('e') as [string, string];
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    return `${mantissa}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return String(value);
};

/** The JSON text of a value with Go's `encoding/json`: sorted keys, `<>&` and U+2028/9 escaped. */
export const goJson = (value: unknown): string => {
  const sorted = (input: unknown): unknown => {
    if (Array.isArray(input)) return input.map(sorted);
    if (isMap(input)) {
      const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const key of Object.keys(input).sort(compareStrings)) Object.defineProperty(out, key, { value: sorted(input[key]), enumerable: true, writable: true, configurable: true });
      return out;
    }
    return input;
  };
  return JSON.stringify(sorted(value)).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
};

/**
 * The text kube's table convertor prints for a string column (client-go's `PrintResults` of the
 * value re-wrapped by `reflect.ValueOf`): a map or list as Go's JSON, a string as itself, a
 * number as Go prints it, a JSON null as `<no value>`.
 */
export const goText = (value: JsonPathValue): string => {
  if (isNil(value)) return '<no value>';
  if (Array.isArray(value) || isMap(value)) return goJson(value);
  if (value instanceof GoByte) return String(value.value);
  if (value instanceof GoFloat) return goFloatText(value.value);
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : goFloatText(value);
  return String(value);
};
