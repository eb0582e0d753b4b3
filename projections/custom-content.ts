/**
 * Reading custom objects' content with the schemas the log registered (`schemas/custom/`),
 * each schema compiled once per process: a replay reads thousands of objects per schema.
 */
import { createCustomObjectCodec, fingerprintOf, type CustomContentSchema, type CustomObjectCodec } from '../schemas/custom/index.ts';

/** Compiled codecs by fingerprint; a fingerprint names one schema text forever, so entries never go stale. */
const codecs = new Map<string, CustomObjectCodec>();

/** The CRC-64-AVRO fingerprint (16 hex digits) of a schema given as JSON text. Throws when it is not an Avro schema. */
export const fingerprintOfSchema = (schemaJson: string): string => fingerprintOf(JSON.parse(schemaJson) as CustomContentSchema);

/** The content `bytes` hold, read with the schema `schemaJson` whose fingerprint is `fingerprint`. Throws when they do not read. */
export const decodeCustomContent = (fingerprint: string, schemaJson: string, bytes: Buffer): Record<string, unknown> => {
  let codec = codecs.get(fingerprint);
  if (codec === undefined) {
    codec = createCustomObjectCodec(JSON.parse(schemaJson) as CustomContentSchema);
    codecs.set(fingerprint, codec);
  }
  return codec.decode(bytes);
};
