/**
 * Resource types as the server's discovery describes them, and how a user's argument
 * (`po`, `pod`, `pods`, `Pod`, `deploy`, `deployments.apps`, `deployments.v1.apps`, `all`,
 * `pods,svc`) maps onto one, with kubectl's rules (the resource builder's `mappingFor`
 * over a shortcut-expanding, priority-ordered RESTMapper, and the discovery category
 * expander). The CLI keeps no list of kinds: everything here reads a {@link Resources}
 * built from discovery (`Session.resources()`), fetched once per command.
 */
import type { KubeObject } from '../../schemas/index.ts';
import { KINDS } from '../../schemas/index.ts';
import { kindByRef, storedKind } from '../../schemas/kinds/registry.ts';
import { kindRefOf } from '../../schemas/kinds/refs.ts';
import type { DiscoveredResource } from '../client.ts';

/** One resource type, as discovery lists it. */
export type ResourceType = DiscoveredResource;

/** The user named a resource type the server does not serve. */
export class UnknownResourceTypeError extends Error {
  override readonly name = 'UnknownResourceTypeError';
  constructor(readonly requested: string) {
    super(`the server doesn't have a resource type "${requested}"`);
  }
}

/** The manifest's apiVersion and kind name nothing the server serves. */
export class NoKindMatchError extends Error {
  override readonly name = 'NoKindMatchError';
  constructor(
    readonly kind: string,
    readonly apiVersion: string,
  ) {
    super(`no matches for kind "${kind}" in version "${apiVersion}"`);
  }
}

const splitApiVersion = (apiVersion: string): { group: string; version: string } => {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
};

/**
 * `resource.version.group` (two dots or more: fully specified) and `resource.group` (the
 * part after the first dot is the group), as apimachinery's `ParseResourceArg` and
 * `ParseKindArg` read an argument.
 */
const parseArg = (arg: string): { name: string; group: string; full?: { version: string; group: string } } => {
  const dot = arg.indexOf('.');
  if (dot < 0) return { name: arg, group: '' };
  const rest = arg.slice(dot + 1);
  const second = rest.indexOf('.');
  return {
    name: arg.slice(0, dot),
    group: rest,
    ...(second >= 0 ? { full: { version: rest.slice(0, second), group: rest.slice(second + 1) } } : {}),
  };
};

/** The served resource types of one command run, in discovery (priority) order. */
const warned = new Set<string>();

/** A warning on stderr as kubectl prints one (`Warning: ...`), once per process as its deduplicating warning writer does. */
const warnOnce = (text: string): void => {
  if (warned.has(text)) return;
  warned.add(text);
  process.stderr.write(`Warning: ${text}\n`);
};

export class Resources {
  constructor(readonly all: readonly ResourceType[]) {}

  /** The first resource whose plural or singular is `name` (lowercased), in `group`/`version` when given. */
  private byResourceName(name: string, group: string | undefined, version?: string): ResourceType | undefined {
    const lower = name.toLowerCase();
    return this.all.find(
      (r) => (group === undefined || r.group === group) && (version === undefined || r.version === version) && (r.plural === lower || r.singular === lower),
    );
  }

  /**
   * kubectl's shortcut expander: a short name (`deploy`) stands for its resource unless a
   * resource has that plural or singular; with a group, the group must match exactly, then
   * as a prefix (`hpa.autoscal`).
   */
  private expandShortName(name: string, group: string): { name: string; group: string } {
    const lower = name.toLowerCase();
    if (this.all.some((r) => (group === '' || r.group === group) && (r.plural === lower || r.singular === lower))) return { name, group };
    const matches = this.all.filter((r) => (group === '' || r.group === group) && r.shortNames.includes(lower));
    const [exact] = matches;
    if (exact) {
      // kubectl's shortcut expander: the first match wins, the others (another group or resource) are warned about.
      for (const other of matches) {
        if (other.group !== exact.group || other.plural !== exact.plural) {
          warnOnce(`short name ${JSON.stringify(lower)} could also match lower priority resource ${other.group === '' ? other.plural : `${other.plural}.${other.group}`}`);
        }
      }
      return { name: exact.plural, group: exact.group };
    }
    if (group === '') return { name, group };
    const prefixed = this.all.find((r) => r.group.startsWith(group) && r.shortNames.includes(lower));
    return prefixed ? { name: prefixed.plural, group: prefixed.group } : { name, group };
  }

