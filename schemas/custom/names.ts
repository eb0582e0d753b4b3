/**
 * The reversible mapping of JSON property names to Avro names.
 *
 * A property name that is a valid Avro name (`[A-Za-z_][A-Za-z0-9_]*`) and does not
 * contain `_x` is its own Avro name. Every other name is escaped whole: each character
 * outside `[A-Za-z0-9]` (the underscore included), and a leading digit, becomes `_x<hex>_`
 * with its code point in lower-case hex (`a-b` → `a_x2d_b`, `$ref` → `_x24_ref`,
 * `1st` → `_x31_st`, `a_x2d_b` → `a_x5f_x2d_x5f_b`); the empty name is `_x_`. An escaped
 * name always contains `_x`, a kept one never does, so no two names collide, and
 * `jsonNameOf` undoes `avroNameOf`.
 *
 * Names that contain `_x` followed by a letter that is not a hex digit (`_xitems`) are
 * never produced, so the module uses them as markers that cannot meet a property name.
 */

const AVRO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const KEPT_CHARACTER = /^[A-Za-z0-9]$/;
const DIGIT = /^[0-9]$/;
const ESCAPE_PREFIX = '_x';
const ESCAPED = /_x([0-9a-f]+)_/g;
/** The Avro name of the empty property name (`_x` followed by no hex digit, so never an escape). */
const EMPTY_NAME = '_x_';
/** The Avro primitive type names: avsc refuses a named type whose short name is one of them. */
const PRIMITIVE_TYPE_NAMES: ReadonlySet<string> = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);

/** The name segment of the record of an array's items (`….spec.hosts._xitems`). */
export const ITEMS_SEGMENT = '_xitems';
/** The name segment of the record of a map's values (`….spec.shards._xvalues`). */
export const VALUES_SEGMENT = '_xvalues';
/** The one field of a content record whose whole content is a JSON value (the root preserves unknown fields). */
export const WHOLE_CONTENT_FIELD = '_xjson';

/** Whether a string is a valid Avro (short) name. */
export const isAvroName = (name: string): boolean => AVRO_NAME.test(name);

/** The Avro field name of a JSON property name (itself when it is a valid Avro name without `_x`). */
export function avroNameOf(jsonName: string): string {
  if (jsonName === '') {
    return EMPTY_NAME;
  }
  if (AVRO_NAME.test(jsonName) && !jsonName.includes(ESCAPE_PREFIX)) {
    return jsonName;
  }
  return escapeName(jsonName, false);
}

/**
 * The name segment of a record named after a property, group label, version or kind: its
 * Avro name, except that an Avro primitive type name (`string`, `int` …), which avsc does not
 * accept as a record's short name, has its first character escaped (`string` → `_x73_tring`).
 * As injective as `avroNameOf`.
 */
export function recordSegmentOf(jsonName: string): string {
  return PRIMITIVE_TYPE_NAMES.has(jsonName) ? escapeName(jsonName, true) : avroNameOf(jsonName);
}

/** The JSON property name an Avro name produced by `avroNameOf` or `recordSegmentOf` stands for. */
export function jsonNameOf(avroName: string): string {
  if (avroName === EMPTY_NAME) {
    return '';
  }
  if (!avroName.includes(ESCAPE_PREFIX)) {
    return avroName;
  }
  return avroName.replace(ESCAPED, (_escape, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)));
}

function escapeName(name: string, escapeFirst: boolean): string {
  let escaped = '';
  let first = true;
  for (const character of name) {
    const kept = KEPT_CHARACTER.test(character) && !(first && (escapeFirst || DIGIT.test(character)));
    escaped += kept ? character : `${ESCAPE_PREFIX}${(character.codePointAt(0) as number).toString(16)}_`;
    first = false;
  }
  return escaped;
}
