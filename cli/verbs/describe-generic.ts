/**
 * kubectl's generic describer (`describe.GenericDescriberFor`, printUnstructuredContent),
 * for kinds without a describer of their own: name, namespace, labels and annotations,
 * then every other field with its camelCase key as title words (`Creation Timestamp:`),
 * nested maps indented, list items one per line.
 */
import type { KubeObject } from '../../schemas/index.ts';

/** Where describe lines go: `add(level, text)` indents by level. */
export interface DescribeLines {
  add(level: number, text: string): void;
  multiline(level: number, title: string, entries: readonly string[]): void;
}

/** `creationTimestamp` → `Creation Timestamp`, `podCIDR` → `Pod CIDR`, as kubectl's smartLabelFor. */
export const smartLabel = (key: string): string =>
  key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .filter((word) => word !== '')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');

const scalar = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

const printValue = (w: DescribeLines, level: number, title: string, value: unknown): void => {
  if (Array.isArray(value)) {
    if (value.length === 0) return;
    w.add(level, `${title}:`);
    for (const item of value) {
      if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
        const entries = Object.entries(item);
        entries.forEach(([key, inner], index) => printValue(w, level + 1, index === 0 ? `${smartLabel(key)}` : smartLabel(key), inner));
      } else {
        w.add(level + 1, scalar(item));
      }
    }
    return;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return;
    w.add(level, `${title}:`);
    for (const [key, inner] of entries) printValue(w, level + 1, smartLabel(key), inner);
    return;
  }
  if (value !== undefined) w.add(level, `${title}:\t${scalar(value)}`);
};

/** Describes `object` as kubectl's generic describer does. */
export const describeGeneric = (
  object: KubeObject,
  w: DescribeLines,
  metadataLines: { labels: readonly string[]; annotations: readonly string[] },
): void => {
  w.add(0, `Name:\t${object.metadata.name}`);
  if (object.metadata.namespace !== undefined) w.add(0, `Namespace:\t${object.metadata.namespace}`);
  w.multiline(0, 'Labels', metadataLines.labels);
  w.multiline(0, 'Annotations', metadataLines.annotations);
  const { metadata: _metadata, ...rest } = object as KubeObject & Record<string, unknown>;
  for (const [key, value] of Object.entries(rest)) printValue(w, 0, key === 'apiVersion' ? 'API Version' : smartLabel(key), value);
  const { name: _name, namespace: _namespace, labels: _labels, annotations: _annotations, managedFields: _managed, ...metadata } = object.metadata;
  printValue(w, 0, 'Metadata', metadata);
};
