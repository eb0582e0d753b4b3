/**
 * Query parameters converted as apimachinery converts them into options structs
 * (`runtime.Convert_Slice_string_To_bool`, used for every bool of ListOptions,
 * DeleteOptions, PodLogOptions …).
 */

/**
 * A boolean query parameter: absent is false; present with any value but `false` or `0`
 * (in any case) is true, an empty one (`?watch`) included. The Python client sends `True`.
 */
export const queryBool = (query: URLSearchParams, name: string): boolean => {
  const value = query.get(name);
  if (value === null) return false;
  const lowered = value.toLowerCase();
  return lowered !== 'false' && lowered !== '0';
};
