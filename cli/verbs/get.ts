/**
 * `logplane get KIND[,KIND…] [NAME…] | KIND/NAME…`: the server's Tables printed as kubectl
 * prints them (`-o wide`, `--no-headers`, `--show-labels`), or YAML/JSON/names;
 * `-l`/`--field-selector`, `-n`/`-A`; `-w` keeps printing rows from a watch of Tables
 * (re-listing after a 410); `--at TIME|POSITION` prints the objects as they were then,
 * from the history API. Types resolve through the server's discovery.
 */
import type { Command } from 'commander';
import { customTableOf, type CustomObject } from '../../apiserver/custom-resources/printer-columns.ts';
import { humanDuration, toTable as serverTable } from '../../apiserver/tables.ts';
import { assertNever } from '../../schemas/assert-never.ts';
import { isKind, type KubeObject } from '../../schemas/index.ts';
import { kindRef } from '../../schemas/keys.ts';
import { ApiError, type Client } from '../client.ts';
import { historyApi } from '../history/api.ts';
import { crdAt, resourcesAt } from '../history/resource-types.ts';
import { momentArgument } from '../history/time.ts';
import { asList, isTable, TABLE_ACCEPT, TablePrinter, toJson, toYaml, type PrintOptions, type Table, type TableColumnDefinition } from '../printers.ts';
import { action, connect, optionsOf, out, printError, ReportedError, sleep, withConnectionOptions, withNamespaceOption, type Session } from './common.ts';
import { collectionPath, historyKindRef, objectPath, qualifiedKind, qualifiedPlural, typedName, UnknownResourceTypeError, withTypeMeta, type Resources, type ResourceType } from './kinds.ts';
import { parseLabelSelector, selectorMatches } from './selector.ts';

/** What one `get` asks for: a type, and names (all objects when absent). */
export interface GetRequest {
  readonly type: ResourceType;
  readonly names?: readonly string[];
}

/** The output formats of `get`. */
export const OUTPUT_FORMATS = ['wide', 'yaml', 'json', 'name'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number] | 'table';

/** Validates `-o`. */
export const parseOutputFormat = (value: string | undefined): OutputFormat => {
  if (value === undefined || value === '') return 'table';
  if ((OUTPUT_FORMATS as readonly string[]).includes(value)) return value as OutputFormat;
  throw new Error(`unable to match a printer suitable for the output format "${value}", allowed formats are: ${[...OUTPUT_FORMATS].sort().join(',')}`);
};

/**
 * Reads `get`'s arguments against the server's resource types: `KIND/NAME…`, or
 * `KIND[,KIND…] [NAME…]` (categories such as `all` expanded from discovery). Names need
 * exactly one kind. `several` is kubectl's "multiple kinds requested": names print as
 * `kind/name`.
 */
export const parseGetArgs = (args: readonly string[], resources: Resources): { requests: GetRequest[]; several: boolean } => {
  const [first, ...rest] = args;
  if (first === undefined) throw new Error('you must specify the type of resource to get, e.g. "logplane get pods"');
  if (first.includes('/')) {
    const requests: { type: ResourceType; names: string[] }[] = [];
    for (const arg of args) {
      const slash = arg.indexOf('/');
      if (slash < 0) throw new Error(`arguments in resource/name form must have a single resource and name; got ${JSON.stringify(arg)}`);
      const type = resources.resolve(arg.slice(0, slash));
      const name = arg.slice(slash + 1);
      const existing = requests.find((r) => r.type === type);
      if (existing) existing.names.push(name);
      else requests.push({ type, names: [name] });
    }
    return { requests, several: requests.length > 1 };
  }
  const types = resources.expand(first);
  if (rest.length > 0) {
    if (types.length !== 1) throw new Error('names can only be given with one resource type (or use KIND/NAME)');
    return { requests: [{ type: types[0]!, names: rest }], several: false };
  }
  return { requests: types.map((type) => ({ type })), several: types.length > 1 };
};

