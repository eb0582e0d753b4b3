/**
 * Validation of apiextensions.k8s.io/v1 CustomResourceDefinitions as kube-apiserver 1.32's
 * `ValidateCustomResourceDefinition` and `ValidateCustomResourceDefinitionUpdate` do it,
 * with kube's field paths and messages, on the object as kube validates it: after v1
 * defaulting (a missing `names.singular` is the lower-cased kind, a missing
 * `names.listKind` is `<kind>List`; see {@link defaultCustomResourceDefinition}).
 *
 * The generic metadata rules (labels, annotations, finalizers, …) are the caller's
 * (validation/objects.ts `validateMetadata`); the CRD's own name rule is checked here.
 * logplane does not call conversion webhooks: `spec.conversion.strategy: Webhook` is refused.
 */
import { fieldErrors } from '../errors.ts';
import { dns1035LabelProblem, dns1123SubdomainProblem } from '../validation/names.ts';
import { invalid } from './causes.ts';
import { celRulePaths, schemaHas, validateVersionSchema } from './schema-rules.ts';
import { childPath, cloneJson, indexPath, isObject, jsonEqual, own, ownArray, ownObject, ownString, ownTrue, setOwn, type Causes } from './json.ts';

const PRINTER_COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const PRINTER_COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
const APPROVAL_ANNOTATION = 'api-approved.kubernetes.io';

/** The CRD's `spec.names` after kube's v1 defaulting. */
const effectiveNames = (spec: unknown): { plural: string; singular: string; kind: string; listKind: string; names: unknown } => {
  const names = own(spec, 'names');
  const kind = ownString(names, 'kind') ?? '';
  return {
    names,
    plural: ownString(names, 'plural') ?? '',
    kind,
    singular: ownString(names, 'singular') || kind.toLowerCase(),
    listKind: ownString(names, 'listKind') || (kind ? `${kind}List` : ''),
  };
};

/**
 * A copy of `crd` with kube's v1 defaults (SetDefaults_CustomResourceDefinitionSpec):
 * `names.singular`, `names.listKind`, `conversion.strategy: None`, `preserveUnknownFields: false`.
 */
export const defaultCustomResourceDefinition = <T>(crd: T): T => {
  const copy = cloneJson(crd);
  const spec = own(copy, 'spec');
  if (!isObject(spec)) return copy as T;
  const names = own(spec, 'names');
  if (isObject(names)) {
    const { singular, listKind } = effectiveNames(spec);
    if (!ownString(names, 'singular') && singular) setOwn(names, 'singular', singular);
    if (!ownString(names, 'listKind') && listKind) setOwn(names, 'listKind', listKind);
  }
  if (own(spec, 'conversion') === undefined) setOwn(spec, 'conversion', { strategy: 'None' });
  if (own(spec, 'preserveUnknownFields') === undefined) setOwn(spec, 'preserveUnknownFields', false);
  return copy as T;
};

/** kube's `validateSimpleJSONPath`. */
const checkSimpleJSONPath = (causes: Causes, path: string, field: string): boolean => {
  if (path === '') causes.push(invalid(field, path, 'must not be empty'));
  else if (!path.startsWith('.')) causes.push(invalid(field, path, 'must be a simple json path starting with .'));
  else return true;
  return false;
};

/** kube's `ValidateCustomResourceDefinitionNames` (spec.names and status.acceptedNames). */
const checkNames = (causes: Causes, names: { plural: string; singular: string; kind: string; listKind: string; names: unknown }, path: string): void => {
  const label = (field: string, value: string, prefix = ''): void => {
    const problem = dns1035LabelProblem(prefix ? value.toLowerCase() : value);
    if (value && problem) causes.push(invalid(childPath(path, field), value, `${prefix}${problem}`));
  };
  label('plural', names.plural);
  label('singular', names.singular);
  label('kind', names.kind, 'may have mixed case, but should otherwise match: ');
  label('listKind', names.listKind, 'may have mixed case, but should otherwise match: ');
  ownArray(names.names, 'shortNames').forEach((name, i) => {
    const problem = dns1035LabelProblem(String(name));
    if (problem) causes.push(invalid(indexPath(childPath(path, 'shortNames'), i), name, problem));
  });
  if (names.kind && names.kind === names.listKind) causes.push(invalid(childPath(path, 'listKind'), names.listKind, 'kind and listKind may not be the same'));
  ownArray(names.names, 'categories').forEach((name, i) => {
    const problem = dns1035LabelProblem(String(name));
    if (problem) causes.push(invalid(indexPath(childPath(path, 'categories'), i), name, problem));
  });
};

