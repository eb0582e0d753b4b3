/**
 * The Tables of custom resources, as kube-apiserver 1.32 prints them
 * (apiextensions-apiserver `registry/customresource/tableconvertor`): a `Name` column, then
 * the CRD version's `additionalPrinterColumns` (or `Age` when it has none), each cell the
 * column's JSONPath evaluated on the object and typed by the column's type.
 */
import type { CustomResourceDefinitionVersion, ObjectMeta } from '../../schemas/index.ts';
import { humanDuration, partialMetadata, type IncludeObject, type Table, type TableColumnDefinition } from '../tables.ts';
import { findResults, goText, GoFloat, parseJsonPathTemplate, type JsonPathTemplate, type JsonPathValue } from './jsonpath.ts';

/** One entry of a CRD version's `additionalPrinterColumns` (already validated). */
export interface PrinterColumn {
  readonly name: string;
  readonly type: TableColumnDefinition['type'];
  readonly format?: string;
  readonly description?: string;
  readonly priority?: number;
  readonly jsonPath: string;
}

/** A custom object as stored: JSON with ObjectMeta. */
export interface CustomObject {
  readonly metadata: ObjectMeta;
  readonly [field: string]: unknown;
}

/** A cell of a custom resource's row: kube sends `null` where the path found nothing (kubectl prints it empty). */
export type CustomResourceCell = string | number | boolean | null;

export interface CustomResourceRow {
  readonly cells: readonly CustomResourceCell[];
  readonly object?: unknown;
}

export type CustomResourceTable = Omit<Table, 'rows'> & { readonly rows: readonly CustomResourceRow[] };

/** How the objects of one CRD version print. */
export interface CustomResourcePrinter {
  readonly columnDefinitions: readonly TableColumnDefinition[];
  /**
   * kube's `unrecognized column definition "<path>"` when a column's JSONPath does not parse:
   * as kube-apiserver does, the table then keeps the columns before that one and drops the rest.
   */
  readonly error?: string;
  /** The cells of one object's row, `now` being the time dates are aged against. */
  readonly cells: (object: CustomObject, now: number) => CustomResourceCell[];
}

/** `metav1.ObjectMeta{}.SwaggerDoc()["name"]`. */
const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

/** `metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]`. */
const CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** kube's `serveDefaultColumnsIfEmpty`: what a CRD version without printer columns shows besides the name. */
export const DEFAULT_PRINTER_COLUMNS: readonly PrinterColumn[] = [
  { name: 'Age', type: 'date', description: CREATION_TIMESTAMP_DESCRIPTION, jsonPath: '.metadata.creationTimestamp' },
];

const NAME_COLUMN: TableColumnDefinition = { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 };

/**
 * kube's CRD validation of a printer column's `jsonPath` (`validateSimpleJSONPath`): the text
 * after the field path of kube's error (`Required value`, or `Invalid value: "<path>": must be
 * a simple json path starting with .`), or undefined when kube accepts it. Like kube, it does not
 * parse the path: an unparseable one is accepted, and printing drops it ({@link CustomResourcePrinter.error}).
 */
export const validatePrinterColumnJsonPath = (jsonPath: string): string | undefined => {
  if (jsonPath.length === 0) return 'Required value';
  if (!jsonPath.startsWith('.')) return `Invalid value: ${JSON.stringify(jsonPath)}: must be a simple json path starting with .`;
  return undefined;
};

const isLeapYear = (year: number): boolean => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

/** Go's `time.Parse(time.RFC3339, …)`: epoch milliseconds, or undefined when it does not parse. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/;
const parseRfc3339 = (text: string): number | undefined => {
  const match = RFC3339.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysInMonth = [31, isLeapYear(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return undefined;
  const zoneHours = match[9] === undefined ? 0 : Number(match[9]);
  const zoneMinutes = match[10] === undefined ? 0 : Number(match[10]);
  if (zoneHours > 24 || zoneMinutes > 60) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, Math.trunc(Number(`0.${match[7] ?? '0'}`) * 1000));
  const offset = (match[8] === '-' ? -1 : 1) * (zoneHours * 60 + zoneMinutes) * 60_000;
  return date.getTime() - offset;
};

/** Go's zero `time.Time` (0001-01-01T00:00:00Z), which `ConvertToHumanReadableDateType` prints as `<unknown>`. */
const GO_ZERO_TIME = (() => {
  const date = new Date(0);
  date.setUTCFullYear(1, 0, 1);
  return date.getTime();
})();

/**
 * A date cell as kube computes it (`metav1.Time.UnmarshalQueryParameter`, then
 * `ConvertToHumanReadableDateType`): the age (`5m`, `3d4h`), `<unknown>` for "" or "null" or
 * the zero time, `<invalid>` for text that is not RFC 3339.
 */
