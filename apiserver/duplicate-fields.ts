/**
 * Duplicate fields of a request body, which the parsers resolve (the last one wins) but
 * kube's strict decoding reports: as a warning under `fieldValidation=Warn` (the default),
 * in the 400 "strict decoding error" under Strict, not at all under Ignore. In JSON bodies
 * by path, as kube prints them (`duplicate field
 * "spec.template.spec.containers[0].imagePullPolicy"`); in YAML bodies as go-yaml does
 * (`line 5: key "name" already set in map`).
 */
import { isScalar, LineCounter, parseDocument, visit } from 'yaml';
import { assertNever } from '../schemas/index.ts';
import { apiErrors } from './errors.ts';
import { mediaTypeOf, parseBody } from './http.ts';
import { assertPlainData } from './plain-data.ts';
import { PROTOBUF_MAGIC } from './protobuf.ts';
import type { ResourceInfo } from './resources.ts';
import { CAUSE_TYPES, type StatusCause } from './status.ts';
import type { FieldValidation } from './validation/admit.ts';
import { checkShape } from './validation/shape.ts';

/** What a scan of a JSON text found: the duplicate field paths, and where every path first occurs. */
export interface JsonFieldScan {
  /** Paths of keys that occur more than once in their object, in document order, each once. */
  readonly duplicates: readonly string[];
  /** The document order of every path (its first occurrence; a duplicate's, its second). */
  readonly order: ReadonlyMap<string, number>;
}

type Frame = { readonly type: 'object'; readonly path: string; readonly keys: Set<string> } | { readonly type: 'array'; readonly path: string; index: number };

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * Scans `text`, which must be valid JSON (it has been parsed already), without recursion
 * (a deeply nested body cannot exhaust the stack).
 */