/** kube's `ValidateCustomResourceColumnDefinition`. */
const checkPrinterColumn = (causes: Causes, column: unknown, path: string): void => {
  const name = ownString(column, 'name') ?? '';
  if (!name) causes.push(fieldErrors.required(childPath(path, 'name')));
  const type = ownString(column, 'type') ?? '';
  const types = `must be one of ${PRINTER_COLUMN_TYPES.join(',')}`;
  if (!type) causes.push(fieldErrors.required(childPath(path, 'type'), types));
  else if (!PRINTER_COLUMN_TYPES.includes(type)) causes.push(invalid(childPath(path, 'type'), type, types));
  const format = ownString(column, 'format') ?? '';
  if (format && !PRINTER_COLUMN_FORMATS.includes(format)) causes.push(invalid(childPath(path, 'format'), format, `must be one of ${PRINTER_COLUMN_FORMATS.join(',')}`));
  const jsonPath = ownString(column, 'jsonPath') ?? '';
  if (!jsonPath) causes.push(fieldErrors.required(childPath(path, 'JSONPath')));
  else checkSimpleJSONPath(causes, jsonPath, childPath(path, 'JSONPath'));
};

/** kube's `ValidateCustomResourceDefinitionSubresources` (the scale paths). */
const checkSubresources = (causes: Causes, subresources: unknown, path: string): void => {
  const scale = own(subresources, 'scale');
  if (!isObject(scale)) return;
  const replicas = (key: string, under: string): void => {
    const field = childPath(path, `scale.${key}`);
    const value = ownString(scale, key) ?? '';
    if (!value) causes.push(fieldErrors.required(field));
    else if (checkSimpleJSONPath(causes, value, field) && !value.startsWith(`.${under}.`)) causes.push(invalid(field, value, `should be a json path under .${under}`));
  };
  replicas('specReplicasPath', 'spec');
  replicas('statusReplicasPath', 'status');
  const selector = ownString(scale, 'labelSelectorPath') ?? '';
  const field = childPath(path, 'scale.labelSelectorPath');
  if (selector && checkSimpleJSONPath(causes, selector, field) && !selector.startsWith('.spec.') && !selector.startsWith('.status.')) {
    causes.push(invalid(field, selector, 'should be a json path under either .spec or .status'));
  }
};

/** kube's `validateDeprecationWarning`. */
const deprecationProblems = (version: unknown): string[] => {
  const warning = own(version, 'deprecationWarning');
  if (warning === undefined || warning === null) return [];
  if (!ownTrue(version, 'deprecated')) return ['can only be set for deprecated versions'];
  const text = String(warning);
  const problems: string[] = [];
  if (text.length > 256) problems.push('must be <= 256 characters long');
  if (text.length === 0) problems.push('must not be an empty string');
  const bad = [...text].findIndex((char) => /[\p{C}]/u.test(char));
  if (bad >= 0) problems.push(`must only contain printable UTF-8 characters; non-printable character found at index ${bad}`);
  return problems;
};

const checkVersion = (causes: Causes, version: unknown, path: string): void => {
  for (const problem of deprecationProblems(version)) causes.push(invalid(childPath(path, 'deprecationWarning'), own(version, 'deprecationWarning'), problem));
  const subresources = own(version, 'subresources');
  validateVersionSchema(causes, own(version, 'schema'), childPath(path, 'schema'), isObject(own(subresources, 'status')));
  checkSubresources(causes, subresources, childPath(path, 'subresources'));
  ownArray(version, 'additionalPrinterColumns').forEach((column, i) => checkPrinterColumn(causes, column, indexPath(childPath(path, 'additionalPrinterColumns'), i)));
};

