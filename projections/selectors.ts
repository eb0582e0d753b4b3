/**
 * Label and field selectors with Kubernetes semantics, shared by the apiserver (list/watch
 * `labelSelector` and `fieldSelector` parameters), the projections (indexes) and the
 * reconcilers (ReplicaSet/Service selectors, scheduler affinity).
 *
 * A selector is a list of requirements that must all hold (comma = AND). Parsing never
 * throws: a malformed selector is an `invalid` result whose error names the bad token.
 */

import { assertNever, type LabelSelector } from '../schemas/index.ts';
import { ProjectionError } from './errors.ts';

/**
 * One label requirement. `notEquals` and `notIn` also match objects without the key;
 * `greaterThan`/`lessThan` (node affinity Gt/Lt) need the key with an integer value.
 */
export type LabelRequirement =
  | { readonly type: 'equals'; readonly key: string; readonly value: string }
  | { readonly type: 'notEquals'; readonly key: string; readonly value: string }
  | { readonly type: 'in'; readonly key: string; readonly values: readonly string[] }
  | { readonly type: 'notIn'; readonly key: string; readonly values: readonly string[] }
  | { readonly type: 'exists'; readonly key: string }
  | { readonly type: 'doesNotExist'; readonly key: string }
  | { readonly type: 'greaterThan'; readonly key: string; readonly value: number }
  | { readonly type: 'lessThan'; readonly key: string; readonly value: number };

/** A selector that cannot be parsed (never retriable); `token` is the offending token, key, value or operator. */
export class SelectorParseError extends ProjectionError {
  override readonly name = 'SelectorParseError';
  constructor(
    message: string,
    /** The offending text ("" for the end of the input). */
    readonly token: string,
    /** Offset of `token` in a string selector; undefined for selector objects. */
    readonly position?: number,
  ) {
    super(message, false, { token, position });
  }
}

/** The outcome of parsing a label selector: requirements sorted by key, or the error. */
export type LabelSelectorParseResult =
  | { readonly type: 'ok'; readonly requirements: readonly LabelRequirement[] }
  | { readonly type: 'invalid'; readonly error: SelectorParseError };

// ---------------------------------------------------------------------------------------
// Label selector strings

type TokenKind = 'identifier' | 'in' | 'notin' | '=' | '==' | '!=' | '!' | '(' | ')' | ',' | '>' | '<' | 'end';

interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly position: number;
}

const SINGLE_CHAR_TOKENS: Readonly<Record<string, TokenKind>> = {
  '!': '!',
  '=': '=',
  '(': '(',
  ')': ')',
  ',': ',',
  '>': '>',
  '<': '<',
};

const WHITESPACE = /\s/;

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let position = 0;
  while (position < input.length) {
    const char = input[position] as string;
    if (WHITESPACE.test(char)) {
      position += 1;
    } else if (char === '!' && input[position + 1] === '=') {
      tokens.push({ kind: '!=', text: '!=', position });
      position += 2;
    } else if (char === '=' && input[position + 1] === '=') {
      tokens.push({ kind: '==', text: '==', position });
      position += 2;
    } else if (SINGLE_CHAR_TOKENS[char] !== undefined) {
      tokens.push({ kind: SINGLE_CHAR_TOKENS[char], text: char, position });
      position += 1;
    } else {
      const start = position;
      while (position < input.length) {
        const next = input[position] as string;
        if (WHITESPACE.test(next) || SINGLE_CHAR_TOKENS[next] !== undefined) break;
        position += 1;
      }
      const text = input.slice(start, position);
      const kind = text === 'in' ? 'in' : text === 'notin' ? 'notin' : 'identifier';
      tokens.push({ kind, text, position: start });
    }
  }
  tokens.push({ kind: 'end', text: '', position: input.length });
  return tokens;
}

/** Signals a parse failure inside the recursive-descent parser; never escapes this module. */
class ParseFailure {
  constructor(readonly error: SelectorParseError) {}
}

/**
 * Parses the Kubernetes label selector syntax: `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
 * `a notin (x)`, `a` (exists), `!a` (does not exist), `a>1`, `a<1`, joined by commas.
 * The empty string selects everything (no requirements). Keys and values are validated
 * like Kubernetes labels; `in`/`notin` values are de-duplicated and sorted.
 */
