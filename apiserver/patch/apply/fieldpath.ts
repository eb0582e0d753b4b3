/**
 * Field paths and field sets as structured-merge-diff (`sigs.k8s.io/structured-merge-diff/v4/fieldpath`)
 * has them, and their `FieldsV1` form (`{"f:spec":{"f:replicas":{}}}`).
 *
 * A path element is kept in its FieldsV1 spelling, which is also its identity:
 * `f:<field>`, `k:<JSON object of the key fields, sorted>`, `v:<JSON value>`, `i:<index>`.
 * A set is a trie: `members` are the paths that end at this node, `children` the sets
 * below each element.
 */
import { canonicalJson } from '../../../schemas/canonical-json.ts';
import { isObject, type Json } from '../json.ts';

/** One path element in its FieldsV1 spelling (`f:name`, `k:{"name":"x"}`, `v:"a"`, `i:0`). */
export type PathElement = string;
/** A path from the root of an object. */
export type Path = readonly PathElement[];

/** A set of field paths. Every child set holds at least one member (empty children are never kept). */
export interface FieldSet {
  readonly members: Set<PathElement>;
  readonly children: Map<PathElement, FieldSet>;
}

/** The element of a struct or map field. */
export const fieldElement = (name: string): PathElement => `f:${name}`;
/** The element of an associative-list item by its key fields (`[name, value]` pairs). */
export const keyElement = (fields: readonly (readonly [string, Json])[]): PathElement =>
  `k:${canonicalJson(Object.fromEntries(fields))}`;
/** The element of a set item (a scalar list item). */
export const valueElement = (value: Json): PathElement => `v:${canonicalJson(value)}`;
/** The element of an item of a list identified by position. */
export const indexElement = (index: number): PathElement => `i:${index}`;

export const emptySet = (): FieldSet => ({ members: new Set(), children: new Map() });

/** Adds `path` to `set` (in place). The empty path is not a member of any set. */
export const insert = (set: FieldSet, path: Path): void => {
  if (path.length === 0) return;
  let node = set;
  for (let i = 0; i < path.length - 1; i++) {
    const element = path[i]!;
    let child = node.children.get(element);
    if (!child) {
      child = emptySet();
      node.children.set(element, child);
    }
    node = child;
  }
  node.members.add(path[path.length - 1]!);
};

/** Whether the set has no member at any depth (children are never empty, so this looks at one level). */
export const isEmpty = (set: FieldSet): boolean => set.members.size === 0 && set.children.size === 0;

/** The set below `element`, or an empty one. */
const withPrefix = (set: FieldSet, element: PathElement): FieldSet => set.children.get(element) ?? emptySet();

const build = (members: Iterable<PathElement>, children: Iterable<[PathElement, FieldSet]>): FieldSet => {
  const out: FieldSet = { members: new Set(members), children: new Map() };
  for (const [element, child] of children) if (!isEmpty(child)) out.children.set(element, child);
  return out;
};

/** a ∪ b. */
export const union = (a: FieldSet, b: FieldSet): FieldSet => {
  const elements = new Set([...a.children.keys(), ...b.children.keys()]);
  return build(
    [...a.members, ...b.members],
    [...elements].map((e): [PathElement, FieldSet] => [e, union(withPrefix(a, e), withPrefix(b, e))]),
  );
};

/** a ∩ b (members in both). */
export const intersection = (a: FieldSet, b: FieldSet): FieldSet =>
  build(
    [...a.members].filter((m) => b.members.has(m)),
    [...a.children.keys()].filter((e) => b.children.has(e)).map((e): [PathElement, FieldSet] => [e, intersection(a.children.get(e)!, b.children.get(e)!)]),
  );

/** a − b (members of a not in b; a member of b does not remove a's members below it). */
export const difference = (a: FieldSet, b: FieldSet): FieldSet =>
  build(
    [...a.members].filter((m) => !b.members.has(m)),
    [...a.children].map(([e, child]): [PathElement, FieldSet] => [e, b.children.has(e) ? difference(child, b.children.get(e)!) : child]),
  );

