/**
 * Operations on a JSON value typed by its merge schema, as structured-merge-diff's
 * `typed` package does them: the field set of a value (`ToFieldSet`), the merge of an
 * applied configuration into a live object (`Merge`: the configuration wins on every
 * leaf, associative lists merge by key, atomic lists and maps are replaced whole), the
 * comparison of two values (`Compare`: added, modified and removed fields) and the
 * removal of a set of items (`RemoveItems`).
 *
 * A value the schema does not fit (a string where a struct is declared) is treated as a
 * leaf: admission reports it afterwards, naming the field.
 */
import { sameJson } from '../../../schemas/canonical-json.ts';
import { isObject, own, setMember, type Json, type JsonObject } from '../json.ts';
import {
  emptySet,
  fieldElement,
  indexElement,
  insert,
  keyElement,
  pathString,
  valueElement,
  type FieldSet,
  type Path,
  type PathElement,
} from './fieldpath.ts';
import type { MergeType } from './schema.ts';

/** A value that does not fit the schema where it must (an undeclared field, an item without its key). */
export class TypedValueError extends Error {
  override readonly name = 'TypedValueError';
  constructor(
    readonly path: Path,
    readonly detail: string,
  ) {
    super(`${pathString(path)}: ${detail}`);
  }
}

const DEDUCED: MergeType = { type: 'deduced' };

/** How strictly values are read: `strict` rejects undeclared fields and bad items (an applied configuration). */
export interface TypedOptions {
  readonly strict: boolean;
}

const LENIENT: TypedOptions = { strict: false };

const isScalar = (value: Json): boolean => !isObject(value) && !Array.isArray(value);

/** The type of field `name` of a struct or map, or undefined when the struct does not declare it. */
const childType = (type: MergeType, name: string): MergeType | undefined => {
  switch (type.type) {
    case 'struct':
      return type.field(name) ?? type.extra;
    case 'map':
      return type.values();
    case 'deduced':
      return DEDUCED;
    default:
      return undefined;
  }
};

/** Whether `name` is a declared field of a struct (SMD's named fields, not map entries). */
const isNamedField = (type: MergeType, name: string): boolean => type.type === 'struct' && type.field(name) !== undefined;

/** The form a value takes under a type: map-like (granular), list-like (by items), or a leaf. */
type Shape = { type: 'map'; atomic: boolean } | { type: 'list' } | { type: 'leaf' };

const shapeOf = (type: MergeType, value: Json): Shape => {
  switch (type.type) {
    case 'struct':
    case 'map':
      return isObject(value) || value === undefined || value === null ? { type: 'map', atomic: type.atomic } : { type: 'leaf' };
    case 'list':
      return (Array.isArray(value) || value === undefined || value === null) && type.relationship !== 'atomic' ? { type: 'list' } : { type: 'leaf' };
    case 'deduced':
      return isObject(value) ? { type: 'map', atomic: false } : { type: 'leaf' };
    case 'scalar':
      return { type: 'leaf' };
  }
};

/** The path element of a list item: by its key fields, its value (sets) or its position. */
const itemElement = (type: MergeType & { type: 'list' }, item: Json, index: number, path: Path, options: TypedOptions): PathElement | undefined => {
  if (type.relationship === 'map' && type.keys.length > 0) {
    if (!isObject(item)) {
      if (options.strict) throw new TypedValueError(path, `element ${index}: associative list with keys has an element that is not a map type`);
      return undefined;
    }
    const fields: [string, Json][] = [];
    for (const key of type.keys) {
      const value = own(item, key) ?? type.keyDefaults[key];
      if (value === undefined) {
        if (options.strict) {
          throw new TypedValueError(path, `element ${index}: associative list with keys has an element that omits key field ${JSON.stringify(key)} (and doesn't have default value)`);
        }
        return undefined;
      }
      fields.push([key, value]);
    }
    return keyElement(fields);
  }
  if (type.relationship === 'set' || type.relationship === 'map') {
    if (!isScalar(item)) {
      if (options.strict) throw new TypedValueError(path, `element ${index}: associative list without keys has an element that's a map type`);
      return undefined;
    }
    return valueElement(item);
  }
  return indexElement(index);
};