export function parseLabelSelector(input: string): LabelSelectorParseResult {
  const tokens = tokenize(input);
  let index = 0;
  const peek = (): Token => tokens[index] as Token;
  const take = (): Token => tokens[index++] as Token;
  const fail = (token: Token, expected: string): never => {
    const found = token.kind === 'end' ? 'end of input' : `'${token.text}'`;
    throw new ParseFailure(
      new SelectorParseError(
        `unable to parse label selector "${input}": found ${found} at position ${token.position}, expected ${expected}`,
        token.text,
        token.position,
      ),
    );
  };
  const check = (token: Token, problem: string | undefined): void => {
    if (problem !== undefined) {
      throw new ParseFailure(
        new SelectorParseError(`invalid label selector "${input}": ${problem}`, token.text, token.position),
      );
    }
  };
  const takeKey = (): string => {
    const token = take();
    if (token.kind !== 'identifier') fail(token, 'a label key');
    check(token, labelKeyProblem(token.text));
    return token.text;
  };
  const isValueToken = (token: Token): boolean =>
    token.kind === 'identifier' || token.kind === 'in' || token.kind === 'notin';
  const takeExactValue = (): string => {
    const next = peek();
    if (next.kind === ',' || next.kind === 'end') return '';
    const token = take();
    if (!isValueToken(token)) fail(token, 'a label value');
    check(token, labelValueProblem(token.text));
    return token.text;
  };
  const takeInteger = (): number => {
    const token = take();
    if (!isValueToken(token)) fail(token, 'an integer');
    check(token, integerProblem(token.text));
    return Number(token.text);
  };
  const takeValueList = (): string[] => {
    const open = take();
    if (open.kind !== '(') fail(open, "'('");
    const values: string[] = [];
    let expectingValue = true;
    for (;;) {
      const token = take();
      if (isValueToken(token)) {
        if (!expectingValue) fail(token, "',' or ')'");
        check(token, labelValueProblem(token.text));
        values.push(token.text);
        expectingValue = false;
      } else if (token.kind === ',') {
        if (expectingValue) values.push('');
        expectingValue = true;
      } else if (token.kind === ')') {
        if (expectingValue && values.length > 0) values.push('');
        check(token, values.length === 0 ? "values for 'in' and 'notin' cannot be empty" : undefined);
        return values;
      } else {
        fail(token, "a label value, ',' or ')'");
      }
    }
  };
  const takeRequirement = (): LabelRequirement => {
    if (peek().kind === '!') {
      take();
      return { type: 'doesNotExist', key: takeKey() };
    }
    const key = takeKey();
    const operator = peek();
    switch (operator.kind) {
      case ',':
      case 'end':
        return { type: 'exists', key };
      case '=':
      case '==':
        take();
        return { type: 'equals', key, value: takeExactValue() };
      case '!=':
        take();
        return { type: 'notEquals', key, value: takeExactValue() };
      case 'in':
        take();
        return { type: 'in', key, values: sortedUnique(takeValueList()) };
      case 'notin':
        take();
        return { type: 'notIn', key, values: sortedUnique(takeValueList()) };
      case '>':
        take();
        return { type: 'greaterThan', key, value: takeInteger() };
      case '<':
        take();
        return { type: 'lessThan', key, value: takeInteger() };
      case 'identifier':
      case '!':
      case '(':
      case ')':
        return fail(operator, "'=', '==', '!=', 'in', 'notin', '>', '<', ',' or end of input");
      default:
        return assertNever(operator.kind);
    }
  };

  try {
    const requirements: LabelRequirement[] = [];
    if (peek().kind === 'end') return { type: 'ok', requirements };
    for (;;) {
      requirements.push(takeRequirement());
      const separator = take();
      if (separator.kind === 'end') break;
      if (separator.kind !== ',') fail(separator, "',' or end of input");
    }
    return { type: 'ok', requirements: sortByKey(requirements) };
  } catch (failure) {
    if (failure instanceof ParseFailure) return { type: 'invalid', error: failure.error };
    throw failure;
  }
}

// ---------------------------------------------------------------------------------------
// LabelSelector objects

const SELECTOR_OPERATOR = {
  In: 'In',
  NotIn: 'NotIn',
  Exists: 'Exists',
  DoesNotExist: 'DoesNotExist',
} as const;

/**
 * Converts a `LabelSelector` object (matchLabels as `key=value`, matchExpressions with
 * In/NotIn/Exists/DoesNotExist) to requirements, validated like
 * `metav1.LabelSelectorAsSelector`. An empty selector `{}` selects everything; a missing
 * selector (null) selects nothing in Kubernetes, which is the caller's case to handle.
 */