  /**
   * The resource type for one argument, as kubectl's resource builder maps it: a resource
   * (plural or singular, any case; short names expanded), optionally group-qualified
   * (`deployments.apps`) or fully qualified (`deployments.v1.apps`); failing that a kind
   * (`Deployment`, `Deployment.apps`). Earlier discovery entries win (the core group,
   * then the groups in the server's order, preferred versions first). Throws
   * {@link UnknownResourceTypeError}.
   */
  resolve(arg: string): ResourceType {
    const { name, group, full } = parseArg(arg);
    if (full) {
      const expanded = this.expandShortName(name, full.group);
      const found = this.byResourceName(expanded.name, expanded.group, full.version);
      if (found) return found;
    }
    const expanded = this.expandShortName(name, group);
    const found = this.byResourceName(expanded.name, expanded.group === '' && group === '' ? undefined : expanded.group);
    if (found) return found;
    if (full) {
      const kind = this.all.find((r) => r.kind === name && r.group === full.group && r.version === full.version);
      if (kind) return kind;
    }
    const kind = this.all.find((r) => r.kind === name && (group === '' || r.group === group));
    if (kind) return kind;
    throw new UnknownResourceTypeError(name);
  }

  /** The resources of a category (`all`), in discovery order, one per group and resource; undefined if no resource has it. */
  category(name: string): ResourceType[] | undefined {
    const members: ResourceType[] = [];
    for (const r of this.all) {
      if (!r.categories.includes(name)) continue;
      if (members.some((m) => m.group === r.group && m.plural === r.plural)) continue;
      members.push(this.resolve(r.group === '' ? r.plural : `${r.plural}.${r.group}`));
    }
    return members.length > 0 ? members : undefined;
  }

  /**
   * A comma-separated list of types (`pods,svc`, `all`, `all,nodes`), categories
   * expanded, duplicates dropped, in the order given.
   */
  expand(list: string): ResourceType[] {
    const types: ResourceType[] = [];
    for (const item of list.split(',')) {
      if (item === '') continue;
      for (const type of this.category(item) ?? [this.resolve(item)]) if (!types.includes(type)) types.push(type);
    }
    return types;
  }

  /** The resource serving `kind` in `apiVersion` (a manifest's); throws {@link NoKindMatchError}. */
  forApiVersionKind(apiVersion: string, kind: string): ResourceType {
    const { group, version } = splitApiVersion(apiVersion);
    const found = this.all.find((r) => r.group === group && r.version === version && r.kind === kind);
    if (!found) throw new NoKindMatchError(kind, apiVersion);
    return found;
  }

  /** The preferred resource of a group and kind (`apps`, `ReplicaSet`); throws {@link NoKindMatchError}. */
  forGroupKind(group: string, kind: string): ResourceType {
    const found = this.all.find((r) => r.group === group && r.kind === kind);
    if (!found) throw new NoKindMatchError(kind, group);
    return found;
  }
}

/** `v1` or `apps/v1`. */
export const apiVersionOf = (type: ResourceType): string => (type.group === '' ? type.version : `${type.group}/${type.version}`);

/** `pod` or `deployment.apps`: how kubectl names a type in its messages (the lowercased group kind). */
export const qualifiedKind = (type: ResourceType): string => (type.group === '' ? type.kind.toLowerCase() : `${type.kind.toLowerCase()}.${type.group}`);

/** `pods` or `deployments.apps`. */
export const qualifiedPlural = (type: ResourceType): string => (type.group === '' ? type.plural : `${type.plural}.${type.group}`);

