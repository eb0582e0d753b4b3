/**
 * Errors thrown by `schemas/custom/`. Like every error of `schemas/`, none is retriable:
 * the same CRD schema, value or bytes fail the same way every time.
 */
import { SchemaError } from '../errors.ts';

/** Base of every error thrown by `schemas/custom/`. */
export class CustomSchemaError extends SchemaError {}

/**
 * A CRD's `openAPIV3Schema` (or its group, version or kind) cannot be mapped to Avro: it is
 * not a structural schema this module understands. `path` names the offending node.
 */
export class UnmappableSchemaError extends CustomSchemaError {
  /** Where, e.g. `openAPIV3Schema.properties[spec].properties[ports].items`. */
  readonly path: string;
  /** What is wrong there, e.g. `type: array without items`. */
  readonly detail: string;

  constructor(path: string, detail: string) {
    super(`cannot map the CRD schema to Avro: ${path}: ${detail}`);
    this.path = path;
    this.detail = detail;
  }
}

/** A custom object's content does not fit its Avro schema; `path` names the first value that does not. */
export class CustomEncodeError extends CustomSchemaError {
  /** The JSON path of the value in the content, e.g. `spec.ports[0].port`; empty for the content itself. */
  readonly path: string;
  /** What is wrong with it, e.g. `expected an integer, got "80"`. */
  readonly detail: string;

  constructor(path: string, detail: string) {
    super(`cannot encode custom object: ${path || '(root)'}: ${detail}`);
    this.path = path;
    this.detail = detail;
  }
}

/** Bytes are not a valid encoding of a custom object under the writer schema (or cannot be resolved to the reader). */
export class CustomDecodeError extends CustomSchemaError {
  /** The record name of the schema the bytes were read with, e.g. `logplane.custom.stable.example.com.v1.CronTab`. */
  readonly schemaName: string;

  constructor(schemaName: string, reason: string, options?: ErrorOptions) {
    super(`cannot decode custom object written with ${schemaName}: ${reason}`, options);
    this.schemaName = schemaName;
  }
}