/**
 * `parseGetArgs` against discovery; with `--at`, a type discovery does not serve (any more)
 * is resolved against the custom resources served at that moment as well.
 */
const parseGetArgsAt = async (args: readonly string[], session: Session, at: string | undefined): Promise<ReturnType<typeof parseGetArgs>> => {
  try {
    return parseGetArgs(args, await session.resources());
  } catch (error) {
    if (at === undefined || !(error instanceof UnknownResourceTypeError)) throw error;
    return parseGetArgs(args, await resourcesAt(session, at));
  }
};

interface GetOptions {
  readonly output?: string;
  readonly watch?: boolean;
  readonly selector?: string;
  readonly fieldSelector?: string;
  readonly allNamespaces?: boolean;
  readonly at?: string;
  readonly headers?: boolean;
  readonly showLabels?: boolean;
  readonly showManagedFields?: boolean;
}

interface ListReply {
  readonly kind?: string;
  readonly metadata?: { readonly resourceVersion?: string };
  readonly items?: readonly KubeObject[];
}

/** What one request fetched: Tables for the table formats, objects for the others. */
interface Fetched {
  readonly type: ResourceType;
  readonly objects: KubeObject[];
  readonly tables: Table[];
  /** The list's resourceVersion, where a watch resumes. */
  readonly resourceVersion?: string;
}

const count = (f: Fetched): number => f.objects.length + f.tables.reduce((n, t) => n + (t.rows ?? []).length, 0);

