/**
 * The PATCH formats kubectl and controllers send:
 * - JSON merge patch (RFC 7386, `application/merge-patch+json`);
 * - strategic merge patch (`application/strategic-merge-patch+json`) for the built-in
 *   kinds: lists merged by their keys (containers by `name`, container ports by
 *   `containerPort`, service ports by `port`, env by `name`, …), the `$patch`,
 *   `$setElementOrder/<list>`, `$deleteFromPrimitiveList/<list>` and `$retainKeys`
 *   directives that `kubectl apply` emits;
 * - JSON patch (RFC 6902, `application/json-patch+json`);
 * - server-side apply (`application/apply-patch+yaml`, or its JSON spelling), which
 *   merges by field ownership (`./apply/`) and so is not a function of the object and
 *   the patch alone: the write handler runs `serverSideApply` for it.
 */
import { assertNever, type Kind } from '../../schemas/index.ts';
import { apiErrors } from '../errors.ts';
import { jsonPatch } from './json-patch.ts';
import { mergePatch } from './merge.ts';
import { strategicMerge } from './strategic.ts';
import { isObject, type Json } from './json.ts';

export { jsonPatch, mergePatch, strategicMerge };
export { recordUpdate, serverSideApply, type FieldManagerTarget } from './apply/field-manager.ts';
export { customMergeType, mergeTypeOf } from './apply/schema.ts';

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;
export type PatchType = keyof typeof PATCH_TYPES;

/** Other media types of a patch type: an apply configuration may be JSON text too. */
const ALIASES: Readonly<Record<string, PatchType>> = { 'application/apply-patch+json': 'apply' };

/** The patch type of a Content-Type, or a 415 listing the accepted ones. */
export const patchTypeOf = (mediaType: string): PatchType => {
  const found = (Object.keys(PATCH_TYPES) as PatchType[]).find((t) => PATCH_TYPES[t] === mediaType) ?? (Object.hasOwn(ALIASES, mediaType) ? ALIASES[mediaType] : undefined);
  if (found) return found;
  throw apiErrors.unsupportedMediaType(
    `the body of the request was in an unknown format - accepted media types include: ${Object.values(PATCH_TYPES).join(', ')}`,
  );
};

/** The patch types that are a function of the object and the patch alone. */
export type StatelessPatchType = Exclude<PatchType, 'apply'>;

/**
 * The patch type of a subresource PATCH: server-side apply of a subresource is answered
 * with 415 (logplane applies configurations to the main resource only).
 */
export const subresourcePatchTypeOf = (mediaType: string, subresource: string): StatelessPatchType => {
  const type = patchTypeOf(mediaType);
  if (type === 'apply') {
    throw apiErrors.unsupportedMediaType(
      `server-side apply of the ${subresource} subresource is not supported by logplane; apply to the main resource, or send a merge or JSON patch to ${subresource}`,
    );
  }
  return type;
};

/** Applies a patch of `type` to `original` (an object of `kind`). */
export const applyPatch = (type: StatelessPatchType, kind: Kind, original: Json, patch: Json): Json => {
  switch (type) {
    case 'merge':
      return mergePatch(original, patch);
    case 'strategic':
      if (!isObject(patch)) throw apiErrors.badRequest('a strategic merge patch must be a JSON object');
      return strategicMerge(kind, [], original, patch);
    case 'json':
      return jsonPatch(original, patch);
    default:
      return assertNever(type, 'type');
  }
};
