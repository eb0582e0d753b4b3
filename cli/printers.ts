/**
 * Client-side printing, kubectl style: the server's `meta.k8s.io/v1 Table`s printed as
 * kubectl's table printer prints them (priority-0 columns, all with `-o wide`, upper-cased
 * headers, `-A`'s NAMESPACE, `--show-labels`, `--no-headers`, `kind/name` when several
 * types are printed), columns aligned like kubectl's tabwriter, YAML/JSON with sorted
 * keys, and error messages like `cmdutil.CheckErr`. Nothing here knows a kind: the cells
 * (ages, statuses, `<none>`) are the server's.
 */
import YAML from 'yaml';
import { ApiError, ConnectionError } from './client.ts';
/**
 * Column widths as kubectl's tabwriter computes them (minimum 6, padding 3); the last
 * column is not padded. Widths only grow from `initial` (a watch keeps its first table's).
 */
export const columnWidths = (rows: readonly (readonly string[])[], initial: readonly number[] = []): number[] => {
  const widths: number[] = [...initial];
  for (const row of rows) {
    row.forEach((cell, i) => {
      if (i === row.length - 1) return;
      widths[i] = Math.max(widths[i] ?? 6, cell.length + 3);
    });
  }
  return widths;
};

/** One table line padded to `widths`. */
export const renderRow = (cells: readonly string[], widths: readonly number[]): string =>
  cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? cell.length + 3))).join('');

/** Aligned rows (the header first), one per line, with a trailing newline. */
export const renderTable = (rows: readonly (readonly string[])[]): string => {
  const widths = columnWidths(rows);
  return rows.map((row) => `${renderRow(row, widths)}\n`).join('');
};

/** A column of a server Table. */
export interface TableColumnDefinition {
  readonly name: string;
  readonly type?: string;
  readonly format?: string;
  readonly description?: string;
  readonly priority?: number;
}

/** What a row carries besides its cells (`includeObject`: PartialObjectMetadata by default). */
export interface TableRowObject {
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly resourceVersion?: string;
  };
}

export interface TableRow {
  readonly cells: readonly unknown[];
  readonly object?: TableRowObject;
}

/** `meta.k8s.io/v1 Table`, as the server sends it for `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`. */
export interface Table {
  readonly kind: 'Table';
  readonly apiVersion?: string;
  readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string };
  readonly columnDefinitions?: readonly TableColumnDefinition[];
  readonly rows?: readonly TableRow[];
}

/** The Accept header kubectl's `get` sends for server-side printing. */
export const TABLE_ACCEPT = ['application/json;as=Table;v=v1;g=meta.k8s.io', 'application/json;as=Table;v=v1beta1;g=meta.k8s.io', 'application/json'].join(',');

export const isTable = (value: unknown): value is Table =>
  value !== null && typeof value === 'object' && (value as { kind?: unknown }).kind === 'Table' && Array.isArray((value as { rows?: unknown }).rows ?? []);

