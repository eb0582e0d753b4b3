/**
 * Duplicate fields of a JSON request body, which `JSON.parse` silently resolves (the last
 * one wins) but kube's strict decoding reports: `duplicate field "metadata.name"` as a
 * warning under `fieldValidation=Warn` (the default), in the 400 "strict decoding error"
 * under Strict, nothing under Ignore. Paths read as kube prints them
 * (`spec.template.spec.containers[0].imagePullPolicy`).
 */
import { apiErrors } from './errors.ts';
import { mediaTypeOf } from './http.ts';
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

const UNKNOWN_WARNING = /^unknown field "(.*)"$/;

/**
 * The warnings of a write under `fieldValidation=Warn`: the admission's (unknown fields)
 * with the duplicate fields among them, in document order.
 */
export const withDuplicateWarnings = (scan: JsonFieldScan | undefined, warnings: readonly string[], fieldValidation: FieldValidation): readonly string[] => {
  if (!scan || scan.duplicates.length === 0 || fieldValidation !== 'Warn') return warnings;
  const unknown = warnings.flatMap((w) => UNKNOWN_WARNING.exec(w)?.[1] ?? []);
  const others = warnings.filter((w) => !UNKNOWN_WARNING.test(w));
  return [...strictFindings(scan, unknown).map(findingText), ...others];
};

/**
 * Under `fieldValidation=Strict`, a body with duplicate fields is kube's 400 strict decoding
 * error, listing its duplicate and unknown fields (`Pod in version "v1" cannot be handled
 * as a Pod: strict decoding error: duplicate field "metadata.name", unknown field ...`).
 * Status is left out of the unknown fields, as admission drops it from main-resource writes.
 */
export const throwIfStrictDuplicates = (resource: ResourceInfo, scan: JsonFieldScan | undefined, body: unknown, fieldValidation: FieldValidation): void => {
  if (!scan || scan.duplicates.length === 0 || fieldValidation !== 'Strict') return;
  const object = typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : {};
  delete object['status'];
  const findings = strictFindings(scan, checkShape(resource.kind, object).unknownFields);
  throw apiErrors.badRequest(
    `${resource.kind} in version "${resource.version}" cannot be handled as a ${resource.kind}: strict decoding error: ${findings.map(findingText).join(', ')}`,
    findings.map(findingCause),
  );
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