export const scanJsonFields = (text: string): JsonFieldScan => {
  const duplicates: string[] = [];
  const reported = new Set<string>();
  const order = new Map<string, number>();
  const stack: Frame[] = [];
  let position = 0;
  let i = 0;
  const readString = (): string => {
    const start = i;
    i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  /** Set between an object key and its value: the value's path. */
  let valuePath: string | undefined;
  while (i < text.length) {
    const c = text[i]!;
    if (WHITESPACE.has(c) || c === ':') {
      i++;
      continue;
    }
    const frame = stack.at(-1);
    if (c === ',') {
      i++;
      if (frame?.type === 'array') frame.index++;
      continue;
    }
    if (c === '}' || c === ']') {
      stack.pop();
      i++;
      continue;
    }
    if (frame?.type === 'object' && c === '"' && valuePath === undefined) {
      // A key: the value after it has its path.
      const key = readString();
      const path = frame.path === '' ? key : `${frame.path}.${key}`;
      if (frame.keys.has(key)) {
        if (!reported.has(path)) {
          reported.add(path);
          duplicates.push(path);
          order.set(`duplicate:${path}`, position++);
        }
      } else {
        frame.keys.add(key);
        if (!order.has(path)) order.set(path, position++);
      }
      valuePath = path;
      continue;
    }
    const path = frame?.type === 'array' ? `${frame.path}[${frame.index}]` : (valuePath ?? '');
    valuePath = undefined;
    if (c === '{') {
      stack.push({ type: 'object', path, keys: new Set() });
      i++;
    } else if (c === '[') {
      stack.push({ type: 'array', path, index: 0 });
      i++;
    } else if (c === '"') {
      readString();
    } else {
      while (i < text.length && !WHITESPACE.has(text[i]!) && text[i] !== ',' && text[i] !== '}' && text[i] !== ']') i++;
    }
  }
  return { duplicates, order };
};

/** One strict-decoding finding: a duplicate or an unknown field. */
export interface StrictFinding {
  readonly type: 'duplicate' | 'unknown';
  readonly field: string;
}

/**
 * The findings in document order, as kube lists them; a field that is both unknown and
 * duplicated (or lies under an unknown field) counts as unknown only, as for kube's typed
 * resources.
 */
export const strictFindings = (scan: JsonFieldScan, unknownFields: readonly string[]): StrictFinding[] => {
  const underUnknown = (field: string): boolean => unknownFields.some((u) => field === u || field.startsWith(`${u}.`) || field.startsWith(`${u}[`));
  const findings: { finding: StrictFinding; at: number }[] = [
    ...scan.duplicates.filter((d) => !underUnknown(d)).map((field) => ({ finding: { type: 'duplicate' as const, field }, at: scan.order.get(`duplicate:${field}`) ?? 0 })),
    ...unknownFields.map((field) => ({ finding: { type: 'unknown' as const, field }, at: scan.order.get(field) ?? Number.MAX_SAFE_INTEGER })),
  ];
  return findings.sort((a, b) => a.at - b.at).map((f) => f.finding);
};

/** kube's text of a finding: `duplicate field "x"`, `unknown field "x"`. */
export const findingText = (finding: StrictFinding): string => `${finding.type} field "${finding.field}"`;

/** A finding as a Status cause. */
export const findingCause = (finding: StrictFinding): StatusCause => ({
  reason: finding.type === 'duplicate' ? CAUSE_TYPES.FieldValueDuplicate : CAUSE_TYPES.FieldValueUnknown,
  message: findingText(finding),
  field: finding.field,
});

/** The scan of a request body when it is JSON text (not YAML, not protobuf); undefined otherwise. */
export const scanJsonBody = (raw: Buffer, contentType: string | undefined): JsonFieldScan | undefined => {
  const type = mediaTypeOf(contentType);
  if (raw.subarray(0, 4).equals(PROTOBUF_MAGIC) || (type !== '' && type !== 'application/json')) return undefined;
  return scanJsonFields(raw.toString('utf8'));
};

/** A key that occurs twice in one YAML mapping, at the (1-based) line of its later occurrence. */
export interface YamlDuplicate {
  readonly line: number;
  readonly key: string;
}

/** What a create or update body held besides its value: its duplicate fields, by body format. */
export type BodyScan =
  | { readonly type: 'json'; readonly scan: JsonFieldScan }
  | { readonly type: 'yaml'; readonly duplicates: readonly YamlDuplicate[] }
  | { readonly type: 'none' };

/** go-yaml's text of a duplicate key. */
const yamlDuplicateText = (d: YamlDuplicate): string => `line ${d.line}: key ${JSON.stringify(d.key)} already set in map`;

/**
 * Parses a YAML body as kube decodes one: duplicate keys allowed (the last one wins) and
 * reported by line; the value passes the same plain-data check as every body.
 */
const parseYamlBody = (raw: Buffer): { body: unknown; duplicates: YamlDuplicate[] } => {
  const text = raw.toString('utf8');
  if (text.trim() === '') throw apiErrors.badRequest('the request body is empty');
  const lineCounter = new LineCounter();
  const duplicates: YamlDuplicate[] = [];
  let body: unknown;
  try {
    const document = parseDocument(text, { lineCounter, uniqueKeys: false });
    const [error] = document.errors;
    if (error) throw error;
    visit(document, {
      Map(_, map) {
        const seen = new Set<string>();
        for (const pair of map.items) {
          const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
          if (seen.has(key) && isScalar(pair.key) && pair.key.range) duplicates.push({ line: lineCounter.linePos(pair.key.range[0]).line, key });
          seen.add(key);
        }
      },
    });
    body = document.toJS();
  } catch (cause) {
    // A syntax error, too many aliases, or nesting deeper than the parser's stack.
    throw apiErrors.badRequest(`the request body is not valid YAML: ${(cause as Error).message}`);
  }
  assertPlainData(body);
  return { body, duplicates: duplicates.sort((a, b) => a.line - b.line) };
};

/** Parses a create or update body (JSON, YAML or protobuf) and finds its duplicate fields. */
export const parseObjectBody = (raw: Buffer, contentType: string | undefined): { body: unknown; scan: BodyScan } => {
  const type = mediaTypeOf(contentType);
  if (type === 'application/yaml' && !raw.subarray(0, 4).equals(PROTOBUF_MAGIC)) {
    const { body, duplicates } = parseYamlBody(raw);
    return { body, scan: { type: 'yaml', duplicates } };
  }
  const body = parseBody(raw, contentType);
  const json = scanJsonBody(raw, contentType);
  return { body, scan: json ? { type: 'json', scan: json } : { type: 'none' } };
};

const UNKNOWN_WARNING = /^unknown field "(.*)"$/;

const hasDuplicates = (scan: BodyScan): boolean => {
  switch (scan.type) {
    case 'json':
      return scan.scan.duplicates.length > 0;
    case 'yaml':
      return scan.duplicates.length > 0;
    case 'none':
      return false;
    default:
      return assertNever(scan, 'body scan');
  }
};

/**
 * The warnings of a create or update under `fieldValidation=Warn`: the admission's (unknown
 * fields) with the duplicate fields, as kube orders them (JSON: all in document order; YAML:
 * the duplicate keys by line, then the unknown fields sorted).
 */
export const withDuplicateWarnings = (scan: BodyScan, warnings: readonly string[], fieldValidation: FieldValidation): readonly string[] => {
  if (!hasDuplicates(scan) || fieldValidation !== 'Warn') return warnings;
  const unknown = warnings.flatMap((w) => UNKNOWN_WARNING.exec(w)?.[1] ?? []);
  const others = warnings.filter((w) => !UNKNOWN_WARNING.test(w));
  switch (scan.type) {
    case 'json':
      return [...strictFindings(scan.scan, unknown).map(findingText), ...others];
    case 'yaml':
      return [...scan.duplicates.map(yamlDuplicateText), ...[...unknown].sort().map((field) => findingText({ type: 'unknown', field })), ...others];
    case 'none':
      return warnings;
    default:
      return assertNever(scan, 'body scan');
  }
};

/**
 * Under `fieldValidation=Strict`, a body with duplicate fields is kube's 400 strict decoding
 * error, listing its duplicate and unknown fields (`Pod in version "v1" cannot be handled
 * as a Pod: strict decoding error: duplicate field "metadata.name", unknown field ...`; for
 * YAML, go-yaml's `yaml: unmarshal errors:` block first). Status is left out of the unknown
 * fields, as admission drops it from main-resource writes.
 */
export const throwIfStrictDuplicates = (resource: ResourceInfo, scan: BodyScan, body: unknown, fieldValidation: FieldValidation): void => {
  if (!hasDuplicates(scan) || fieldValidation !== 'Strict') return;
  const object = typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : {};
  delete object['status'];
  const unknown = checkShape(resource.kind, object).unknownFields;
  const prefix = `${resource.kind} in version "${resource.version}" cannot be handled as a ${resource.kind}: strict decoding error: `;
  switch (scan.type) {
    case 'json': {
      const findings = strictFindings(scan.scan, unknown);
      throw apiErrors.badRequest(`${prefix}${findings.map(findingText).join(', ')}`, findings.map(findingCause));
    }
    case 'yaml': {
      const unknownFindings = [...unknown].sort().map((field) => ({ type: 'unknown' as const, field }));
      const text = [`yaml: unmarshal errors:\n  ${scan.duplicates.map(yamlDuplicateText).join('\n  ')}`, ...unknownFindings.map(findingText)].join(', ');
      throw apiErrors.badRequest(`${prefix}${text}`, [
        ...scan.duplicates.map((d) => ({ reason: CAUSE_TYPES.FieldValueDuplicate, message: yamlDuplicateText(d) })),
        ...unknownFindings.map(findingCause),
      ]);
    }
    case 'none':
      return;
    default:
      return assertNever(scan, 'body scan');
  }
};

/**
 * The findings of a merge or strategic-merge patch as kube lists them for patches: the
 * duplicate fields of the patch body first (all of them, unknown or not), then the unknown
 * fields of the patched object, sorted.
 */
const patchFindings = (scan: JsonFieldScan, unknownFields: readonly string[]): StrictFinding[] => [
  ...scan.duplicates.map((field) => ({ type: 'duplicate' as const, field })),
  ...[...unknownFields].sort().map((field) => ({ type: 'unknown' as const, field })),
];

/** Under Strict, a patch body with duplicate fields is kube's 400 `strict decoding error: duplicate field ..., unknown field ...`. */
export const throwIfStrictPatchDuplicates = (resource: ResourceInfo, scan: JsonFieldScan | undefined, patched: unknown, fieldValidation: FieldValidation): void => {
  if (!scan || scan.duplicates.length === 0 || fieldValidation !== 'Strict') return;
  const object = typeof patched === 'object' && patched !== null && !Array.isArray(patched) ? { ...(patched as Record<string, unknown>) } : {};
  delete object['status'];
  const findings = patchFindings(scan, checkShape(resource.kind, object).unknownFields);
  throw apiErrors.badRequest(`strict decoding error: ${findings.map(findingText).join(', ')}`, findings.map(findingCause));
};

/** Under Warn, a patch's warnings: its duplicate fields first, then the admission's (unknown fields, sorted as kube sorts them). */
export const withPatchDuplicateWarnings = (scan: JsonFieldScan | undefined, warnings: readonly string[], fieldValidation: FieldValidation): readonly string[] => {
  if (!scan || scan.duplicates.length === 0 || fieldValidation !== 'Warn') return warnings;
  const unknown = warnings.flatMap((w) => UNKNOWN_WARNING.exec(w)?.[1] ?? []);
  const others = warnings.filter((w) => !UNKNOWN_WARNING.test(w));
  return [...patchFindings(scan, unknown).map(findingText), ...others];
};