export function labelSelectorToRequirements(selector: LabelSelector): LabelSelectorParseResult {
  const requirements: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined) return invalidResult(`matchLabels: ${keyProblem}`, key);
    const valueProblem = labelValueProblem(value);
    if (valueProblem !== undefined) return invalidResult(`matchLabels["${key}"]: ${valueProblem}`, value);
    requirements.push({ type: 'equals', key, value });
  }
  for (const [index, expression] of (selector.matchExpressions ?? []).entries()) {
    const where = `matchExpressions[${index}]`;
    const keyProblem = labelKeyProblem(expression.key);
    if (keyProblem !== undefined) return invalidResult(`${where}.key: ${keyProblem}`, expression.key);
    const values = expression.values ?? [];
    const badValue = values.find((value) => labelValueProblem(value) !== undefined);
    if (badValue !== undefined) return invalidResult(`${where}.values: ${labelValueProblem(badValue)}`, badValue);
    switch (expression.operator) {
      case SELECTOR_OPERATOR.In:
      case SELECTOR_OPERATOR.NotIn:
        if (values.length === 0) {
          return invalidResult(`${where}.values: must be non-empty for '${expression.operator}'`, expression.operator);
        }
        requirements.push({
          type: expression.operator === SELECTOR_OPERATOR.In ? 'in' : 'notIn',
          key: expression.key,
          values: sortedUnique(values),
        });
        break;
      case SELECTOR_OPERATOR.Exists:
      case SELECTOR_OPERATOR.DoesNotExist:
        if (values.length > 0) {
          return invalidResult(`${where}.values: must be empty for '${expression.operator}'`, expression.operator);
        }
        requirements.push({
          type: expression.operator === SELECTOR_OPERATOR.Exists ? 'exists' : 'doesNotExist',
          key: expression.key,
        });
        break;
      default:
        return invalidResult(
          `${where}.operator: "${expression.operator}" is not a valid label selector operator`,
          expression.operator,
        );
    }
  }
  return { type: 'ok', requirements: sortByKey(requirements) };
}

function invalidResult(problem: string, token: string): LabelSelectorParseResult {
  return { type: 'invalid', error: new SelectorParseError(`invalid label selector: ${problem}`, token) };
}

// ---------------------------------------------------------------------------------------
// Matching and printing

/** True when `labels` satisfy every requirement (an empty list matches everything). */
export function matchesLabels(
  requirements: readonly LabelRequirement[],
  labels: Readonly<Record<string, string>> | null | undefined,
): boolean {
  return requirements.every((requirement) => requirementMatches(requirement, labels ?? {}));
}

function requirementMatches(requirement: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const value = Object.hasOwn(labels, requirement.key) ? labels[requirement.key] : undefined;
  switch (requirement.type) {
    case 'equals':
      return value === requirement.value;
    case 'notEquals':
      return value !== requirement.value;
    case 'in':
      return value !== undefined && requirement.values.includes(value);
    case 'notIn':
      return value === undefined || !requirement.values.includes(value);
    case 'exists':
      return value !== undefined;
    case 'doesNotExist':
      return value === undefined;
    case 'greaterThan':
      return value !== undefined && integerProblem(value) === undefined && Number(value) > requirement.value;
    case 'lessThan':
      return value !== undefined && integerProblem(value) === undefined && Number(value) < requirement.value;
    default:
      return assertNever(requirement);
  }
}

/**
 * Prints requirements in the Kubernetes string syntax (`a=b,c in (x,y),!d`), which
 * {@link parseLabelSelector} reads back to the same requirements. No requirements → "".
 */
export function selectorToString(requirements: readonly LabelRequirement[]): string {
  return requirements.map(requirementToString).join(',');
}

function requirementToString(requirement: LabelRequirement): string {
  switch (requirement.type) {
    case 'equals':
      return `${requirement.key}=${requirement.value}`;
    case 'notEquals':
      return `${requirement.key}!=${requirement.value}`;
    case 'in':
      return `${requirement.key} in (${requirement.values.join(',')})`;
    case 'notIn':
      return `${requirement.key} notin (${requirement.values.join(',')})`;
    case 'exists':
      return requirement.key;
    case 'doesNotExist':
      return `!${requirement.key}`;
    case 'greaterThan':
      return `${requirement.key}>${requirement.value}`;
    case 'lessThan':
      return `${requirement.key}<${requirement.value}`;
    default:
      return assertNever(requirement);
  }
}

// ---------------------------------------------------------------------------------------
// Field selectors

/** One field requirement; a field the object lacks compares as "". */
export type FieldRequirement =
  | { readonly type: 'equals'; readonly field: string; readonly value: string }
  | { readonly type: 'notEquals'; readonly field: string; readonly value: string };

/** The outcome of {@link parseFieldSelector}. */
export type FieldSelectorParseResult =
  | { readonly type: 'ok'; readonly requirements: readonly FieldRequirement[] }
  | { readonly type: 'invalid'; readonly error: SelectorParseError };

const FIELD_OPERATORS = [
  ['!=', 'notEquals'],
  ['==', 'equals'],
  ['=', 'equals'],
] as const;

/**
 * Parses a field selector (`metadata.name=x,spec.nodeName!=y`; operators `=`, `==`, `!=`;
 * `\,` `\=` `\\` escape in values) like `fields.ParseSelector`, rejecting any field not in
 * `supportedFields` (the kind's whitelist, e.g. `['metadata.name', 'metadata.namespace',
 * 'spec.nodeName', 'status.phase']` for Pods). The empty string selects everything.
 */
