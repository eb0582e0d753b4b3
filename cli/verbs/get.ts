/**
 * `logplane get KIND[,KIND…] [NAME…] | KIND/NAME…`: kubectl's tables (`-o wide`), or
 * YAML/JSON/names; `-l`/`--field-selector`, `-n`/`-A`; `-w` keeps printing rows from a
 * watch (re-listing after a 410); `--at TIME|POSITION` prints the objects as they were
 * then, from the history API.
 */
import type { Command } from 'commander';
import { assertNever } from '../../schemas/assert-never.ts';
import type { KubeObject } from '../../schemas/index.ts';
import { ApiError, type Client } from '../client.ts';
import { historyApi } from '../history/api.ts';
import { momentArgument } from '../history/time.ts';
import { asList, columnWidths, renderRow, renderTable, tableHeaders, tableRow, toJson, toYaml, type TableOptions } from '../printers.ts';
import { action, connect, optionsOf, out, printError, ReportedError, sleep, withConnectionOptions, withNamespaceOption, type Session } from './common.ts';
import {
  CATEGORY_ALL,
  collectionPath,
  objectPath,
  qualifiedPlural,
  qualifiedSingular,
  resolveResourceType,
  resourceTypeOfKind,
  typedName,
  withTypeMeta,
  type ResourceType,
} from './kinds.ts';
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
 * Reads `get`'s arguments: `KIND/NAME…`, or `KIND[,KIND…] [NAME…]` (`all` is pods,
 * services, deployments and replicasets). Names need exactly one kind.
 */
export const parseGetArgs = (args: readonly string[]): { requests: GetRequest[]; several: boolean } => {
  const [first, ...rest] = args;
  if (first === undefined) throw new Error('you must specify the type of resource to get, e.g. "logplane get pods"');
  if (first.includes('/')) {
    const requests: { type: ResourceType; names: string[] }[] = [];
    for (const arg of args) {
      const slash = arg.indexOf('/');
      if (slash < 0) throw new Error(`arguments in resource/name form must have a single resource and name; got ${JSON.stringify(arg)}`);
      const type = resolveResourceType(arg.slice(0, slash));
      const name = arg.slice(slash + 1);
      const existing = requests.find((r) => r.type === type);
      if (existing) existing.names.push(name);
      else requests.push({ type, names: [name] });
    }
    return { requests, several: requests.length > 1 };
  }
  const kinds = first.split(',').filter((k) => k !== '');
  const types = kinds.flatMap((k) => (k.toLowerCase() === 'all' ? CATEGORY_ALL.map((kind) => resourceTypeOfKind(kind)!) : [resolveResourceType(k)]));
  const unique = types.filter((t, i) => types.indexOf(t) === i);
  if (rest.length > 0) {
    if (unique.length !== 1) throw new Error('names can only be given with one resource type (or use KIND/NAME)');
    return { requests: [{ type: unique[0]!, names: rest }], several: false };
  }
  return { requests: unique.map((type) => ({ type })), several: unique.length > 1 || kinds.some((k) => k.toLowerCase() === 'all') };
};

interface GetOptions {
  readonly output?: string;
  readonly watch?: boolean;
  readonly selector?: string;
  readonly fieldSelector?: string;
  readonly allNamespaces?: boolean;
  readonly at?: string;
}

interface ListReply {
  readonly metadata?: { readonly resourceVersion?: string };
  readonly items?: readonly KubeObject[];
}

/** What one request fetched. */
interface Fetched {
  readonly type: ResourceType;
  readonly objects: KubeObject[];
  /** The list's resourceVersion, where a watch resumes. */
  readonly resourceVersion?: string;
}

