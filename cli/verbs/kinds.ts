/**
 * The resource types the CLI knows: how a user may name them (`po`, `pod`, `pods`,
 * `Pod`, `deployments.apps`), their REST paths and how kubectl prints their names
 * (`deployment.apps/web`).
 */
import type { Kind, KubeObject } from '../../schemas/index.ts';

/** One resource type. */
export interface ResourceType {
  readonly kind: Kind;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly group: '' | 'apps';
  readonly version: 'v1';
  readonly namespaced: boolean;
}

/** Every resource type logplane serves. */
export const RESOURCE_TYPES: readonly ResourceType[] = [
  { kind: 'Pod', plural: 'pods', singular: 'pod', shortNames: ['po'], group: '', version: 'v1', namespaced: true },
  { kind: 'Service', plural: 'services', singular: 'service', shortNames: ['svc'], group: '', version: 'v1', namespaced: true },
  { kind: 'Endpoints', plural: 'endpoints', singular: 'endpoints', shortNames: ['ep'], group: '', version: 'v1', namespaced: true },
  { kind: 'Deployment', plural: 'deployments', singular: 'deployment', shortNames: ['deploy'], group: 'apps', version: 'v1', namespaced: true },
  { kind: 'ReplicaSet', plural: 'replicasets', singular: 'replicaset', shortNames: ['rs'], group: 'apps', version: 'v1', namespaced: true },
  { kind: 'Node', plural: 'nodes', singular: 'node', shortNames: ['no'], group: '', version: 'v1', namespaced: false },
  { kind: 'Namespace', plural: 'namespaces', singular: 'namespace', shortNames: ['ns'], group: '', version: 'v1', namespaced: false },
];

/** What `get all` lists, in kubectl's order. */
export const CATEGORY_ALL: readonly Kind[] = ['Pod', 'Service', 'Deployment', 'ReplicaSet'];

/** The user named a resource type logplane does not serve. */
export class UnknownResourceTypeError extends Error {
  override readonly name = 'UnknownResourceTypeError';
  constructor(readonly requested: string) {
    super(`the server doesn't have a resource type "${requested}"`);
  }
}

/**
 * The resource type for a name as kubectl accepts it: plural, singular, short name or
 * kind, any case, optionally qualified with its group (`deployments.apps`, `deploy.apps/v1`
 * is not accepted). Throws {@link UnknownResourceTypeError}.
 */
export const resolveResourceType = (name: string): ResourceType => {
  const lower = name.toLowerCase();
  const dot = lower.indexOf('.');
  const bare = dot >= 0 ? lower.slice(0, dot) : lower;
  const group = dot >= 0 ? lower.slice(dot + 1) : undefined;
  const found = RESOURCE_TYPES.find(
    (r) =>
      (group === undefined || group === r.group || (group === 'v1' && r.group === '')) &&
      (r.plural === bare || r.singular === bare || r.kind.toLowerCase() === bare || r.shortNames.includes(bare)),
  );
  if (!found) throw new UnknownResourceTypeError(name);
  return found;
};

/** The resource type of a kind. */
export const resourceTypeOfKind = (kind: string): ResourceType | undefined => RESOURCE_TYPES.find((r) => r.kind === kind);

/** `v1` or `apps/v1`. */
export const apiVersionOf = (type: ResourceType): string => (type.group === '' ? type.version : `${type.group}/${type.version}`);

/** `pod` or `deployment.apps`: how kubectl names a resource type in its messages. */
export const qualifiedSingular = (type: ResourceType): string => (type.group === '' ? type.singular : `${type.singular}.${type.group}`);

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
export const typedName = (type: ResourceType, name: string): string => `${qualifiedSingular(type)}/${name}`;

/** A `KIND/NAME` or `KIND NAME…` reference, resolved. */
export interface ObjectReference {
  readonly type: ResourceType;
  readonly name: string;
}

/**
 * Parses `KIND/NAME` (one argument) or `KIND NAME` (two). Throws a usage error for
 * anything else.
 */
export const parseObjectReference = (args: readonly string[], usage: string): ObjectReference => {
  const [first, second, ...rest] = args;
  if (first === undefined || rest.length > 0) throw new Error(`expected ${usage}`);
  if (first.includes('/')) {
    if (second !== undefined) throw new Error(`there is no need to specify a resource type as a separate argument when passing arguments in resource/name form; expected ${usage}`);
    const slash = first.indexOf('/');
    const name = first.slice(slash + 1);
    if (!name) throw new Error(`expected ${usage}`);
    return { type: resolveResourceType(first.slice(0, slash)), name };
  }
  if (second === undefined) throw new Error(`expected ${usage}`);
  return { type: resolveResourceType(first), name: second };
};

/** The key the history API uses for an object: `Kind/namespace/name`, `Kind//name` if cluster-scoped. */
export const historyKey = (type: ResourceType, namespace: string, name: string): string =>
  `${type.kind}/${type.namespaced ? namespace : ''}/${name}`;

/** Fills in `kind` and `apiVersion` (list items may lack them). */
export const withTypeMeta = <T extends KubeObject>(type: ResourceType, object: T): T => ({
  ...object,
  kind: object.kind ?? type.kind,
  apiVersion: object.apiVersion ?? apiVersionOf(type),
});