/** The items of a list by element, first occurrence wins; duplicates are an error under `strict`. */
const indexItems = (type: MergeType & { type: 'list' }, list: readonly Json[], path: Path, options: TypedOptions): { order: PathElement[]; items: Map<PathElement, Json> } => {
  const order: PathElement[] = [];
  const items = new Map<PathElement, Json>();
  list.forEach((item, index) => {
    const element = itemElement(type, item, index, path, options) ?? indexElement(index);
    if (items.has(element)) {
      if (options.strict) throw new TypedValueError(path, `duplicate entries for key ${element.slice(2)}`);
      return;
    }
    items.set(element, item);
    order.push(element);
  });
  return { order, items };
};

/** SMD's `ToFieldSet`: every leaf, every list item, every map entry and every empty or null field. */
export const toFieldSet = (type: MergeType, value: Json, options: TypedOptions = LENIENT): FieldSet => {
  const set = emptySet();
  const visit = (t: MergeType, v: Json, path: Path): void => {
    const shape = shapeOf(t, v);
    if (shape.type === 'leaf' || (shape.type === 'map' && shape.atomic)) {
      insert(set, path);
      return;
    }
    if (shape.type === 'list') {
      if (!Array.isArray(v) || t.type !== 'list') return;
      const { order, items } = indexItems(t, v, path, options);
      for (const element of order) {
        const itemPath = [...path, element];
        visit(t.items(), items.get(element), itemPath);
        insert(set, itemPath);
      }
      return;
    }
    if (!isObject(v)) return;
    for (const [key, child] of Object.entries(v)) {
      const fieldType = childType(t, key);
      const childPath = [...path, fieldElement(key)];
      if (!fieldType) {
        if (options.strict) throw new TypedValueError(childPath, 'field not declared in schema');
        insert(set, childPath);
        continue;
      }
      visit(fieldType, child, childPath);
      if (child === null || (isObject(child) && Object.keys(child).length === 0) || !isNamedField(t, key)) insert(set, childPath);
    }
  };
  visit(type, value, []);
  return set;
};

/** What `zip` tells its caller about each node: a leaf compared whole, or a container after its items. */
interface ZipHooks {
  leaf?(path: Path, lhs: Json, rhs: Json): void;
  container?(path: Path, lhs: Json, rhs: Json): void;
}

const isEmptyContainer = (value: Json): boolean =>
  value === undefined || value === null || (Array.isArray(value) && value.length === 0) || (isObject(value) && Object.keys(value).length === 0);

/**
 * Walks two values of one type together (either may be absent: undefined) and returns
 * their merge, the right side winning on leaves. The order of a merged associative list
 * is SMD's: the left side's order, with the right side's items placed where its order
 * requires.
 */
const zip = (type: MergeType, lhs: Json, rhs: Json, path: Path, hooks: ZipHooks, options: TypedOptions): Json => {
  const shape = shapeOf(type, rhs !== undefined && rhs !== null ? rhs : lhs);
  const leaf = shape.type === 'leaf' || (shape.type === 'map' && shape.atomic) || (isEmptyContainer(lhs) && isEmptyContainer(rhs));
  if (leaf || (shape.type === 'map' && !(isObject(lhs) || lhs === undefined)) || (shape.type === 'list' && !(Array.isArray(lhs) || lhs === undefined))) {
    hooks.leaf?.(path, lhs, rhs);
    return rhs !== undefined ? rhs : lhs;
  }
  let out: Json;
  if (shape.type === 'list' && type.type === 'list') {
    out = zipLists(type, (lhs ?? []) as Json[], (rhs ?? []) as Json[], path, hooks, options);
  } else {
    const left = (lhs ?? {}) as JsonObject;
    const right = (rhs ?? {}) as JsonObject;
    const merged: JsonObject = {};
    for (const key of new Set([...Object.keys(left), ...Object.keys(right)])) {
      const childPath = [...path, fieldElement(key)];
      const fieldType = childType(type, key);
      if (!fieldType && options.strict && Object.hasOwn(right, key)) throw new TypedValueError(childPath, 'field not declared in schema');
      const value = zip(fieldType ?? DEDUCED, own(left, key), own(right, key), childPath, hooks, options);
      if (value !== undefined) setMember(merged, key, value);
    }
    out = merged;
  }
  hooks.container?.(path, lhs, rhs);
  return out;
};