/** `a=b,c=d` for a map, sorted by key; `<none>` when empty (apimachinery's `labels.FormatLabels`). */
export const formatLabels = (labels: Readonly<Record<string, string>> | undefined): string => {
  const entries = Object.entries(labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? '<none>' : entries.map(([k, v]) => `${k}=${v}`).join(',');
};

/** A cell as kubectl prints it: nothing for null, strings cut at the first line break (with `...`). */
export const cellText = (cell: unknown): string => {
  if (cell === null || cell === undefined) return '';
  if (typeof cell === 'string') {
    const cut = cell.search(/[\f\n\r]/);
    return cut >= 0 ? `${cell.slice(0, cut)}...` : cell;
  }
  if (typeof cell === 'object') return JSON.stringify(cell);
  return String(cell);
};

export interface PrintOptions {
  /** `-o wide`: every column, not only those of priority 0. */
  readonly wide?: boolean;
  /** `--no-headers`. */
  readonly noHeaders?: boolean;
  /** `-A`: a NAMESPACE column first, from each row's object. */
  readonly withNamespace?: boolean;
  /** `--show-labels`: a LABELS column last, from each row's object. */
  readonly showLabels?: boolean;
  /** Prefix the name column with `kind/` (`deployment.apps`), when several types are printed. */
  readonly kind?: string;
}

/**
 * The lines (cells) kubectl prints for a Table: `decorateTable` (NAMESPACE, kind-prefixed
 * names, LABELS) then `printTable` (priority filter, upper-cased headers; no header for a
 * table without rows).
 */
export const tableLines = (table: Table, options: PrintOptions, withHeader = !options.noHeaders): string[][] => {
  const definitions = table.columnDefinitions ?? [];
  const rows = table.rows ?? [];
  const nameColumn = options.kind ? definitions.findIndex((c) => c.format === 'name' && (c.type ?? 'string') === 'string') : -1;
  const shown = definitions.map((c) => options.wide === true || (c.priority ?? 0) === 0);
  const lines: string[][] = [];
  if (withHeader && rows.length > 0) {
    lines.push([
      ...(options.withNamespace ? ['NAMESPACE'] : []),
      ...definitions.filter((_, i) => shown[i]).map((c) => c.name.toUpperCase()),
      ...(options.showLabels ? ['LABELS'] : []),
    ]);
  }
  for (const row of rows) {
    const cells: string[] = [];
    if (options.withNamespace) cells.push(row.object?.metadata?.namespace ?? '');
    row.cells.forEach((cell, i) => {
      if (i >= definitions.length || !shown[i]) return;
      cells.push(i === nameColumn ? `${options.kind}/${cellText(cell)}` : cellText(cell));
    });
    if (options.showLabels) cells.push(row.object?.metadata ? formatLabels(row.object.metadata.labels) : '');
    lines.push(cells);
  }
  return lines;
};

/**
 * kubectl's table printer with its tabwriter for one resource type: the header once
 * (again only when the columns change), column widths remembered across prints so a
 * watch's rows line up with the list before them.
 */
export class TablePrinter {
  private lastColumns = '';
  private widths: number[] = [];

  constructor(private readonly options: PrintOptions) {}

  /** The text of `tables` printed in one flush. */
  print(tables: readonly Table[]): string {
    const lines: string[][] = [];
    for (const table of tables) {
      const columns = JSON.stringify(table.columnDefinitions ?? []);
      // A table without column definitions (a watch saving bandwidth) or with the last ones printed gets no header.
      const fresh = (table.columnDefinitions ?? []).length > 0 && columns !== this.lastColumns;
      const withHeader = !this.options.noHeaders && fresh;
      const definitions = (table.columnDefinitions ?? []).length > 0 ? table.columnDefinitions : JSON.parse(this.lastColumns || '[]');
      if (fresh && (table.rows ?? []).length > 0) this.lastColumns = columns;
      lines.push(...tableLines({ ...table, columnDefinitions: definitions }, this.options, withHeader));
    }
    this.widths = columnWidths(lines, this.widths);
    return lines.map((line) => `${renderRow(line, this.widths)}\n`).join('');
  }
}

const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
};

/** YAML like kubectl's: keys sorted, sequences not indented, no line folding. */
export const toYaml = (value: unknown): string => YAML.stringify(sortKeys(value), { indentSeq: false, lineWidth: 0 });

/** JSON like kubectl's: keys sorted, four-space indent, trailing newline. */
export const toJson = (value: unknown): string => `${JSON.stringify(sortKeys(value), null, 4)}\n`;

/** A `v1 List` of objects, as kubectl prints several objects with `-o yaml|json`. */
export const asList = (items: readonly unknown[], resourceVersion = ''): unknown => ({
  apiVersion: 'v1',
  items,
  kind: 'List',
  metadata: { resourceVersion },
});

/**
 * What kubectl prints for an error (`cmdutil.CheckErr`): `Error from server (NotFound): …`,
 * `The Deployment "web" is invalid: spec.replicas: …`, `error: You must be logged in to the
 * server (…)`, connection failures, and `error: …` for everything else.
 */
export const formatError = (error: unknown): string => {
  if (error instanceof ApiError) {
    const status = error.status;
    const message = status.message ?? error.message;
    if (error.reason === 'Invalid') {
      const details = status.details;
      const subject = details && (details.kind || details.name) ? `The ${details.kind ?? ''} "${details.name ?? ''}" is invalid` : 'The request is invalid';
      const causes = (details?.causes ?? []).map((c) => (c.field ? `${c.field}: ${c.message ?? ''}` : (c.message ?? '')));
      if (causes.length === 0) return details ? subject : `Error from server (Invalid): ${message}`;
      if (causes.length === 1) return `${subject}: ${causes[0]}`;
      return `${subject}: \n${causes.map((c) => `* ${c}`).join('\n')}`;
    }
    if (error.reason === 'Unauthorized') return `error: You must be logged in to the server (${message})`;
    if (error.reason) return `Error from server (${error.reason}): ${message}`;
    return `Error from server: ${message}`;
  }
  if (error instanceof ConnectionError) return error.message;
  if (error instanceof Error) return `error: ${error.message}`;
  return `error: ${String(error)}`;
};
