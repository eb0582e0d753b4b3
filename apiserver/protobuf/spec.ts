/** The shape of the protobuf message tables: a field number's JSON name, type and options. */

export type Scalar = 'string' | 'bytes' | 'int32' | 'int64' | 'bool' | 'time' | 'quantity' | 'intOrString' | 'opaque';

export interface FieldSpec {
  readonly name: string;
  /** A scalar kind or the name of a message in `MESSAGES`. */
  readonly type: Scalar | `message:${string}`;
  readonly repeated?: boolean;
  /** A `map<string, V>`; `type` is the value type. */
  readonly map?: boolean;
  /** The message's fields are merged into the parent (Go embedded struct, e.g. Probe's handler). */
  readonly inline?: boolean;
  /** Zero is a value here (a Go pointer field, or a field the schema requires). */
  readonly keepZero?: boolean;
}

export type Message = Readonly<Record<number, FieldSpec>>;

export const f = (name: string, type: FieldSpec['type'], options: Omit<FieldSpec, 'name' | 'type'> = {}): FieldSpec => ({ name, type, ...options });
export const m = (name: string): `message:${string}` => `message:${name}`;
export const list = { repeated: true } as const;
export const map = { map: true } as const;
export const zero = { keepZero: true } as const;

export const OBJECT = (spec: string, status: string): Message => ({
  1: f('metadata', m('ObjectMeta')),
  2: f('spec', m(spec)),
  3: f('status', m(status)),
});
