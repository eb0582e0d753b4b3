import { describe, expect, it } from 'vitest';
import { databaseCrd } from './crd-fixture.ts';
import { crdWarnings, defaultCustomResourceDefinition, validateCustomResourceDefinition } from './crd-validation.ts';

type Crd = Record<string, any>;

const problems = (crd: unknown, old?: unknown): string[] => {
  const causes: any[] = [];
  validateCustomResourceDefinition(causes, crd, old);
  return causes.map((c) => `${c.field}: ${c.message}`);
};

const changed = (change: (crd: Crd) => void): Crd => {
  const crd = databaseCrd();
  change(crd);
  return crd;
};

const V1 = 'spec.versions[1]';
const S1 = `${V1}.schema.openAPIV3Schema`;
const v1Schema = (crd: Crd): Crd => crd.spec.versions[1].schema.openAPIV3Schema;
const v1Spec = (crd: Crd): Crd => v1Schema(crd).properties.spec;

describe('validateCustomResourceDefinition: an operator-style CRD', () => {
  it('accepts the CRD (two versions, status and scale, printer columns, list maps and sets, int-or-string, embedded resource)', () => {
    expect(problems(databaseCrd())).toEqual([]);
  });

  it('accepts a CRD without names.singular and names.listKind (kube defaults them from the kind)', () => {
    expect(problems(changed((crd) => { delete crd.spec.names.singular; delete crd.spec.names.listKind; }))).toEqual([]);
    expect(defaultCustomResourceDefinition(changed((crd) => { delete crd.spec.names.singular; delete crd.spec.names.listKind; })).spec.names).toMatchObject({ singular: 'databasecluster', listKind: 'DatabaseClusterList' });
  });
});

