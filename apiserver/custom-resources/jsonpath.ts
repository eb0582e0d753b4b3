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

/** One `[start:end:step]` bound, as client-go's `ParamsEntry`. */
interface SliceParam {
  readonly value: number;
  readonly known: boolean;
  /** The end bound of a single index (`[n]` means `[n:n+1]`). */
  readonly derived: boolean;
}

interface ListNode {
  readonly type: 'list';
  readonly nodes: Node[];
}

/** A node of a parsed template (client-go's `node.go`). */
type Node =
  | ListNode
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'field'; readonly name: string }
  | { readonly type: 'array'; readonly params: readonly [SliceParam, SliceParam, SliceParam] }
  | { readonly type: 'filter'; readonly left: ListNode; readonly right: ListNode; readonly operator: string }
  | { readonly type: 'int'; readonly value: number }
  | { readonly type: 'float'; readonly value: number }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'wildcard' }
  | { readonly type: 'recursive' }
  | { readonly type: 'union'; readonly nodes: readonly ListNode[] }
  | { readonly type: 'identifier'; readonly name: string };

/** A parsed template: its top-level text and `{…}` action nodes. */
export interface JsonPathTemplate {
  readonly nodes: readonly Node[];
}

export type JsonPathParse = { readonly type: 'parsed'; readonly template: JsonPathTemplate } | { readonly type: 'invalid'; readonly message: string };

/** A byte of a string, as Go's reflection yields when `.*` walks a string. */
export class GoByte {
  constructor(readonly value: number) {}
}

/** A float literal of the template (`1.5`), kept apart from integers as Go keeps `float64` from `int`. */
export class GoFloat {
  constructor(readonly value: number) {}
}

/** A value a template selects: JSON data, or a literal or byte the template produced. */
export type JsonPathValue = unknown;

export type JsonPathResults = { readonly type: 'found'; readonly results: readonly (readonly JsonPathValue[])[] } | { readonly type: 'error'; readonly message: string };

class ParseError extends Error {}

const EOF = -1;
const list = (): ListNode => ({ type: 'list', nodes: [] });
const isSpace = (r: number): boolean => r === 0x20 || r === 0x09;
const isEndOfLine = (r: number): boolean => r === 0x0d || r === 0x0a;
const isDigit = (r: number): boolean => r >= 0 && /\p{Nd}/u.test(String.fromCodePoint(r));
const isAlphaNumeric = (r: number): boolean => r === 0x5f || (r >= 0 && /[\p{L}\p{Nd}]/u.test(String.fromCodePoint(r)));
const TERMINATORS = new Set([EOF, ...'.,[]$@{}'].map((c) => (typeof c === 'number' ? c : c.codePointAt(0)!)));
const isTerminator = (r: number): boolean => isSpace(r) || isEndOfLine(r) || TERMINATORS.has(r);

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** Go's `strconv.Atoi` on a 64-bit machine: an optional sign and ASCII digits, in int64 range. */
const atoi = (text: string): number | undefined => {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : Number(value);
};

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' };

/** client-go's `UnquoteExtend`: Go's `strconv.Unquote` for `"…"` and `'…'` strings. */
const unquote = (quoted: string): string => {
  const quote = quoted[0]!;
  if (quoted.length < 2 || quoted[quoted.length - 1] !== quote) throw new ParseError('invalid syntax');
  const body = quoted.slice(1, -1);
  if (!body.includes('\\') && !body.includes(quote)) return body;
  let out = '';
  for (let i = 0; i < body.length; ) {
    const c = body[i]!;
    if (c === quote) throw new ParseError('invalid syntax');
    if (c !== '\\') {
      out += c;
      i++;
      continue;
    }
    const e = body[i + 1];
    if (e === undefined) throw new ParseError('invalid syntax');
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      i += 2;
    } else if (e === '"' || e === "'") {
      if (e !== quote) throw new ParseError('invalid syntax');
      out += e;
      i += 2;
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const width = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = body.slice(i + 2, i + 2 + width);
      const code = hex.length === width && /^[0-9a-fA-F]+$/.test(hex) ? Number.parseInt(hex, 16) : Number.NaN;
      if (Number.isNaN(code) || (e !== 'x' && (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)))) throw new ParseError('invalid syntax');
      out += String.fromCodePoint(code);
      i += 2 + width;
    } else if (/^[0-7]{3}$/.test(body.slice(i + 1, i + 4))) {
      const code = Number.parseInt(body.slice(i + 1, i + 4), 8);
      if (code > 255) throw new ParseError('invalid syntax');
      out += String.fromCharCode(code);
      i += 4;
    } else {
      throw new ParseError('invalid syntax');
    }
  }
  return out;
};