/** a − b, where a member of b also removes everything of a below it (SMD's RecursiveDifference). */
export const recursiveDifference = (a: FieldSet, b: FieldSet): FieldSet =>
  build(
    [...a.members].filter((m) => !b.members.has(m)),
    [...a.children]
      .filter(([e]) => !b.members.has(e))
      .map(([e, child]): [PathElement, FieldSet] => [e, b.children.has(e) ? recursiveDifference(child, b.children.get(e)!) : child]),
  );

/** Every member path, in FieldsV1 order. */
export const leaves = (set: FieldSet, prefix: Path = []): Path[] => {
  const out: Path[] = [];
  for (const element of sortedElements(set)) {
    if (set.members.has(element)) out.push([...prefix, element]);
    const child = set.children.get(element);
    if (child) out.push(...leaves(child, [...prefix, element]));
  }
  return out;
};

/** Sets from paths. */
export const setOf = (...paths: Path[]): FieldSet => {
  const set = emptySet();
  for (const path of paths) insert(set, path);
  return set;
};

/** Whether two sets hold the same members. */
export const sameSet = (a: FieldSet, b: FieldSet): boolean => isEmpty(difference(a, b)) && isEmpty(difference(b, a));

const RANK: Readonly<Record<string, number>> = { f: 0, k: 1, v: 2, i: 3 };
/** SMD's PathElement order: field names, then keys, then values, then indexes. */
export const compareElements = (a: PathElement, b: PathElement): number => {
  const rank = (RANK[a[0]!] ?? 4) - (RANK[b[0]!] ?? 4);
  if (rank !== 0) return rank;
  if (a[0] === 'i') return Number(a.slice(2)) - Number(b.slice(2));
  return a < b ? -1 : a > b ? 1 : 0;
};

const sortedElements = (set: FieldSet): PathElement[] => [...new Set([...set.members, ...set.children.keys()])].sort(compareElements);

/** The FieldsV1 JSON of a set: every element a member, `".": {}` marking a member that also has children. */
export const toFieldsV1 = (set: FieldSet): Record<string, Json> => {
  const out: Record<string, Json> = {};
  for (const element of sortedElements(set)) {
    const child = set.children.get(element);
    const value: Record<string, Json> = child ? toFieldsV1(child) : {};
    const body = set.members.has(element) && child ? { '.': {}, ...value } : value;
    Object.defineProperty(out, element, { value: body, writable: true, enumerable: true, configurable: true });
  }
  return out;
};

/** A set from its FieldsV1 JSON; throws on anything else. */
export const fromFieldsV1 = (json: Json): FieldSet => {
  if (!isObject(json)) throw new Error('FieldsV1 must be a JSON object');
  const set = emptySet();
  for (const [element, value] of Object.entries(json)) {
    if (element === '.') continue;
    if (element[1] !== ':' || !'fkvi'.includes(element[0]!)) throw new Error(`unknown FieldsV1 path element ${JSON.stringify(element)}`);
    if (!isObject(value)) throw new Error(`FieldsV1 member ${JSON.stringify(element)} must be an object`);
    const entries = Object.keys(value);
    if (entries.length === 0 || Object.hasOwn(value, '.')) set.members.add(element);
    const child = fromFieldsV1(value);
    if (!isEmpty(child)) set.children.set(element, child);
  }
  return set;
};

/** A path as SMD prints it in conflicts: `.spec.containers[name="app"].image`, `[=x]`, `[0]`. */
export const pathString = (path: Path): string =>
  path
    .map((element) => {
      const body = element.slice(2);
      switch (element[0]) {
        case 'f':
          return `.${body}`;
        case 'k': {
          const fields = JSON.parse(body) as Record<string, Json>;
          return `[${Object.entries(fields)
            .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
            .join(',')}]`;
        }
        case 'v':
          return `[=${body}]`;
        default:
          return `[${body}]`;
      }
    })
    .join('');
