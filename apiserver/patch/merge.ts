/** RFC 7386 JSON merge patch (`application/merge-patch+json`). */
import { isObject, own, setMember, type Json, type JsonObject } from './json.ts';

/** RFC 7386 JSON merge patch: objects merge recursively, `null` deletes, everything else replaces. */
export const mergePatch = (target: Json, patch: Json): Json => {
  if (!isObject(patch)) return structuredClone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else setMember(out, key, mergePatch(own(out, key), value));
  }
  return out;
};