const prefix = (type: ResourceType): string => (type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`);

/** The collection URL: one namespace's, or every namespace's when `namespace` is undefined. */
export const collectionPath = (type: ResourceType, namespace: string | undefined): string =>
  type.namespaced && namespace !== undefined
    ? `${prefix(type)}/namespaces/${encodeURIComponent(namespace)}/${type.plural}`
    : `${prefix(type)}/${type.plural}`;

/** The URL of one object, or of one of its subresources (`status`, `scale`, `log`). */
export const objectPath = (type: ResourceType, namespace: string | undefined, name: string, subresource?: string): string => {
  if (type.namespaced && namespace === undefined) throw new Error(`${type.kind} is namespaced: a namespace is required`);
  const base = `${collectionPath(type, type.namespaced ? namespace : undefined)}/${encodeURIComponent(name)}`;
  return subresource ? `${base}/${subresource}` : base;
};

/** `deployment.apps/web`: how kubectl prints an object's name with `-o name` and in apply/scale messages. */
export const typedName = (type: ResourceType, name: string): string => `${qualifiedKind(type)}/${name}`;

/** A `KIND/NAME` or `KIND NAME` reference, resolved. */
export interface ObjectReference {
  readonly type: ResourceType;
  readonly name: string;
}

/**
 * The types the history verbs resolve against without asking the server: the kinds the
 * current event schema stores, described by the kind registry (the history API keys
 * objects by those kinds). Every other verb resolves through discovery.
 */
let storedKinds: Resources | undefined;
export const storedKindResources = (): Resources => {
  storedKinds ??= new Resources(
    KINDS.flatMap((kind) => {
      const registered = storedKind(kind);
      if (!registered) return [];
      return [
        {
          group: registered.group,
          version: registered.versions[0] ?? 'v1',
          kind,
          plural: registered.plural,
          singular: registered.singular,
          namespaced: registered.scope === 'Namespaced',
          shortNames: registered.shortNames,
          categories: registered.categories,
          verbs: [],
          subresources: registered.subresources.map((s) => s.name),
        },
      ];
    }),
  );
  return storedKinds;
};

/** One argument resolved against `resources` (the stored kinds when not given: the history verbs' use). */
export const resolveResourceType = (name: string, resources: Resources = storedKindResources()): ResourceType => resources.resolve(name);

/**
 * Splits `KIND/NAME` (one argument) or `KIND NAME` (two) into the type as typed and the
 * name. Throws a usage error for anything else.
 */
export const splitObjectReference = (args: readonly string[], usage: string): { type: string; name: string } => {
  const [first, second, ...rest] = args;
  if (first === undefined || rest.length > 0) throw new Error(`expected ${usage}`);
  if (first.includes('/')) {
    if (second !== undefined) throw new Error(`there is no need to specify a resource type as a separate argument when passing arguments in resource/name form; expected ${usage}`);
    const slash = first.indexOf('/');
    const name = first.slice(slash + 1);
    if (!name) throw new Error(`expected ${usage}`);
    return { type: first.slice(0, slash), name };
  }
  if (second === undefined) throw new Error(`expected ${usage}`);
  return { type: first, name: second };
};

/**
 * Parses `KIND/NAME` (one argument) or `KIND NAME` (two) and resolves the type against
 * `resources` (the stored kinds when not given). Throws a usage error for anything else.
 */
export const parseObjectReference = (args: readonly string[], usage: string, resources: Resources = storedKindResources()): ObjectReference => {
  const { type, name } = splitObjectReference(args, usage);
  return { type: resources.resolve(type), name };
};

/**
 * The kind ref the log and the history API name objects of `type` by: the registered kind's
 * storage ref for a built-in kind (`Pod`, `Job.batch`; events.k8s.io's Event is stored as
 * `Event`), `Kind.group` for a custom resource (`CronTab.stable.example.com`).
 */
export const historyKindRef = (type: ResourceType): string => {
  const ref = kindRefOf(type.group, type.kind);
  return kindByRef(ref)?.storageRef ?? ref;
};

/** The key the history API uses for an object: `Kind/namespace/name`, `Kind//name` if cluster-scoped. */
export const historyKey = (type: ResourceType, namespace: string, name: string): string =>
  `${historyKindRef(type)}/${type.namespaced ? namespace : ''}/${name}`;

/** Fills in `kind` and `apiVersion` (list items may lack them). */
export const withTypeMeta = <T extends KubeObject>(type: ResourceType, object: T): T => ({
  ...object,
  kind: object.kind ?? type.kind,
  apiVersion: object.apiVersion ?? apiVersionOf(type),
});