/** kube's `validateCustomResourceConversion`, with Webhook refused: logplane does not call conversion webhooks. */
const checkConversion = (causes: Causes, conversion: unknown): void => {
  if (conversion === undefined || conversion === null) return;
  const field = 'spec.conversion.strategy';
  const strategy = ownString(conversion, 'strategy') ?? '';
  if (!strategy) causes.push(fieldErrors.required(field));
  else if (strategy === 'Webhook') {
    causes.push(fieldErrors.forbidden(field, 'logplane does not support webhook conversion: use strategy "None" (objects are served in every version with only apiVersion changed)'));
  } else if (strategy !== 'None') causes.push(fieldErrors.notSupported(field, strategy, ['None', 'Webhook']));
  else {
    if (own(own(conversion, 'webhook'), 'clientConfig') !== undefined) causes.push(fieldErrors.forbidden('spec.conversion.webhookClientConfig', 'should not be set when strategy is not set to Webhook'));
    if (ownArray(own(conversion, 'webhook'), 'conversionReviewVersions').length > 0) {
      causes.push(fieldErrors.forbidden('spec.conversion.conversionReviewVersions', 'should not be set when strategy is not set to Webhook'));
    }
  }
};

/** kube's `validateAPIApproval` for groups under k8s.io and kubernetes.io. */
const checkApproval = (causes: Causes, crd: unknown, old: unknown, group: string): void => {
  if (!/(^|\.)(k8s\.io|kubernetes\.io)$/.test(group)) return;
  const state = (object: unknown): string => {
    const value = own(ownObject(own(object, 'metadata'), 'annotations'), APPROVAL_ANNOTATION);
    if (typeof value !== 'string') return 'missing';
    if (value.startsWith('unapproved')) return 'bypassed';
    return URL.canParse(value) ? 'approved' : 'invalid';
  };
  const now = state(crd);
  if ((old !== undefined && state(old) === now) || now === 'approved' || now === 'bypassed') return;
  const field = `metadata.annotations[${APPROVAL_ANNOTATION}]`;
  if (now === 'missing') causes.push(fieldErrors.required(field, `protected groups must have approval annotation "${APPROVAL_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`));
  else {
    const value = own(ownObject(own(crd, 'metadata'), 'annotations'), APPROVAL_ANNOTATION);
    causes.push(invalid(field, value, `protected groups must have approval annotation "${APPROVAL_ANNOTATION}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`));
  }
};

const checkStoredVersions = (causes: Causes, crd: unknown, versions: readonly unknown[]): void => {
  const stored = ownArray(own(crd, 'status'), 'storedVersions');
  if (stored.length === 0) return;
  const names = versions.map((v) => ownString(v, 'name'));
  for (const version of versions) {
    if (ownTrue(version, 'storage') && !stored.includes(ownString(version, 'name'))) {
      causes.push(invalid('status.storedVersions', stored, `must have the storage version ${ownString(version, 'name') ?? ''}`));
    }
  }
  stored.forEach((name, i) => {
    if (!names.includes(name as string)) {
      causes.push(invalid(indexPath('status.storedVersions', i), name, `missing from spec.versions; ${String(name)} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${String(name)} and removes ${String(name)} from status.storedVersions`));
    }
  });
};

const isEstablished = (crd: unknown): boolean =>
  ownArray(own(crd, 'status'), 'conditions').some((c) => ownString(c, 'type') === 'Established' && ownString(c, 'status') === 'True');

