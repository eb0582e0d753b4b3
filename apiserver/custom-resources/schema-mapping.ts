/**
 * Whether logplane can type a CRD's objects in the log: each version's schema must map to an
 * Avro schema (`schemas/custom/`). Checked when the CRD is admitted, so that no object write
 * meets a schema it cannot encode with.
 */
import { customContentSchema, UnmappableSchemaError, type StructuralSchema } from '../../schemas/custom/index.ts';
import type { CustomResourceDefinition } from '../../schemas/index.ts';
import { fieldErrors } from '../errors.ts';
import type { StatusCause } from '../status.ts';

/** A cause for each version whose schema does not map to Avro, naming the schema's field. */
export const unmappableSchemaCauses = (crd: CustomResourceDefinition): StatusCause[] =>
  crd.spec.versions.flatMap((version, index) => {
    const schema = version.schema?.openAPIV3Schema;
    if (schema === undefined || !crd.spec.group || !crd.spec.names?.kind || !version.name) return [];
    try {
      customContentSchema({ group: crd.spec.group, version: version.name, kind: crd.spec.names.kind, schema: schema as StructuralSchema });
      return [];
    } catch (error) {
      if (!(error instanceof UnmappableSchemaError)) throw error;
      return [fieldErrors.forbidden(`spec.versions[${index}].schema.${error.path}`, `logplane cannot store objects of this schema: ${error.detail}`)];
    }
  });
