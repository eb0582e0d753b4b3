/**
 * `labelSelector` and `fieldSelector` of list and watch requests, parsed once per request
 * (400 BadRequest when malformed or naming an unsupported field) and matched per object.
 */
import {
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  type FieldRequirement,
  type LabelRequirement,
} from '../projections/selectors.ts';
import type { KubeObject } from '../schemas/index.ts';
import { apiErrors } from './errors.ts';
import type { ResourceInfo } from './resources.ts';

/** The selectors of a request; an empty selection matches everything. */
export interface Selection {
  readonly labels: readonly LabelRequirement[];
  readonly fields: readonly FieldRequirement[];
  /** True when either selector has requirements (watch then tracks what matched). */
  readonly filters: boolean;
  matches(object: KubeObject): boolean;
}

/** Field selector names kube keeps for old clients, and the field each reads (Namespace, PV, PVC `name`). */
const FIELD_ALIASES: ReadonlyMap<string, string> = new Map([['name', 'metadata.name']]);

/** Boolean fields kube's GetAttrs formats with FormatBool, so an unset one selects as "false". */
const FALSE_WHEN_UNSET: ReadonlySet<string> = new Set(['spec.unschedulable', 'spec.hostNetwork']);

/** The value of a dotted field path of an object, as a field selector compares it. */
const fieldValue = (object: KubeObject, selected: string): string | undefined => {
  const field = FIELD_ALIASES.get(selected) ?? selected;
  let node: unknown = object;
  for (const part of field.split('.')) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, part)) {
      node = undefined;
      break;
    }
    node = (node as Record<string, unknown>)[part];
  }
  if (node === undefined || node === null) {
    if (FALSE_WHEN_UNSET.has(field)) return 'false';
    return undefined;
  }
  return typeof node === 'object' ? JSON.stringify(node) : String(node);
};

/** Parses the selectors of `query` for `resource`. */
export const parseSelection = (resource: ResourceInfo, query: URLSearchParams): Selection => {
  const labelResult = parseLabelSelector(query.get('labelSelector') ?? '');
  if (labelResult.type === 'invalid') throw apiErrors.badRequest(labelResult.error.message);
  const fieldResult = parseFieldSelector(query.get('fieldSelector') ?? '', resource.selectableFields);
  if (fieldResult.type === 'invalid') throw apiErrors.badRequest(fieldResult.error.message);
  const labels = labelResult.requirements;
  const fields = fieldResult.requirements;
  return {
    labels,
    fields,
    filters: labels.length > 0 || fields.length > 0,
    matches: (object) =>
      matchesLabels(labels, object.metadata.labels) && matchesFields(fields, (field) => fieldValue(object, field)),
  };
};

/**
 * The name a field selector pins (`metadata.name=x`), so a one-object list or watch
 * (kubectl get NAME -w, kubectl delete --wait) can read one key instead of scanning.
 */
export const pinnedName = (selection: Selection): string | undefined =>
  selection.fields.find((f) => f.type === 'equals' && f.field === 'metadata.name')?.value;