const checkSpec = (causes: Causes, spec: unknown): void => {
  const group = ownString(spec, 'group') ?? '';
  if (!group) causes.push(fieldErrors.required('spec.group'));
  else {
    const problem = dns1123SubdomainProblem(group);
    if (problem) causes.push(invalid('spec.group', group, problem));
    else if (group.split('.').length < 2) causes.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  const scope = ownString(spec, 'scope') ?? '';
  if (!scope) causes.push(fieldErrors.required('spec.scope'));
  else if (scope !== 'Cluster' && scope !== 'Namespaced') causes.push(fieldErrors.notSupported('spec.scope', scope, ['Cluster', 'Namespaced']));
  const versions = ownArray(spec, 'versions');
  versions.forEach((version, i) => {
    if (!isObject(own(own(version, 'schema'), 'openAPIV3Schema'))) causes.push(fieldErrors.required(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'));
  });
  if (ownTrue(spec, 'preserveUnknownFields') && versions.some((v) => schemaHas(own(own(v, 'schema'), 'openAPIV3Schema'), (node) => own(node, 'default') !== undefined && own(node, 'default') !== null))) {
    causes.push(invalid('spec.preserveUnknownFields', true, 'must be false in order to use defaults in the schema'));
  }
  const seen = new Set<string>();
  let unique = true;
  versions.forEach((version, i) => {
    const name = ownString(version, 'name') ?? '';
    if (seen.has(name)) unique = false;
    seen.add(name);
    const problem = dns1035LabelProblem(name);
    if (problem) causes.push(invalid(`spec.versions[${i}].name`, name, problem));
    checkVersion(causes, version, `spec.versions[${i}]`);
  });
  if (!unique) causes.push(invalid('spec.versions', versions, 'must contain unique version names'));
  if (versions.filter((v) => ownTrue(v, 'storage')).length !== 1) causes.push(invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  const names = effectiveNames(spec);
  for (const key of ['plural', 'singular', 'kind', 'listKind'] as const) if (!names[key]) causes.push(fieldErrors.required(`spec.names.${key}`));
  checkNames(causes, names, 'spec.names');
  const conversion = own(spec, 'conversion');
  const strategy = ownString(conversion, 'strategy');
  if (strategy && strategy !== 'None' && ownTrue(spec, 'preserveUnknownFields')) causes.push(invalid('spec.conversion.strategy', strategy, 'must be None if spec.preserveUnknownFields is true'));
  checkConversion(causes, conversion);
};

/**
 * Validates a CustomResourceDefinition about to be created, or to replace `old`, pushing
 * kube's causes onto `causes`. On update, `spec.group` and `spec.names.plural` are
 * immutable, and so are `spec.scope` and `spec.names.kind` once `old` is Established.
 * Total on any input.
 */
export const validateCustomResourceDefinition = (causes: Causes, crd: unknown, old?: unknown): void => {
  const spec = own(crd, 'spec');
  const { plural } = effectiveNames(spec);
  const group = ownString(spec, 'group') ?? '';
  const name = ownString(own(crd, 'metadata'), 'name') ?? '';
  if (!name) causes.push(fieldErrors.required('metadata.name', 'name or generateName is required'));
  else {
    const problem = dns1123SubdomainProblem(name);
    if (problem) causes.push(invalid('metadata.name', name, problem));
    if (name !== `${plural}.${group}`) causes.push(invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  }
  checkSpec(causes, spec);
  if (old !== undefined) {
    const oldSpec = own(old, 'spec');
    const immutable = (field: string, now: unknown, before: unknown): void => {
      if (!jsonEqual(now ?? null, before ?? null)) causes.push(invalid(field, now ?? null, 'field is immutable'));
    };
    if (isEstablished(old)) {
      immutable('spec.scope', own(spec, 'scope'), own(oldSpec, 'scope'));
      immutable('spec.names.kind', own(own(spec, 'names'), 'kind'), own(own(oldSpec, 'names'), 'kind'));
    }
    immutable('spec.group', own(spec, 'group'), own(oldSpec, 'group'));
    immutable('spec.names.plural', own(own(spec, 'names'), 'plural'), own(own(oldSpec, 'names'), 'plural'));
  }
  const accepted = own(own(crd, 'status'), 'acceptedNames');
  if (isObject(accepted)) {
    const kind = ownString(accepted, 'kind') ?? '';
    checkNames(causes, { names: accepted, kind, plural: ownString(accepted, 'plural') ?? '', singular: ownString(accepted, 'singular') ?? '', listKind: ownString(accepted, 'listKind') ?? '' }, 'status.acceptedNames');
  }
  checkStoredVersions(causes, crd, ownArray(spec, 'versions'));
  checkApproval(causes, crd, old, group);
  if (ownTrue(spec, 'preserveUnknownFields') && !ownTrue(own(old, 'spec'), 'preserveUnknownFields')) {
    causes.push(invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  }
};

/**
 * Warnings (not errors) to return with a CRD write: logplane does not evaluate CEL
 * validation rules (`x-kubernetes-validations`), so each schema node carrying them is
 * listed; and a CRD with no served version serves nothing (kube accepts that silently).
 */
export const crdWarnings = (crd: unknown): string[] => {
  const versions = ownArray(own(crd, 'spec'), 'versions');
  const paths = versions.flatMap((version, i) => celRulePaths(own(own(version, 'schema'), 'openAPIV3Schema'), `spec.versions[${i}].schema.openAPIV3Schema`));
  const warnings: string[] = [];
  if (paths.length > 0) {
    warnings.push(`logplane does not evaluate CEL validation rules (x-kubernetes-validations); they are stored but not enforced: ${paths.join(', ')}`);
  }
  if (versions.length > 0 && !versions.some((v) => ownTrue(v, 'served'))) {
    warnings.push('no version of this CustomResourceDefinition is served (spec.versions[*].served): its resources cannot be read or written');
  }
  return warnings;
};