const dateCell = (text: string, now: number): string => {
  if (text === '' || text === 'null') return '<unknown>';
  const time = parseRfc3339(text);
  if (time === undefined) return '<invalid>';
  return time === GO_ZERO_TIME ? '<unknown>' : humanDuration(now - time);
};

/** kube's `cellForJSONValue`: the value as the column's type, or null when it is not of that type. */
const typedCell = (type: PrinterColumn['type'], value: JsonPathValue, now: number): CustomResourceCell => {
  switch (type) {
    case 'string':
      return goText(value);
    case 'integer':
      if (typeof value === 'number') return Math.trunc(value);
      return value instanceof GoFloat ? Math.trunc(value.value) : null;
    case 'number':
      if (typeof value === 'number') return value;
      return value instanceof GoFloat ? value.value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      return typeof value === 'string' ? dateCell(value, now) : null;
  }
};

interface CompiledColumn {
  readonly type: PrinterColumn['type'];
  readonly template: JsonPathTemplate;
}

const cellOf = (column: CompiledColumn, object: CustomObject, now: number): CustomResourceCell => {
  const found = findResults(column.template, object, { allowMissingKeys: true });
  if (found.type === 'error') return null;
  const first = found.results[0];
  if (first === undefined || first.length === 0) return null;
  // kube prints only the first value a path selects.
  return typedCell(column.type, first[0], now);
};

/**
 * Compiles a CRD version's printer columns (kube's `tableconvertor.New` over
 * `GetColumnsForVersion`): `Name` first, then each column with its type, format and priority,
 * its description or `Custom resource definition column (in JSONPath format): <path>`; with no
 * columns, `Name` and `Age`.
 */
export const customResourcePrinter = (columns: readonly PrinterColumn[] | undefined): CustomResourcePrinter => {
  const definitions: TableColumnDefinition[] = [NAME_COLUMN];
  const compiled: CompiledColumn[] = [];
  let error: string | undefined;
  for (const column of columns && columns.length > 0 ? columns : DEFAULT_PRINTER_COLUMNS) {
    const parsed = parseJsonPathTemplate(`{${column.jsonPath}}`);
    if (parsed.type === 'invalid') {
      error = `unrecognized column definition ${JSON.stringify(column.jsonPath)}`;
      break;
    }
    compiled.push({ type: column.type, template: parsed.template });
    definitions.push({
      name: column.name,
      type: column.type,
      format: column.format ?? '',
      description: column.description ? column.description : `Custom resource definition column (in JSONPath format): ${column.jsonPath}`,
      priority: column.priority ?? 0,
    });
  }
  return {
    columnDefinitions: definitions,
    ...(error === undefined ? {} : { error }),
    cells: (object, now) => [typeof object.metadata?.name === 'string' ? object.metadata.name : '', ...compiled.map((column) => cellOf(column, object, now))],
  };
};

export interface CustomResourceTableOptions {
  readonly includeObject: IncludeObject;
  readonly version: 'v1' | 'v1beta1';
  readonly resourceVersion?: string;
  readonly continueToken?: string;
  /** Leave the column definitions out (kube's `TableOptions.noHeaders`). */
  readonly noHeaders?: boolean;
  readonly now?: number;
}

/**
 * Prints custom objects (all of one CRD version) as a `meta.k8s.io` Table; each row's object
 * is, by `includeObject`, the object, its PartialObjectMetadata, or left out.
 */
export const customResourceTable = (objects: readonly CustomObject[], printer: CustomResourcePrinter, options: CustomResourceTableOptions): CustomResourceTable => {
  const now = options.now ?? Date.now();
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${options.version}`,
    metadata: {
      ...(options.resourceVersion !== undefined ? { resourceVersion: options.resourceVersion } : {}),
      ...(options.continueToken ? { continue: options.continueToken } : {}),
    },
    columnDefinitions: options.noHeaders ? [] : printer.columnDefinitions,
    rows: objects.map((object) => ({
      cells: printer.cells(object, now),
      ...(options.includeObject === 'None'
        ? {}
        : { object: options.includeObject === 'Object' ? object : partialMetadata(object, options.version) }),
    })),
  };
};

/** Printers by CRD version entry (a CRD change brings new entries, so none goes stale). */
const printers = new WeakMap<object, CustomResourcePrinter>();

/** The Table of `objects` of a custom resource, with its CRD version's printer columns. */
export const customTableOf = (
  custom: { readonly version: CustomResourceDefinitionVersion },
  objects: readonly CustomObject[],
  options: CustomResourceTableOptions,
): CustomResourceTable => {
  let printer = printers.get(custom.version);
  if (printer === undefined) {
    // Validation admits only kube's column types.
    printer = customResourcePrinter(custom.version.additionalPrinterColumns as readonly PrinterColumn[] | undefined);
    printers.set(custom.version, printer);
  }
  return customResourceTable(objects, printer, options);
};
