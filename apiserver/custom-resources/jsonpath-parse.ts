/**
 * The parser of Kubernetes' JSONPath templates (client-go `util/jsonpath/parser.go`, step by
 * step, quirks included), and the node and value types the evaluator (`jsonpath.ts`) walks.
 */
/** One `[start:end:step]` bound, as client-go's `ParamsEntry`. */
export interface SliceParam {
  readonly value: number;
  readonly known: boolean;
  /** The end bound of a single index (`[n]` means `[n:n+1]`). */
  readonly derived: boolean;
}

export interface ListNode {
  readonly type: 'list';
  readonly nodes: Node[];
}

/** A node of a parsed template (client-go's `node.go`). */
export type Node =
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