const NAME_COLUMN: TableColumnDefinition = { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 };
const AGE_COLUMN: TableColumnDefinition = { name: 'Age', type: 'string', format: '', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', priority: 0 };

/** kubectl's default table (NAME, AGE) for objects that came without a server Table. */
export const defaultTable = (objects: readonly KubeObject[], now: number): Table => ({
  kind: 'Table',
  apiVersion: 'meta.k8s.io/v1',
  columnDefinitions: [NAME_COLUMN, AGE_COLUMN],
  rows: objects.map((o) => {
    const created = o.metadata.creationTimestamp ? Date.parse(o.metadata.creationTimestamp) : NaN;
    return { cells: [o.metadata.name, Number.isNaN(created) ? '<unknown>' : humanDuration(now - created)], object: o };
  }),
});

/** A reply for the table formats: the server's Table, or the default table of the objects it sent instead. */
const asTable = (type: ResourceType, reply: unknown): Table => {
  if (isTable(reply)) return reply;
  const list = reply as ListReply & KubeObject;
  const objects = Array.isArray(list.items) ? list.items : [list];
  return defaultTable(objects.map((o) => withTypeMeta(type, o)), Date.now());
};

/** The resourceVersion of a watch event's object: a Table's row's, or the object's own (bookmarks). */
const versionOf = (object: unknown): string | undefined =>
  isTable(object) ? object.rows?.[0]?.object?.metadata?.resourceVersion : (object as KubeObject | undefined)?.metadata?.resourceVersion;

const fetchLive = async (session: Session, request: GetRequest, options: GetOptions, asTables: boolean, failures: { count: number }): Promise<Fetched> => {
  const { client } = session;
  const { type } = request;
  const namespace = options.allNamespaces ? undefined : session.namespace;
  const accept = asTables ? TABLE_ACCEPT : 'application/json';
  if (!request.names) {
    let reply: unknown;
    try {
      reply = await client.request<unknown>('GET', collectionPath(type, namespace), {
        accept,
        query: { labelSelector: options.selector, fieldSelector: options.fieldSelector },
      });
    } catch (error) {
      // As kubectl: a type the server fails to list is reported, and the other types are still printed.
      if (!(error instanceof ApiError)) throw error;
      printError(error);
      failures.count++;
      return { type, objects: [], tables: [] };
    }
    const resourceVersion = asTables ? (reply as Table).metadata?.resourceVersion : (reply as ListReply).metadata?.resourceVersion;
    return {
      type,
      objects: asTables ? [] : ((reply as ListReply).items ?? []).map((o) => withTypeMeta(type, o)),
      tables: asTables ? [asTable(type, reply)] : [],
      ...(resourceVersion ? { resourceVersion } : {}),
    };
  }
  const objects: KubeObject[] = [];
  const tables: Table[] = [];
  for (const name of request.names) {
    try {
      const reply = await client.request<unknown>('GET', objectPath(type, session.namespace, name), { accept });
      if (asTables) tables.push(asTable(type, reply));
      else objects.push(withTypeMeta(type, reply as KubeObject));
    } catch (error) {
      if (error instanceof ApiError) {
        printError(error);
        failures.count++;
      } else throw error;
    }
  }
  return { type, objects, tables };
};

/**
 * Past objects as a Table: printed by the apiserver's own printers (the history API sends
 * objects, not Tables) with ages as they were then, a custom resource's with its CRD's
 * printer columns at that position; the default table for a kind the apiserver has no
 * printer for.
 */
const pastTable = async (session: Session, fetched: Fetched & { position: string }, now: number): Promise<Table> => {
  const { type, objects } = fetched;
  const ref = historyKindRef(type);
  if (isKind(type.kind) && kindRef(type.kind) === ref && objects.every((o) => o.kind === type.kind)) {
    return serverTable(objects, { kind: type.kind, includeObject: 'Object', version: 'v1', now }) as unknown as Table;
  }
  // A custom resource: its CRD version's printer columns as they were then.
  const version = (await crdAt(session, type, fetched.position))?.spec.versions.find((v) => v.name === type.version);
  return version ? (customTableOf({ version }, objects as unknown as readonly CustomObject[], { includeObject: 'Object', version: 'v1', now }) as unknown as Table) : defaultTable(objects, now);
};

/**
 * The objects of one request at moment `at` (as the user typed it, or the position an
 * earlier request of the same command resolved it to, so that a relative time names one
 * moment for all of them).
 */
const fetchAt = async (
  session: Session,
  request: GetRequest,
  options: GetOptions,
  at: string,
  failures: { count: number },
): Promise<Fetched & { position: string }> => {
  const api = historyApi(session.client);
  const { type } = request;
  const namespace = type.namespaced && !options.allNamespaces ? session.namespace : undefined;
  const filter = { kind: historyKindRef(type), ...(namespace !== undefined ? { namespace } : {}) };
  const requirements = options.selector ? parseLabelSelector(options.selector) : [];
  if (!request.names) {
    const reply = await api.at(at, filter);
    const objects = reply.objects
      .filter((o) => o.kind === type.kind && selectorMatches(requirements, o.metadata.labels))
      .map((o) => withTypeMeta(type, o));
    return { type, objects, tables: [], position: reply.position };
  }
  const objects: KubeObject[] = [];
  let position = '';
  for (const name of request.names) {
    const reply = await api.at(position || at, { ...filter, name });
    position = reply.position;
    const found = reply.objects.find((o) => o.kind === type.kind && o.metadata.name === name);
    if (found) objects.push(withTypeMeta(type, found));
    else {
      printError(new Error(`${qualifiedPlural(type)} "${name}" not found at position ${reply.position}`));
      failures.count++;
    }
  }
  return { type, objects, tables: [], position };
};

const printOptions = (format: OutputFormat, options: GetOptions, several: boolean, type: ResourceType): PrintOptions => ({
  wide: format === 'wide',
  noHeaders: options.headers === false,
  // kubectl's get: with -A, no NAMESPACE column for a cluster-scoped type printed alone (an empty one among several types).
  withNamespace: options.allNamespaces === true && (type.namespaced || several),
  showLabels: options.showLabels === true,
  ...(several ? { kind: qualifiedKind(type) } : {}),
});

/**
 * Prints fetched objects in the chosen format; returns the table printer of each request
 * (a watch goes on with its widths).
 */
const printFetched = (
  fetched: readonly Fetched[],
  format: OutputFormat,
  options: GetOptions,
  several: boolean,
  single: boolean,
  listVersion?: string,
): TablePrinter[] => {
  const objects = fetched.flatMap((f) => f.objects).map((o) => shownObject(o, options));
  switch (format) {
    case 'yaml':
    case 'json': {
      const value = single && objects.length === 1 ? objects[0] : asList(objects, listVersion);
      out(format === 'yaml' ? toYaml(value) : toJson(value));
      return [];
    }
    case 'name':
      for (const f of fetched) for (const o of f.objects) out(`${typedName(f.type, o.metadata.name)}\n`);
      return [];
    case 'table':
    case 'wide': {
      // A blank line between the tables of two types, as kubectl's separator writer prints it.
      let written = false;
      return fetched.map((f) => {
        const printer = new TablePrinter(printOptions(format, options, several, f.type));
        const text = printer.print(f.tables);
        if (text !== '') {
          if (written && options.headers !== false) out('\n');
          out(text);
          written = true;
        }
        return printer;
      });
    }
    default:
      return assertNever(format, 'output format');
  }
};

/** The object as YAML/JSON output shows it: without managedFields unless asked for, as kubectl prints it. */
const shownObject = (object: KubeObject, options: GetOptions): KubeObject => {
  if (options.showManagedFields === true || object.metadata?.managedFields === undefined) return object;
  const { managedFields: _managedFields, ...metadata } = object.metadata;
  return { ...object, metadata } as KubeObject;
};

/** Prints the objects of watch events (Tables in the table formats, through the list's printer). */
const watchPrinter = (format: OutputFormat, type: ResourceType, printer: TablePrinter | undefined, options: GetOptions) => (object: unknown): void => {
  switch (format) {
    case 'yaml':
      out(`---\n${toYaml(withTypeMeta(type, shownObject(object as KubeObject, options)))}`);
      return;
    case 'json':
      out(toJson(withTypeMeta(type, shownObject(object as KubeObject, options))));
      return;
    case 'name':
      out(`${typedName(type, (object as KubeObject).metadata.name)}\n`);
      return;
    case 'table':
    case 'wide':
      out(printer!.print([asTable(type, object)]));
      return;
    default:
      assertNever(format, 'output format');
  }
};

/**
 * Follows a watch from `resourceVersion`, printing every event's object; resumes after the
 * server ends the stream and re-lists after 410 Gone. Returns only on an error.
 */
const follow = async (
  client: Client,
  path: string,
  query: Record<string, string | undefined>,
  resourceVersion: string | undefined,
  accept: string,
  print: (o: unknown) => void,
): Promise<never> => {
  let version = resourceVersion;
  for (;;) {
    const started = Date.now();
    let events = 0;
    try {
      for await (const event of client.watch<unknown>(path, { ...query, resourceVersion: version, allowWatchBookmarks: true }, undefined, accept)) {
        events++;
        const next = versionOf(event.object);
        if (next) version = next;
        if (event.type === 'BOOKMARK') continue;
        print(event.object);
      }
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 410) throw error;
      const list = await client.request<unknown>('GET', path, { query, accept });
      if (isTable(list)) {
        version = list.metadata?.resourceVersion;
        print(list);
      } else {
        version = (list as ListReply).metadata?.resourceVersion;
        for (const object of (list as ListReply).items ?? []) print(object);
      }
      continue;
    }
    if (events === 0 && Date.now() - started < 1000) await sleep(1000);
  }
};

