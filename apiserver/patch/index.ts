/**
 * The PATCH formats kubectl and controllers send:
 * - JSON merge patch (RFC 7386, `application/merge-patch+json`);
 * - strategic merge patch (`application/strategic-merge-patch+json`) for the built-in
 *   kinds: lists merged by their keys (containers by `name`, container ports by
 *   `containerPort`, service ports by `port`, env by `name`, …), the `$patch`,
 *   `$setElementOrder/<list>`, `$deleteFromPrimitiveList/<list>` and `$retainKeys`
 *   directives that `kubectl apply` emits;
 * - JSON patch (RFC 6902, `application/json-patch+json`).
 * Server-side apply (`application/apply-patch+yaml`) is answered with 415.
 */
import { assertNever, type Kind } from '../../schemas/index.ts';
import { apiErrors } from '../errors.ts';
import { jsonPatch } from './json-patch.ts';
import { mergePatch } from './merge.ts';
import { strategicMerge } from './strategic.ts';
import { isObject, type Json } from './json.ts';

export { jsonPatch, mergePatch, strategicMerge };

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;
export type PatchType = keyof typeof PATCH_TYPES;

/** The patch type of a Content-Type, or a 415 listing the accepted ones. */
export const patchTypeOf = (mediaType: string): PatchType => {
  const found = (Object.keys(PATCH_TYPES) as PatchType[]).find((t) => PATCH_TYPES[t] === mediaType);
  if (found) return found;
  throw apiErrors.unsupportedMediaType(
    `the body of the request was in an unknown format - accepted media types include: ${Object.values(PATCH_TYPES).join(', ')}`,
  );
};

/** Applies a patch of `type` to `original` (an object of `kind`). */
export const applyPatch = (type: PatchType, kind: Kind, original: Json, patch: Json): Json => {
  switch (type) {
    case 'merge':
      return mergePatch(original, patch);
    case 'strategic':
      if (!isObject(patch)) throw apiErrors.badRequest('a strategic merge patch must be a JSON object');
      return strategicMerge(kind, [], original, patch);
    case 'json':
      return jsonPatch(original, patch);
    case 'apply':
      throw apiErrors.unsupportedMediaType(
        'server-side apply (application/apply-patch+yaml) is not supported by logplane; use client-side `kubectl apply` (without --server-side), or a merge/strategic merge patch',
      );
    default:
      return assertNever(type, 'type');
  }
};