const zipLists = (type: MergeType & { type: 'list' }, lhs: readonly Json[], rhs: readonly Json[], path: Path, hooks: ZipHooks, options: TypedOptions): Json[] => {
  const left = indexItems(type, lhs, path, LENIENT);
  const right = indexItems(type, rhs, path, options);
  const shared = right.order.filter((element) => left.items.has(element));
  let sharedIndex = 0;
  const out: Json[] = [];
  const merged = new Set<PathElement>();
  const mergeItem = (element: PathElement, l: Json, r: Json): void => {
    const value = zip(type.items(), l, r, [...path, element], hooks, options);
    if (value !== undefined) out.push(value);
  };
  let l = 0;
  let r = 0;
  while (l < left.order.length || r < right.order.length) {
    if (l < left.order.length && r < right.order.length) {
      const element = left.order[l]!;
      if (element === right.order[r]) {
        merged.add(element);
        mergeItem(element, left.items.get(element), right.items.get(element));
        l++;
        r++;
        sharedIndex++;
        continue;
      }
      if (right.items.has(element) && shared[sharedIndex] !== undefined && shared[sharedIndex] !== element) {
        l++;
        continue;
      }
    }
    if (l < left.order.length) {
      const element = left.order[l]!;
      if (!right.items.has(element)) {
        mergeItem(element, left.items.get(element), undefined);
        l++;
        continue;
      }
      if (merged.has(element)) {
        l++;
        continue;
      }
    }
    if (r < right.order.length) {
      const element = right.order[r]!;
      merged.add(element);
      mergeItem(element, left.items.get(element), right.items.get(element));
      r++;
      if (shared[sharedIndex] === element) sharedIndex++;
    }
  }
  return out;
};

/** SMD's `Merge`: `config` merged into `live`, the configuration winning on every leaf. */
export const mergeValues = (type: MergeType, live: Json, config: Json, options: TypedOptions = LENIENT): Json =>
  zip(type, live, config, [], {}, options);

/** The fields one value changed relative to another. */
export interface Comparison {
  readonly added: FieldSet;
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

/** SMD's `Compare` of `lhs` (before) and `rhs` (after). */
export const compareValues = (type: MergeType, lhs: Json, rhs: Json): Comparison => {
  const comparison: Comparison = { added: emptySet(), modified: emptySet(), removed: emptySet() };
  zip(
    type,
    lhs,
    rhs,
    [],
    {
      leaf: (path, l, r) => {
        if (l === undefined) insert(comparison.added, path);
        else if (r === undefined) insert(comparison.removed, path);
        else if (l !== r && (typeof l !== 'object' || l === null || typeof r !== 'object' || r === null || !sameJson(l, r))) insert(comparison.modified, path);
      },
      container: (path, l, r) => {
        if (l === undefined) insert(comparison.added, path);
        else if (r === undefined) insert(comparison.removed, path);
      },
    },
    LENIENT,
  );
  return comparison;
};

/** SMD's `RemoveItems`: `value` without the members of `set` (and everything below them). */
export const removeItems = (type: MergeType, value: Json, set: FieldSet): Json => {
  const shape = shapeOf(type, value);
  if (shape.type === 'leaf' || (shape.type === 'map' && shape.atomic)) return value;
  if (shape.type === 'list' && type.type === 'list') {
    if (!Array.isArray(value)) return value;
    const out: Json[] = [];
    value.forEach((item, index) => {
      const element = itemElement(type, item, index, [], LENIENT) ?? indexElement(index);
      if (set.members.has(element)) return;
      const below = set.children.get(element);
      out.push(below ? removeItems(type.items(), item, below) : item);
    });
    return out;
  }
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    const element = fieldElement(key);
    if (set.members.has(element)) continue;
    const below = set.children.get(element);
    setMember(out, key, below ? removeItems(childType(type, key) ?? DEDUCED, child, below) : child);
  }
  return out;
};

/** SMD's `EnsureNamedFieldsAreMembers`: a struct field with members below it becomes a member too. */
export const ensureNamedFieldsAreMembers = (type: MergeType, set: FieldSet): FieldSet => {
  const out: FieldSet = { members: new Set(set.members), children: new Map() };
  for (const [element, child] of set.children) {
    const name = element.startsWith('f:') ? element.slice(2) : undefined;
    if (name !== undefined && isNamedField(type, name)) out.members.add(element);
    const below = name !== undefined ? childType(type, name) : type.type === 'list' ? type.items() : undefined;
    out.children.set(element, below ? ensureNamedFieldsAreMembers(below, child) : child);
  }
  return out;
};