const fetchLive = async (session: Session, request: GetRequest, options: GetOptions, failures: { count: number }): Promise<Fetched> => {
  const { client } = session;
  const { type } = request;
  const namespace = options.allNamespaces ? undefined : session.namespace;
  if (!request.names) {
    const list = await client.get<ListReply>(collectionPath(type, namespace), {
      labelSelector: options.selector,
      fieldSelector: options.fieldSelector,
    });
    return {
      type,
      objects: (list.items ?? []).map((o) => withTypeMeta(type, o)),
      ...(list.metadata?.resourceVersion ? { resourceVersion: list.metadata.resourceVersion } : {}),
    };
  }
  const objects: KubeObject[] = [];
  for (const name of request.names) {
    try {
      objects.push(withTypeMeta(type, await client.get<KubeObject>(objectPath(type, session.namespace, name))));
    } catch (error) {
      if (error instanceof ApiError) {
        printError(error);
        failures.count++;
      } else throw error;
    }
  }
  return { type, objects };
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
  const filter = { kind: type.kind, ...(namespace !== undefined ? { namespace } : {}) };
  const requirements = options.selector ? parseLabelSelector(options.selector) : [];
  if (!request.names) {
    const reply = await api.at(at, filter);
    const objects = reply.objects
      .filter((o) => o.kind === type.kind && selectorMatches(requirements, o.metadata.labels))
      .map((o) => withTypeMeta(type, o));
    return { type, objects, position: reply.position };
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
  return { type, objects, position };
};

const tableOptions = (format: OutputFormat, options: GetOptions, several: boolean, type: ResourceType, now: number): TableOptions => ({
  wide: format === 'wide',
  withNamespace: options.allNamespaces === true,
  ...(several ? { namePrefix: qualifiedSingular(type) } : {}),
  now,
});

/** Prints fetched objects in the chosen format. */
const printFetched = (fetched: readonly Fetched[], format: OutputFormat, options: GetOptions, several: boolean, single: boolean, now: number, listVersion?: string): void => {
  const objects = fetched.flatMap((f) => f.objects);
  switch (format) {
    case 'yaml':
    case 'json': {
      const value = single && objects.length === 1 ? objects[0] : asList(objects, listVersion);
      out(format === 'yaml' ? toYaml(value) : toJson(value));
      return;
    }
    case 'name':
      for (const f of fetched) for (const o of f.objects) out(`${typedName(f.type, o.metadata.name)}\n`);
      return;
    case 'table':
    case 'wide': {
      let first = true;
      for (const f of fetched) {
        if (f.objects.length === 0) continue;
        const table = tableOptions(format, options, several, f.type, now);
        if (!first) out('\n');
        first = false;
        out(renderTable([tableHeaders(f.type.kind, table), ...f.objects.map((o) => tableRow(o, table))]));
      }
      return;
    }
    default:
      assertNever(format, 'output format');
  }
};

/** Prints rows for watch events, keeping the widths of the first table (growing when needed). */
const watchPrinter = (format: OutputFormat, table: TableOptions, type: ResourceType, initial: readonly KubeObject[]) => {
  const headers = tableHeaders(type.kind, table);
  let widths = columnWidths([headers, ...initial.map((o) => tableRow(o, table))]);
  let headerPrinted = initial.length > 0;
  return (object: KubeObject): void => {
    switch (format) {
      case 'yaml':
        out(`---\n${toYaml(object)}`);
        return;
      case 'json':
        out(toJson(object));
        return;
      case 'name':
        out(`${typedName(type, object.metadata.name)}\n`);
        return;
      case 'table':
      case 'wide': {
        const row = tableRow(object, { ...table, now: Date.now() });
        widths = columnWidths(headerPrinted ? [row] : [headers, row], widths);
        if (!headerPrinted) {
          out(`${renderRow(headers, widths)}\n`);
          headerPrinted = true;
        }
        out(`${renderRow(row, widths)}\n`);
        return;
      }
      default:
        assertNever(format, 'output format');
    }
  };
};

/**
 * Follows a watch from `resourceVersion`, printing every event's object; resumes after the
 * server ends the stream and re-lists after 410 Gone. Returns only on an error.
 */
const follow = async (client: Client, path: string, query: Record<string, string | undefined>, resourceVersion: string | undefined, print: (o: KubeObject) => void): Promise<never> => {
  let version = resourceVersion;
  for (;;) {
    const started = Date.now();
    let events = 0;
    try {
      for await (const event of client.watch<KubeObject>(path, { ...query, resourceVersion: version, allowWatchBookmarks: true })) {
        events++;
        const next = event.object?.metadata?.resourceVersion;
        if (next) version = next;
        if (event.type === 'BOOKMARK') continue;
        print(event.object);
      }
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 410) throw error;
      const list = await client.get<ListReply>(path, query);
      version = list.metadata?.resourceVersion;
      for (const object of list.items ?? []) print(object);
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
    .option('--at <moment>', 'show the objects as they were at a position (a resourceVersion such as 42.17, as history and why print it) or time (RFC 3339, epoch ms, -5m, 5m ago)');
  withNamespaceOption(command);
  withConnectionOptions(command);
  command.action(
    action(async (cmd) => {
      const args = cmd.processedArgs[0] as string[];
      const options = optionsOf<GetOptions>(cmd);
      const format = parseOutputFormat(options.output);
      const { requests, several } = parseGetArgs(args);
      if (options.watch && options.at) throw new Error('--watch cannot be combined with --at: the past does not change');
      if (options.watch && requests.length > 1) throw new Error('you may only watch one resource type at a time');
      if (options.at && options.fieldSelector) throw new Error('--field-selector cannot be combined with --at');
      const at = options.at ? momentArgument('--at', options.at) : undefined;
      const session = connect(cmd);
      const failures = { count: 0 };
      const fetched: Fetched[] = [];
      let position: string | undefined;
      for (const request of requests) {
        if (at) {
          const result = await fetchAt(session, request, options, position ?? at.text, failures);
          position = result.position;
          fetched.push(result);
        } else fetched.push(await fetchLive(session, request, options, failures));
      }
      const now = at?.moment.type === 'time' ? at.moment.ms : Date.now();
      const single = requests.length === 1 && requests[0]!.names?.length === 1;
      const total = fetched.reduce((n, f) => n + f.objects.length, 0);
      if (total > 0 || format === 'yaml' || format === 'json') {
        if (!(single && total === 0)) printFetched(fetched, format, options, several, single, now, position ?? fetched[0]?.resourceVersion);
      }
      if (total === 0 && failures.count === 0 && !options.watch && format !== 'yaml' && format !== 'json') {
        const inNamespace = !options.allNamespaces && requests.every((r) => r.type.namespaced);
        process.stderr.write(inNamespace ? `No resources found in ${session.namespace} namespace.\n` : 'No resources found\n');
      }
      if (failures.count > 0) throw new ReportedError(failures.count);
      if (!options.watch) return;

      const [request] = requests as [GetRequest];
      const [result] = fetched as [Fetched];
      const table = tableOptions(format, options, several, request.type, now);
      const printObject = watchPrinter(format, table, request.type, result.objects);
      const print = (object: KubeObject): void => printObject(withTypeMeta(request.type, object));
      if (request.names) {
        if (request.names.length !== 1) throw new Error('you may only watch a single named object at a time');
        return follow(
          session.client,
          collectionPath(request.type, request.type.namespaced ? session.namespace : undefined),
          { fieldSelector: `metadata.name=${request.names[0]}` },
          result.objects[0]?.metadata.resourceVersion,
          print,
        );
      }
      return follow(
        session.client,
        collectionPath(request.type, options.allNamespaces ? undefined : session.namespace),
        { labelSelector: options.selector, fieldSelector: options.fieldSelector },
        result.resourceVersion,
        print,
      );
    }),
  );
};