/** Registers `get`. */
export const registerGet = (program: Command): void => {
  const command = program
    .command('get')
    .description('Display one or many resources (now, or as they were --at a time or position)')
    .argument('<resource...>', 'KIND [NAME...], KIND,KIND..., KIND/NAME..., or all')
    .option('-o, --output <format>', 'output format: wide, yaml, json or name')
    .option('-w, --watch', 'after listing, watch for changes')
    .option('-l, --selector <selector>', 'label selector, e.g. app=web,tier!=db')
    .option('--field-selector <selector>', 'field selector, e.g. spec.nodeName=node-1')
    .option('-A, --all-namespaces', 'list across all namespaces')
    .option('--no-headers', 'print no column headers')
    .option('--show-labels', 'add a LABELS column with each object\'s labels')
    .option('--show-managed-fields', 'keep metadata.managedFields in yaml and json output')
    .option('--at <moment>', 'show the objects as they were at a position (a resourceVersion such as 42.17, as history and why print it) or time (RFC 3339, epoch ms, -5m, 5m ago)');
  withNamespaceOption(command);
  withConnectionOptions(command);
  command.action(
    action(async (cmd) => {
      const args = cmd.processedArgs[0] as string[];
      const options = optionsOf<GetOptions>(cmd);
      const format = parseOutputFormat(options.output);
      if (options.watch && options.at) throw new Error('--watch cannot be combined with --at: the past does not change');
      if (options.at && options.fieldSelector) throw new Error('--field-selector cannot be combined with --at');
      const at = options.at ? momentArgument('--at', options.at) : undefined;
      const session = connect(cmd);
      const { requests, several } = await parseGetArgsAt(args, session, at?.text);
      if (options.watch && requests.length > 1) throw new Error('you may only watch one resource type at a time');
      const asTables = format === 'table' || format === 'wide';
      const failures = { count: 0 };
      let fetched: Fetched[] = [];
      let position: string | undefined;
      for (const request of requests) {
        if (at) {
          const result = await fetchAt(session, request, options, position ?? at.text, failures);
          position = result.position;
          fetched.push(result);
        } else fetched.push(await fetchLive(session, request, options, asTables, failures));
      }
      if (at && asTables) {
        const now = at.moment.type === 'time' ? at.moment.ms : Date.now();
        fetched = await Promise.all(fetched.map(async (f) => ({ ...f, objects: [], tables: [await pastTable(session, f as Fetched & { position: string }, now)] })));
      }
      const single = requests.length === 1 && requests[0]!.names?.length === 1;
      const total = fetched.reduce((n, f) => n + count(f), 0);
      let printers: TablePrinter[] = [];
      if (total > 0 || format === 'yaml' || format === 'json') {
        if (!(single && total === 0)) printers = printFetched(fetched, format, options, several, single, position ?? fetched[0]?.resourceVersion);
      }
      if (total === 0 && failures.count === 0 && !options.watch && format !== 'yaml' && format !== 'json') {
        const inNamespace = !options.allNamespaces && requests.every((r) => r.type.namespaced);
        process.stderr.write(inNamespace ? `No resources found in ${session.namespace} namespace.\n` : 'No resources found\n');
      }
      if (failures.count > 0) throw new ReportedError(failures.count);
      if (!options.watch) return;

      const [request] = requests as [GetRequest];
      const [result] = fetched as [Fetched];
      const printer = printers[0] ?? new TablePrinter(printOptions(format, options, several, request.type));
      const print = watchPrinter(format, request.type, printer, options);
      const accept = asTables ? TABLE_ACCEPT : 'application/json';
      if (request.names) {
        if (request.names.length !== 1) throw new Error('you may only watch a single named object at a time');
        const named = asTables ? versionOf(result.tables[0]) : result.objects[0]?.metadata.resourceVersion;
        return follow(
          session.client,
          collectionPath(request.type, request.type.namespaced ? session.namespace : undefined),
          { fieldSelector: `metadata.name=${request.names[0]}` },
          named,
          accept,
          print,
        );
      }
      return follow(
        session.client,
        collectionPath(request.type, options.allNamespaces ? undefined : session.namespace),
        { labelSelector: options.selector, fieldSelector: options.fieldSelector },
        result.resourceVersion,
        accept,
        print,
      );
    }),
  );
};