describe('validateCustomResourceDefinition: metadata, group, names, scope', () => {
  it.each<[string, (crd: Crd) => void, string[]]>([
    ['name not <plural>.<group>', (crd) => { crd.metadata.name = 'databases.db.example.com'; }, ['metadata.name: Invalid value: "databases.db.example.com": must be spec.names.plural+"."+spec.group']],
    ['no name', (crd) => { delete crd.metadata.name; }, ['metadata.name: Required value: name or generateName is required']],
    ['group missing', (crd) => { delete crd.spec.group; crd.metadata.name = 'databaseclusters.'; }, [
      `metadata.name: Invalid value: "databaseclusters.": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      'spec.group: Required value',
    ]],
    ['group without a dot', (crd) => { crd.spec.group = 'db'; crd.metadata.name = 'databaseclusters.db'; }, ['spec.group: Invalid value: "db": should be a domain with at least one dot']],
    ['group not a DNS subdomain', (crd) => { crd.spec.group = 'DB.example.com'; crd.metadata.name = 'databaseclusters.DB.example.com'; }, [
      `metadata.name: Invalid value: "databaseclusters.DB.example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      `spec.group: Invalid value: "DB.example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ]],
    ['scope missing', (crd) => { delete crd.spec.scope; }, ['spec.scope: Required value']],
    ['scope unknown', (crd) => { crd.spec.scope = 'Global'; }, ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"']],
    ['plural missing', (crd) => { delete crd.spec.names.plural; crd.metadata.name = '.db.example.com'; }, [
      `metadata.name: Invalid value: ".db.example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      'spec.names.plural: Required value',
    ]],
    ['kind missing (singular and listKind then have no default)', (crd) => { delete crd.spec.names.kind; delete crd.spec.names.singular; delete crd.spec.names.listKind; }, [
      'spec.names.singular: Required value', 'spec.names.kind: Required value', 'spec.names.listKind: Required value',
    ]],
    ['plural upper case', (crd) => { crd.spec.names.plural = 'DatabaseClusters'; crd.metadata.name = 'DatabaseClusters.db.example.com'; }, [
      `metadata.name: Invalid value: "DatabaseClusters.db.example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      `spec.names.plural: Invalid value: "DatabaseClusters": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ]],
    ['singular with a dot', (crd) => { crd.spec.names.singular = 'database.cluster'; }, [
      `spec.names.singular: Invalid value: "database.cluster": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ]],
    ['kind starting with a digit', (crd) => { crd.spec.names.kind = '1Database'; }, [
      `spec.names.kind: Invalid value: "1Database": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ]],
    ['listKind with an underscore', (crd) => { crd.spec.names.listKind = 'Database_List'; }, [
      `spec.names.listKind: Invalid value: "Database_List": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ]],
    ['listKind equal to kind', (crd) => { crd.spec.names.listKind = 'DatabaseCluster'; }, ['spec.names.listKind: Invalid value: "DatabaseCluster": kind and listKind may not be the same']],
    ['a short name upper case', (crd) => { crd.spec.names.shortNames = ['dbc', 'DBC']; }, [
      `spec.names.shortNames[1]: Invalid value: "DBC": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ]],
    ['a category with a slash', (crd) => { crd.spec.names.categories = ['db/all']; }, [
      `spec.names.categories[0]: Invalid value: "db/all": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ]],
    ['status.acceptedNames are checked too', (crd) => { crd.status = { acceptedNames: { plural: 'Bad', kind: 'X', listKind: 'X' } }; }, [
      `status.acceptedNames.plural: Invalid value: "Bad": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
      'status.acceptedNames.listKind: Invalid value: "X": kind and listKind may not be the same',
    ]],
    ['a protected group without approval', (crd) => { crd.spec.group = 'db.k8s.io'; crd.metadata.name = 'databaseclusters.db.k8s.io'; }, [
      'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
    ]],
    ['a protected group with an invalid approval', (crd) => { crd.spec.group = 'db.k8s.io'; crd.metadata.name = 'databaseclusters.db.k8s.io'; crd.metadata.annotations = { 'api-approved.kubernetes.io': 'yes' }; }, [
      'metadata.annotations[api-approved.kubernetes.io]: Invalid value: "yes": protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111',
    ]],
  ])('%s', (_case, change, expected) => {
    expect(problems(changed(change))).toEqual(expected);
  });
});

describe('validateCustomResourceDefinition: versions, subresources, printer columns, conversion', () => {
  it.each<[string, (crd: Crd) => void, string[]]>([
    ['no versions', (crd) => { crd.spec.versions = []; }, ['spec.versions: Invalid value: []: must have exactly one version marked as storage version']],
    ['two storage versions', (crd) => { crd.spec.versions[0].storage = true; }, [expect.stringMatching(/^spec\.versions: Invalid value: \[.*\]: must have exactly one version marked as storage version$/) as unknown as string]],
    ['duplicate version names', (crd) => { crd.spec.versions[0].name = 'v1'; }, [expect.stringMatching(/^spec\.versions: Invalid value: .*: must contain unique version names$/) as unknown as string]],
    ['version name not a DNS-1035 label', (crd) => { crd.spec.versions[0].name = '1beta'; }, [
      `spec.versions[0].name: Invalid value: "1beta": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ]],
    ['a version without a schema', (crd) => { delete crd.spec.versions[0].schema; }, ['spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required']],
    ['deprecationWarning on a version not deprecated', (crd) => { crd.spec.versions[0].deprecated = false; }, [
      'spec.versions[0].deprecationWarning: Invalid value: "db.example.com/v1beta1 DatabaseCluster is deprecated; use db.example.com/v1": can only be set for deprecated versions',
    ]],
    ['deprecationWarning with a control character', (crd) => { crd.spec.versions[0].deprecationWarning = 'old\u0007'; }, [
      'spec.versions[0].deprecationWarning: Invalid value: "old\\u0007": must only contain printable UTF-8 characters; non-printable character found at index 3',
    ]],
    ['scale without specReplicasPath', (crd) => { delete crd.spec.versions[1].subresources.scale.specReplicasPath; }, [`${V1}.subresources.scale.specReplicasPath: Required value`]],
    ['specReplicasPath outside .spec', (crd) => { crd.spec.versions[1].subresources.scale.specReplicasPath = '.status.replicas'; }, [`${V1}.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec`]],
    ['statusReplicasPath not a json path', (crd) => { crd.spec.versions[1].subresources.scale.statusReplicasPath = 'status.readyReplicas'; }, [`${V1}.subresources.scale.statusReplicasPath: Invalid value: "status.readyReplicas": must be a simple json path starting with .`]],
    ['statusReplicasPath outside .status', (crd) => { crd.spec.versions[1].subresources.scale.statusReplicasPath = '.spec.replicas'; }, [`${V1}.subresources.scale.statusReplicasPath: Invalid value: ".spec.replicas": should be a json path under .status`]],
    ['labelSelectorPath outside .spec and .status', (crd) => { crd.spec.versions[1].subresources.scale.labelSelectorPath = '.metadata.labels'; }, [`${V1}.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either .spec or .status`]],
    ['printer column without a name', (crd) => { delete crd.spec.versions[1].additionalPrinterColumns[0].name; }, [`${V1}.additionalPrinterColumns[0].name: Required value`]],
    ['printer column without a type', (crd) => { delete crd.spec.versions[1].additionalPrinterColumns[0].type; }, [`${V1}.additionalPrinterColumns[0].type: Required value: must be one of boolean,date,integer,number,string`]],
    ['printer column of type object', (crd) => { crd.spec.versions[1].additionalPrinterColumns[0].type = 'object'; }, [`${V1}.additionalPrinterColumns[0].type: Invalid value: "object": must be one of boolean,date,integer,number,string`]],
    ['printer column of an unknown format', (crd) => { crd.spec.versions[1].additionalPrinterColumns[1].format = 'uint8'; }, [`${V1}.additionalPrinterColumns[1].format: Invalid value: "uint8": must be one of byte,date,date-time,double,float,int32,int64,password`]],
    ['printer column without a jsonPath', (crd) => { delete crd.spec.versions[1].additionalPrinterColumns[0].jsonPath; }, [`${V1}.additionalPrinterColumns[0].JSONPath: Required value`]],
    ['printer column jsonPath not starting with a dot', (crd) => { crd.spec.versions[1].additionalPrinterColumns[0].jsonPath = 'spec.engine'; }, [`${V1}.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.engine": must be a simple json path starting with .`]],
    ['webhook conversion', (crd) => { crd.spec.conversion = { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://conv.example.com' }, conversionReviewVersions: ['v1'] } }; }, [
      'spec.conversion.strategy: Forbidden: logplane does not support webhook conversion: use strategy "None" (objects are served in every version with only apiVersion changed)',
    ]],
    ['an unknown conversion strategy', (crd) => { crd.spec.conversion = { strategy: 'Magic' }; }, ['spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"']],
    ['conversion without a strategy', (crd) => { crd.spec.conversion = {}; }, ['spec.conversion.strategy: Required value']],
    ['webhook settings with strategy None', (crd) => { crd.spec.conversion = { strategy: 'None', webhook: { clientConfig: { url: 'https://x' }, conversionReviewVersions: ['v1'] } }; }, [
      'spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook',
      'spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook',
    ]],
    ['preserveUnknownFields: true', (crd) => { crd.spec.preserveUnknownFields = true; }, [
      'spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema',
      'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
    ]],
    ['storedVersions without the storage version', (crd) => { crd.status = { storedVersions: ['v1beta1'] }; }, ['status.storedVersions: Invalid value: ["v1beta1"]: must have the storage version v1']],
    ['storedVersions naming a removed version', (crd) => { crd.status = { storedVersions: ['v1', 'v1alpha1'] }; }, [
      'status.storedVersions[1]: Invalid value: "v1alpha1": missing from spec.versions; v1alpha1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1alpha1 and removes v1alpha1 from status.storedVersions',
    ]],
  ])('%s', (_case, change, expected) => {
    expect(problems(changed(change))).toEqual(expected);
  });
});

describe('validateCustomResourceDefinition: schemas (structural, defaults, extensions)', () => {
  it.each<[string, (crd: Crd) => void, string[]]>([
    ['a field without a type', (crd) => { delete v1Spec(crd).properties.engine.type; }, [`${S1}.properties[spec].properties[engine].type: Required value: must not be empty for specified object fields`]],
    ['array items without a type', (crd) => { delete v1Spec(crd).properties.users.items.properties.roles.items.type; }, [`${S1}.properties[spec].properties[users].items.properties[roles].items.type: Required value: must not be empty for specified array items`]],
    ['an array without items', (crd) => { delete v1Spec(crd).properties.users.properties; v1Spec(crd).properties.backup.properties.days = { type: 'array' }; }, [`${S1}.properties[spec].properties[backup].properties[days].items: Required value: must be specified`]],
    ['a root that is not an object', (crd) => { v1Schema(crd).type = 'array'; v1Schema(crd).items = { type: 'string' }; crd.spec.versions[1].subresources = undefined; }, [`${S1}.type: Invalid value: "array": must be object at the root`]],
    ['a root without a type', (crd) => { delete v1Schema(crd).type; crd.spec.versions[1].subresources = undefined; }, [`${S1}.type: Required value: must not be empty at the root`]],
    ['additionalProperties at the root', (crd) => { v1Schema(crd).additionalProperties = { type: 'string' }; crd.spec.versions[1].subresources = undefined; }, [
      `${S1}.additionalProperties: Forbidden: must not be used at the root`,
      `${S1}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
    ]],
    ['properties together with additionalProperties', (crd) => { v1Spec(crd).properties.parameters.properties = { a: { type: 'string' } }; }, [`${S1}.properties[spec].properties[parameters].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`]],
    ['metadata restricting labels', (crd) => { v1Schema(crd).properties.metadata.properties.labels = { type: 'object' }; }, [`${S1}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`]],
    ['metadata with required', (crd) => { v1Schema(crd).properties.metadata.required = ['name']; }, [`${S1}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`]],
    ['metadata of type string', (crd) => { v1Schema(crd).properties.metadata = { type: 'string' }; }, [`${S1}.properties[metadata].type: Invalid value: "string": must be object`]],
    ['kind of type integer', (crd) => { v1Schema(crd).properties.kind.type = 'integer'; }, [`${S1}.properties[kind].type: Invalid value: "integer": must be string`]],
    ['a type inside anyOf', (crd) => { v1Spec(crd).properties.engine.anyOf = [{ type: 'string', pattern: '^p' }, { pattern: '^m' }]; }, [`${S1}.properties[spec].properties[engine].anyOf[0].type: Forbidden: must be empty to be structural`]],
    ['a default, description and nullable inside allOf', (crd) => { v1Spec(crd).properties.engine.allOf = [{ default: 'x', description: 'd', nullable: true }]; }, [
      `${S1}.properties[spec].properties[engine].allOf[0].default: Forbidden: must be undefined to be structural`,
      `${S1}.properties[spec].properties[engine].allOf[0].description: Forbidden: must be empty to be structural`,
      `${S1}.properties[spec].properties[engine].allOf[0].nullable: Forbidden: must be false to be structural`,
    ]],
    ['additionalProperties and x-kubernetes extensions inside oneOf', (crd) => { v1Spec(crd).properties.parameters.oneOf = [{ additionalProperties: { type: 'string' }, 'x-kubernetes-preserve-unknown-fields': true, 'x-kubernetes-map-type': 'atomic' }]; }, [
      `${S1}.properties[spec].properties[parameters].oneOf[0].additionalProperties: Forbidden: must be undefined to be structural`,
      `${S1}.properties[spec].properties[parameters].oneOf[0].x-kubernetes-map-type: Forbidden: must be undefined to be structural`,
      `${S1}.properties[spec].properties[parameters].oneOf[0].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural`,
      // kube's OpenAPI checks walk junctors too (after the sorted structural errors)
      `${S1}.properties[spec].properties[parameters].oneOf[0].type: Required value: must be object if x-kubernetes-map-type is specified`,
    ]],
    ['metadata inside not', (crd) => { v1Spec(crd).not = { properties: { metadata: { required: ['x'] } } }; }, [`${S1}.properties[spec].not.properties[metadata]: Forbidden: must not be specified in a nested context`]],
    ['a root allOf mentioning an unspecified property', (crd) => { v1Schema(crd).allOf = [{ properties: { spec: { properties: { other: { minLength: 1 } } } } }]; crd.spec.versions[1].subresources = { scale: crd.spec.versions[1].subresources.scale }; }, [
      `${S1}.properties[spec].properties[other]: Required value: because it is defined in ${S1}.allOf[0].properties[spec].properties[other]`,
    ]],
    ['kube\'s int-or-string anyOf pattern is structural', (crd) => { v1Spec(crd).properties.storage.properties.size.anyOf = [{ type: 'integer' }, { type: 'string' }]; }, []],
    ['an embedded resource that is not an object', (crd) => { v1Spec(crd).properties.podTemplate.type = 'string'; }, [`${S1}.properties[spec].properties[podTemplate].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true`]],
    ['an embedded resource without properties or preserve-unknown-fields', (crd) => { delete v1Spec(crd).properties.podTemplate['x-kubernetes-preserve-unknown-fields']; }, [`${S1}.properties[spec].properties[podTemplate].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`]],
    ['int-or-string with preserve-unknown-fields', (crd) => { v1Spec(crd).properties.storage.properties.size['x-kubernetes-preserve-unknown-fields'] = true; }, [`${S1}.properties[spec].properties[storage].properties[size].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`]],
    ['an invalid pattern', (crd) => { v1Spec(crd).properties.version.pattern = '^([0-9]+$'; delete v1Spec(crd).properties.version.default; }, [expect.stringMatching(/^spec\.versions\[1\]\.schema\.openAPIV3Schema\.properties\[spec\]\.properties\[version\]\.pattern: Invalid value: "\^\(\[0-9\]\+\$": must be a valid regular expression, but isn't: /) as unknown as string]],
    ['a default of the wrong type', (crd) => { v1Spec(crd).properties.replicas.default = 'three'; }, [`${S1}.properties[spec].properties[replicas].default: Invalid value: "string": in body must be of type integer: "string"`]],
    ['a default out of range', (crd) => { v1Spec(crd).properties.replicas.default = 12; }, [`${S1}.properties[spec].properties[replicas].default: Invalid value: 12: in body should be less than or equal to 9`]],
    ['a default not matching the pattern', (crd) => { v1Spec(crd).properties.version.default = 'latest'; }, [`${S1}.properties[spec].properties[version].default: Invalid value: "latest": in body should match '^[0-9]+\\.[0-9]+$'`]],
    ['a default with unknown fields', (crd) => { v1Spec(crd).properties.storage.default = { sise: '1Gi' }; }, [`${S1}.properties[spec].properties[storage].default: Invalid value: {"sise":"1Gi"}: must not have unknown fields`]],
    ['a default in top-level metadata', (crd) => { v1Schema(crd).properties.metadata.properties.name.default = 'db'; }, [`${S1}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata`]],
    ['an unknown type', (crd) => { v1Spec(crd).properties.engine.type = 'enum'; }, [`${S1}.properties[spec].properties[engine].type: Unsupported value: "enum": supported values: "array", "boolean", "integer", "number", "object", "string"`]],
    ['type null', (crd) => { v1Spec(crd).properties.engine.type = 'null'; }, [
      `${S1}.properties[spec].properties[engine].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
      `${S1}.properties[spec].properties[engine].type: Forbidden: type cannot be set to null, use nullable as an alternative`,
    ]],
    ['$ref, id, definitions, patternProperties, dependencies, additionalItems', (crd) => { Object.assign(v1Spec(crd).properties.backup, { $ref: '#/x', id: 'b', definitions: { a: { type: 'string' } }, patternProperties: { '^a': { type: 'string' } }, dependencies: { a: ['b'] }, additionalItems: false }); }, [
      `${S1}.properties[spec].properties[backup].id: Forbidden: id is not supported`,
      `${S1}.properties[spec].properties[backup].additionalItems: Forbidden: additionalItems is not supported`,
      `${S1}.properties[spec].properties[backup].patternProperties: Forbidden: patternProperties is not supported`,
      `${S1}.properties[spec].properties[backup].definitions: Forbidden: definitions is not supported`,
      `${S1}.properties[spec].properties[backup].dependencies: Forbidden: dependencies is not supported`,
      `${S1}.properties[spec].properties[backup].$ref: Forbidden: $ref is not supported`,
    ]],
    ['items as an array', (crd) => { v1Spec(crd).properties.users.items = [{ type: 'object' }]; }, [
      `${S1}.properties[spec].properties[users].items: Forbidden: items must be a schema object and not an array`,
      `${S1}.properties[spec].properties[users].items: Invalid value: [{"type":"object"}]: must only have a single schema if x-kubernetes-list-type is map`,
    ]],
    ['uniqueItems: true', (crd) => { v1Spec(crd).properties.users.items.properties.roles.uniqueItems = true; }, [`${S1}.properties[spec].properties[users].items.properties[roles].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`]],
    ['x-kubernetes-preserve-unknown-fields: false', (crd) => { v1Spec(crd).properties.backup['x-kubernetes-preserve-unknown-fields'] = false; }, [`${S1}.properties[spec].properties[backup].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`]],
    ['nullable at the root', (crd) => { v1Schema(crd).nullable = true; crd.spec.versions[1].subresources = undefined; }, [`${S1}.nullable: Forbidden: nullable cannot be true at the root`]],
    ['status subresource with a root description and nullable', (crd) => { v1Schema(crd).nullable = true; }, [
      expect.stringMatching(/^spec\.versions\[1\]\.schema\.openAPIV3Schema: Invalid value: \{.*\}: only \[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations\] fields are allowed at the root of the schema if the status subresource is enabled$/) as unknown as string,
      `${S1}.nullable: Forbidden: nullable cannot be true at the root`,
    ]],
    ['list-type on an object', (crd) => { v1Spec(crd).properties.backup['x-kubernetes-list-type'] = 'set'; }, [`${S1}.properties[spec].properties[backup].type: Invalid value: "object": must be array if x-kubernetes-list-type is specified`]],
    ['an unknown list-type', (crd) => { v1Spec(crd).properties.users.items.properties.roles['x-kubernetes-list-type'] = 'bag'; }, [`${S1}.properties[spec].properties[users].items.properties[roles].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"`]],
    ['list-map-keys on a set', (crd) => { v1Spec(crd).properties.users['x-kubernetes-list-type'] = 'set'; }, [
      // kube prints the items' (unset) list-type as the value here
      `${S1}.properties[spec].properties[users].items.x-kubernetes-map-type: Invalid value: "null": must be atomic as item of a list with x-kubernetes-list-type=set`,
      `${S1}.properties[spec].properties[users].x-kubernetes-list-type: Invalid value: "set": must be map if x-kubernetes-list-map-keys is non-empty`,
    ]],
    ['list-type map without keys', (crd) => { delete v1Spec(crd).properties.users['x-kubernetes-list-map-keys']; }, [`${S1}.properties[spec].properties[users].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`]],
    ['list-map-keys naming no item property', (crd) => { v1Spec(crd).properties.users['x-kubernetes-list-map-keys'] = ['id']; }, [`${S1}.properties[spec].properties[users].x-kubernetes-list-map-keys: Invalid value: ["id"]: entries must all be names of item properties`]],
    ['a list-map key neither required nor defaulted', (crd) => { v1Spec(crd).properties.users.items.required = []; }, [`${S1}.properties[spec].properties[users].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`]],
    ['a nullable list-map key', (crd) => { v1Spec(crd).properties.users.items.properties.name.nullable = true; }, [`${S1}.properties[spec].properties[users].items.properties[name].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable`]],
    ['nullable items of a set', (crd) => { v1Spec(crd).properties.users.items.properties.roles.items.nullable = true; }, [`${S1}.properties[spec].properties[users].items.properties[roles].items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is set`]],
    ['a map-type on a string', (crd) => { v1Spec(crd).properties.engine['x-kubernetes-map-type'] = 'atomic'; }, [`${S1}.properties[spec].properties[engine].type: Invalid value: "string": must be object if x-kubernetes-map-type is specified`]],
    ['a CEL rule without rule text', (crd) => { v1Spec(crd)['x-kubernetes-validations'] = [{ rule: ' ', message: 'x' }]; }, [`${S1}.properties[spec].x-kubernetes-validations[0].rule: Required value: rule is not specified`]],
    ['a CEL rule with an unknown reason', (crd) => { v1Spec(crd)['x-kubernetes-validations'] = [{ rule: 'self.replicas > 0', reason: 'FieldValueBad' }]; }, [`${S1}.properties[spec].x-kubernetes-validations[0].reason: Unsupported value: "FieldValueBad": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`]],
  ])('%s', (_case, change, expected) => {
    expect(problems(changed(change))).toEqual(expected);
  });
});

describe('validateCustomResourceDefinition: update rules', () => {
  const established = (): Crd => ({ ...databaseCrd(), status: { conditions: [{ type: 'Established', status: 'True' }] } });

  it.each<[string, (crd: Crd) => void, Crd, string[]]>([
    ['group is immutable', (crd) => { crd.spec.group = 'db2.example.com'; crd.metadata.name = 'databaseclusters.db2.example.com'; }, databaseCrd(), ['spec.group: Invalid value: "db2.example.com": field is immutable']],
    ['plural is immutable', (crd) => { crd.spec.names.plural = 'dbclusters'; crd.metadata.name = 'dbclusters.db.example.com'; }, databaseCrd(), ['spec.names.plural: Invalid value: "dbclusters": field is immutable']],
    ['scope is immutable once Established', (crd) => { crd.spec.scope = 'Cluster'; }, established(), ['spec.scope: Invalid value: "Cluster": field is immutable']],
    ['kind is immutable once Established', (crd) => { crd.spec.names.kind = 'DBCluster'; crd.spec.names.listKind = 'DBClusterList'; }, established(), ['spec.names.kind: Invalid value: "DBCluster": field is immutable']],
    ['scope may change before the CRD is Established', (crd) => { crd.spec.scope = 'Cluster'; }, databaseCrd(), []],
    ['adding a served version is fine', (crd) => { crd.spec.versions.push({ name: 'v2alpha1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }); }, established(), []],
  ])('%s', (_case, change, old, expected) => {
    expect(problems(changed(change), old)).toEqual(expected);
  });
});

describe('crdWarnings', () => {
  it('lists every schema node with CEL rules, which logplane does not evaluate', () => {
    const crd = changed((c) => {
      v1Spec(c)['x-kubernetes-validations'] = [{ rule: 'self.replicas <= 9' }];
      v1Spec(c).properties.users.items['x-kubernetes-validations'] = [{ rule: "self.name != 'root'" }];
    });
    expect(problems(crd)).toEqual([]);
    expect(crdWarnings(crd)).toEqual([
      `logplane does not evaluate CEL validation rules (x-kubernetes-validations); they are stored but not enforced: ${S1}.properties[spec].x-kubernetes-validations, ${S1}.properties[spec].properties[users].items.x-kubernetes-validations`,
    ]);
  });

  it('warns when no version is served, and says nothing for the plain CRD', () => {
    expect(crdWarnings(databaseCrd())).toEqual([]);
    expect(crdWarnings(changed((c) => c.spec.versions.forEach((v: Crd) => { v.served = false; })))).toEqual([
      'no version of this CustomResourceDefinition is served (spec.versions[*].served): its resources cannot be read or written',
    ]);
  });
});

describe('total on any input', () => {
  it.each<[string, unknown]>([
    ['null', null],
    ['a string', 'crd'],
    ['an array', []],
    ['spec as a number', { metadata: { name: 'a.b.c' }, spec: 7 }],
    ['versions as an object', { spec: { versions: { a: 1 } } }],
    ['schema nodes of odd types', { spec: { versions: [{ name: 'v1', storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { a: 5, b: null, c: { items: 'x', allOf: 'y', anyOf: [null, 3] } } } } }] } }],
  ])('%s does not throw', (_case, crd) => {
    expect(() => problems(crd)).not.toThrow();
    expect(() => crdWarnings(crd)).not.toThrow();
  });

  it('property names __proto__, constructor and prototype are ordinary schema properties', () => {
    const crd = changed((c) => {
      v1Spec(c).properties = JSON.parse('{"engine":{"type":"string","enum":["postgres"]},"__proto__":{"type":"string"},"constructor":{"type":"integer","default":"x"},"prototype":{}}');
    });
    expect(problems(crd)).toEqual([
      `${S1}.properties[spec].properties[prototype].type: Required value: must not be empty for specified object fields`,
    ]);
    const defaulted = changed((c) => {
      v1Spec(c).properties = JSON.parse('{"engine":{"type":"string"},"constructor":{"type":"integer","default":"x"}}');
    });
    expect(problems(defaulted)).toEqual([`${S1}.properties[spec].properties[constructor].default: Invalid value: "string": in body must be of type integer: "string"`]);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