const FILTER = /^([^!<>=]+)([!<>=~]+)([^\n]+?)$/;
const DICT_KEY = /^'([^']*)'$/;
const SLICE = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/;

/** Parses `text` as client-go's `Parser.Parse` does; throws {@link ParseError}. */
const parseNodes = (input: string): ListNode => {
  const root = list();
  let pos = 0;
  let start = 0;
  let width = 0;
  const next = (): number => {
    if (pos >= input.length) {
      width = 0;
      return EOF;
    }
    const r = input.codePointAt(pos)!;
    width = r > 0xffff ? 2 : 1;
    pos += width;
    return r;
  };
  const backup = (): void => {
    pos -= width;
  };
  const peek = (): number => {
    const r = next();
    backup();
    return r;
  };
  const consume = (): string => {
    const value = input.slice(start, pos);
    start = pos;
    return value;
  };
  /** Go's `parseAction`: the nodes of `{text}`. */
  const parseAction = (text: string): ListNode => parseNodes(`{${text}}`).nodes[0] as ListNode;

  const parseField = (cur: ListNode): void => {
    consume();
    for (;;) {
      const r = next();
      if (r === 0x5c) next();
      else if (isTerminator(r)) {
        backup();
        break;
      }
    }
    const value = consume();
    cur.nodes.push(value === '*' ? { type: 'wildcard' } : { type: 'field', name: value.replaceAll('\\', '') });
  };

  const parseArray = (cur: ListNode): void => {
    for (;;) {
      const r = next();
      if (r === EOF || r === 0x0a) throw new ParseError('unterminated array');
      if (r === 0x5d) break;
    }
    let text = consume().slice(1, -1);
    if (text === '*') text = ':';
    const parts = text.split(',');
    if (parts.length > 1) {
      cur.nodes.push({ type: 'union', nodes: parts.map((part) => parseAction(`[${part.replace(/^ +| +$/g, '')}]`)) });
      return;
    }
    const key = DICT_KEY.exec(text);
    if (key) {
      cur.nodes.push(...parseAction(`.${key[1]}`).nodes);
      return;
    }
    const slice = SLICE.exec(text);
    if (!slice) throw new ParseError(`invalid array index ${text}`);
    const params: SliceParam[] = [];
    for (let i = 0; i < 3; i++) {
      const group = slice[i + 1];
      if (group !== undefined && group !== '') {
        const digits = i > 0 ? group.slice(1) : group;
        if (i > 0 && digits === '') {
          params.push({ value: 0, known: false, derived: false });
        } else {
          const value = atoi(digits);
          if (value === undefined) throw new ParseError(`array index ${digits} is not a number`);
          params.push({ value, known: true, derived: false });
        }
      } else if (i === 1) {
        params.push({ value: params[0]!.value + 1, known: true, derived: true });
      } else {
        params.push({ value: 0, known: false, derived: false });
      }
    }
    cur.nodes.push({ type: 'array', params: [params[0]!, params[1]!, params[2]!] });
  };

  const parseFilter = (cur: ListNode): void => {
    pos += '[?('.length;
    consume();
    let begin = false;
    let end = false;
    let pair = 0;
    for (;;) {
      const r = next();
      if (r === EOF || r === 0x0a) throw new ParseError('unterminated filter');
      if (r === 0x22 || r === 0x27) {
        if (!begin) {
          begin = true;
          pair = r;
          continue;
        }
        if (input[pos - 2] !== '\\' && r === pair) end = true;
      } else if (r === 0x29 && begin === end) {
        break;
      }
    }
    if (next() !== 0x5d) throw new ParseError('unclosed array expect ]');
    const text = consume().slice(0, -2);
    const parts = FILTER.exec(text);
    cur.nodes.push(
      parts
        ? { type: 'filter', left: parseAction(parts[1]!), right: parseAction(parts[3]!), operator: parts[2]! }
        : { type: 'filter', left: parseAction(text), right: list(), operator: 'exists' },
    );
  };

  const parseQuote = (cur: ListNode, quote: number): void => {
    for (;;) {
      const r = next();
      if (r === EOF || r === 0x0a) throw new ParseError('unterminated quoted string');
      if (r === quote && input[pos - 2] !== '\\') break;
    }
    const value = consume();
    try {
      cur.nodes.push({ type: 'text', text: unquote(value) });
    } catch (error) {
      throw new ParseError(`unquote string ${value} error ${(error as Error).message}`);
    }
  };

  const parseNumber = (cur: ListNode): void => {
    const sign = peek();
    if (sign === 0x2b || sign === 0x2d) next();
    for (;;) {
      const r = next();
      if (r !== 0x2e && !isDigit(r)) {
        backup();
        break;
      }
    }
    const value = consume();
    const int = atoi(value);
    if (int !== undefined) {
      cur.nodes.push({ type: 'int', value: int });
      return;
    }
    const float = /^[+-]?(\d+\.?\d*|\.\d+)$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isFinite(float)) throw new ParseError(`cannot parse number ${value}`);
    cur.nodes.push({ type: 'float', value: float });
  };

  const parseIdentifier = (cur: ListNode): void => {
    while (!isTerminator(next()));
    backup();
    const value = consume();
    cur.nodes.push(value === 'true' || value === 'false' ? { type: 'bool', value: value === 'true' } : { type: 'identifier', name: value });
  };

  /** `parseInsideAction` until the action's `}`; returns at the end of the action. */
  const parseInsideAction = (cur: ListNode): void => {
    for (;;) {
      if (input.startsWith('}', pos)) {
        pos += 1;
        consume();
        return;
      }
      if (input.startsWith('[?(', pos)) {
        parseFilter(cur);
        continue;
      }
      if (input.startsWith('..', pos)) {
        if (cur.nodes[cur.nodes.length - 1]?.type === 'recursive') throw new ParseError('invalid multiple recursive descent');
        pos += 2;
        consume();
        cur.nodes.push({ type: 'recursive' });
        if (isAlphaNumeric(peek())) parseField(cur);
        continue;
      }
      const r = next();
      if (r === EOF || isEndOfLine(r)) throw new ParseError('unclosed action');
      if (r === 0x20 || r === 0x40 || r === 0x24) consume();
      else if (r === 0x5b) parseArray(cur);
      else if (r === 0x22 || r === 0x27) parseQuote(cur, r);
      else if (r === 0x2e) parseField(cur);
      else if (r === 0x2b || r === 0x2d || isDigit(r)) {
        backup();
        parseNumber(cur);
      } else if (isAlphaNumeric(r)) {
        backup();
        parseIdentifier(cur);
      } else {
        throw new ParseError(`unrecognized character in action: U+${r.toString(16).toUpperCase().padStart(4, '0')} '${String.fromCodePoint(r)}'`);
      }
    }
  };

  for (;;) {
    if (input.startsWith('{', pos)) {
      if (pos > start) root.nodes.push({ type: 'text', text: consume() });
      pos += 1;
      consume();
      const action = list();
      root.nodes.push(action);
      parseInsideAction(action);
      continue;
    }
    if (next() === EOF) break;
  }
  if (pos > start) root.nodes.push({ type: 'text', text: consume() });
  return root;
};

/** Parses a template as client-go's `JSONPath.Parse` (`{.spec.replicas}`, text between actions allowed). */
export const parseJsonPathTemplate = (text: string): JsonPathParse => {
  try {
    return { type: 'parsed', template: { nodes: parseNodes(text).nodes } };
  } catch (error) {
    if (error instanceof ParseError) return { type: 'invalid', message: error.message };
    throw error;
  }
};

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