export function parseFieldSelector(input: string, supportedFields: readonly string[]): FieldSelectorParseResult {
  const requirements: FieldRequirement[] = [];
  for (const { term, position } of splitUnescaped(input)) {
    if (term === '') continue;
    const split = splitFieldTerm(term);
    if (split === undefined) {
      return invalidField(`invalid field selector "${input}": "${term}" has no operator (=, == or !=)`, term, position);
    }
    const { field, type, rawValue } = split;
    if (!supportedFields.includes(field)) {
      return invalidField(`field label not supported: "${field}"`, field, position);
    }
    const value = unescapeFieldValue(rawValue);
    if (value.type === 'invalid') {
      return invalidField(`invalid field selector "${input}": ${value.problem}`, rawValue, position);
    }
    requirements.push({ type, field, value: value.value });
  }
  return { type: 'ok', requirements };
}

/** True when every requirement holds for the object whose fields `getField` reads. */
export function matchesFields(
  requirements: readonly FieldRequirement[],
  getField: (field: string) => string | null | undefined,
): boolean {
  return requirements.every((requirement) => {
    const actual = getField(requirement.field) ?? '';
    switch (requirement.type) {
      case 'equals':
        return actual === requirement.value;
      case 'notEquals':
        return actual !== requirement.value;
      default:
        return assertNever(requirement);
    }
  });
}

function invalidField(message: string, token: string, position: number): FieldSelectorParseResult {
  return { type: 'invalid', error: new SelectorParseError(message, token, position) };
}

/** Splits on commas that are not escaped with a backslash, keeping each term's offset. */
function splitUnescaped(input: string): { term: string; position: number }[] {
  const terms: { term: string; position: number }[] = [];
  let start = 0;
  for (let index = 0; index < input.length; index += 1) {
    if (input[index] === '\\') {
      index += 1;
    } else if (input[index] === ',') {
      terms.push({ term: input.slice(start, index), position: start });
      start = index + 1;
    }
  }
  terms.push({ term: input.slice(start), position: start });
  return terms;
}

function splitFieldTerm(
  term: string,
): { field: string; type: FieldRequirement['type']; rawValue: string } | undefined {
  for (let index = 0; index < term.length; index += 1) {
    if (term[index] === '\\') {
      index += 1;
      continue;
    }
    for (const [operator, type] of FIELD_OPERATORS) {
      if (term.startsWith(operator, index)) {
        return { field: term.slice(0, index), type, rawValue: term.slice(index + operator.length) };
      }
    }
  }
  return undefined;
}

function unescapeFieldValue(
  raw: string,
): { type: 'ok'; value: string } | { type: 'invalid'; problem: string } {
  let value = '';
  for (let index = 0; index < raw.length; index += 1) {
    const char = raw[index] as string;
    if (char === '\\') {
      const escaped = raw[index + 1];
      if (escaped !== '\\' && escaped !== ',' && escaped !== '=') {
        return { type: 'invalid', problem: `invalid escape sequence "\\${escaped ?? ''}" in "${raw}"` };
      }
      value += escaped;
      index += 1;
    } else if (char === '=' || char === ',') {
      return { type: 'invalid', problem: `unescaped "${char}" in value "${raw}"` };
    } else {
      value += char;
    }
  }
  return { type: 'ok', value };
}

// ---------------------------------------------------------------------------------------
// Validation (k8s.io/apimachinery/pkg/util/validation)

const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const INTEGER = /^[+-]?\d+$/;

/** Why `key` is not a valid label key (`[prefix/]name`), or undefined when it is. */
function labelKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  const name = parts.length === 2 ? (parts[1] as string) : key;
  if (parts.length > 2) return `invalid label key "${key}": at most one '/' is allowed`;
  if (parts.length === 2) {
    const prefix = parts[0] as string;
    if (prefix.length === 0 || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) {
      return `invalid label key "${key}": the prefix must be a lowercase DNS subdomain of at most 253 characters`;
    }
  }
  if (name.length === 0 || name.length > 63 || !LABEL_NAME.test(name)) {
    return `invalid label key "${key}": the name must be 1-63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`;
  }
  return undefined;
}

/** Why `value` is not a valid label value, or undefined when it is ("" is valid). */
function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63 || !LABEL_NAME.test(value)) {
    return `invalid label value "${value}": must be at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`;
  }
  return undefined;
}

function integerProblem(text: string): string | undefined {
  return INTEGER.test(text) && Number.isSafeInteger(Number(text)) ? undefined : `"${text}" is not an integer`;
}

function sortedUnique(values: readonly string[]): string[] {
  return [...new Set(values)].sort();
}

function sortByKey(requirements: LabelRequirement[]): LabelRequirement[] {
  return requirements.sort((left, right) => (left.key < right.key ? -1 : left.key > right.key ? 1 : 0));
}
