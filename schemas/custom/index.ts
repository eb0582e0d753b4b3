/**
 * Custom resources in the log: a CRD version's `openAPIV3Schema` as an Avro schema of its
 * objects' content, and the codec of that content. See `README.md` beside this file.
 */
export { canResolve, fingerprintOf, type Resolution } from './avro-type.ts';
export { createCustomObjectCodec, type CustomContent, type CustomObjectCodec } from './codec.ts';
export {
  CUSTOM_NAMESPACE,
  customContentSchema,
  EXPLICIT_NULL_RECORD,
  type CustomContentSchema,
  type CustomResourceVersion,
  type StructuralSchema,
} from './content-schema.ts';
export { MAX_EXACT_LONG, MIN_EXACT_LONG } from './convert.ts';
export { CustomDecodeError, CustomEncodeError, CustomSchemaError, UnmappableSchemaError } from './errors.ts';
export { avroNameOf, jsonNameOf } from './names.ts';
