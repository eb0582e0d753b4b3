/**
 * The manifest corpus of `manifests/`: files shaped like what users apply (documentation
 * examples, `helm template` output, operator bundles), read as kubectl reads them (multi-
 * document YAML, `kind: List` flattened), with the namespace each file is applied in, and
 * the comparison of what was applied with what the server gives back (kube's canonical
 * quantities and base64 accepted as the same value, fields kube adds ignored).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { kindByGroupKind } from '../../schemas/kinds/registry.ts';
import { canonicalQuantity } from '../../schemas/quantity.ts';

/** One object of a manifest file. */
export interface CorpusObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { name?: string; generateName?: string; namespace?: string; labels?: Record<string, string> };
  readonly [field: string]: unknown;
}

/** One manifest file and how it is applied. */
export interface CorpusFile {
  /** Path relative to `manifests/`, e.g. `docs/pods/commands.yaml`. */
  readonly name: string;
  readonly path: string;
  /** Its objects in order, `kind: List` items flattened. */
  readonly objects: readonly CorpusObject[];
  /** `kubectl create` (some object has only a generateName) instead of `kubectl apply`. */
  readonly create: boolean;
  /** `-n` for the file: its own namespace unless some object names one. */
  readonly namespace: string | undefined;
  /** For files under `invalid/`: the message kubectl must print (the field kube names). */
  readonly rejection: RegExp | undefined;
}

export const MANIFESTS_DIR = new URL('./manifests/', import.meta.url).pathname;

const yamlFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? yamlFiles(join(dir, entry.name)) : entry.name.endsWith('.yaml') ? [join(dir, entry.name)] : []))
    .sort();

const flatten = (value: unknown): CorpusObject[] => {
  if (value === null || typeof value !== 'object') return [];
  const object = value as CorpusObject & { items?: unknown[] };
  if (object.kind === 'List') return (object.items ?? []).flatMap(flatten);
  return [object];
};

/** A namespace name (DNS label) for a file: `c-` and the file path, shortened with a hash when too long. */
const namespaceFor = (name: string, index: number): string => {
  const slug = name.replace(/\.yaml$/, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  return `c${index}-${slug}`.slice(0, 63).replace(/-+$/, '');
};

/** Every file of the corpus, in path order. */
export const loadCorpus = (dir = MANIFESTS_DIR): CorpusFile[] =>
  yamlFiles(dir).map((path, index) => {
    const name = relative(dir, path);
    const text = readFileSync(path, 'utf8');
    // kubectl reads YAML 1.1 (sigs.k8s.io/yaml): `defaultMode: 0644` is octal 420.
    const documents = parseAllDocuments(text, { version: '1.1' });
    for (const document of documents) {
      if (document.errors.length > 0) throw new Error(`${name}: ${document.errors.map((e) => e.message).join('; ')}`);
    }
    const objects = documents.flatMap((document) => flatten(document.toJSON()));
    const rejection = /^# invalid: (.+)$/m.exec(text)?.[1];
    const namesNamespace = objects.some((o) => o.metadata?.namespace !== undefined);
    return {
      name,
      path,
      objects,
      create: objects.some((o) => !o.metadata?.name && o.metadata?.generateName),
      namespace: namesNamespace ? undefined : namespaceFor(name, index),
      rejection: rejection === undefined ? undefined : new RegExp(rejection),
    };
  });

/** The namespaces a file's objects name that the file does not create itself. */
export const namespacesNeeded = (file: CorpusFile): string[] => {
  const created = new Set(file.objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name));
  return [...new Set(file.objects.map((o) => o.metadata.namespace).filter((ns): ns is string => ns !== undefined && !created.has(ns)))];
};

const BASE64_FIELDS: Readonly<Record<string, readonly string[]>> = { Secret: ['data'], ConfigMap: ['binaryData'] };

const sameBase64 = (applied: unknown, got: unknown): boolean =>
  typeof applied === 'string' && typeof got === 'string' && Buffer.from(applied, 'base64').equals(Buffer.from(got, 'base64'));

const sameScalar = (applied: unknown, got: unknown): boolean => {
  if (applied === got) return true;
  if ((typeof applied === 'number' || typeof applied === 'string') && typeof got === 'string') {
    try {
      // A quantity comes back in kube's canonical form: `0.5` → `500m`, `1e9` → `1G`.
      return canonicalQuantity(applied) === got || canonicalQuantity(canonicalQuantity(applied)) === got;
    } catch {
      return false;
    }
  }
  return false;
};

/**
 * Where `got` (what the server returned) lost or changed a field of `applied`: paths such
 * as `spec.containers[0].securityContext` with what was sent and what came back. Nulls and
 * empty values the server may drop (kube drops them too) are not differences.
 */
export const differences = (applied: CorpusObject, got: unknown): string[] => {
  const out: string[] = [];
  const base64 = new Set((BASE64_FIELDS[applied.kind] ?? []).map((field) => field));
  const visit = (sent: unknown, back: unknown, path: string, encoded: boolean): void => {
    if (sent === null || sent === undefined) return;
    if (Array.isArray(sent)) {
      if (sent.length === 0 && (back === undefined || back === null)) return;
      if (!Array.isArray(back)) {
        out.push(`${path}: sent ${JSON.stringify(sent)}, got ${JSON.stringify(back)}`);
        return;
      }
      sent.forEach((item, i) => visit(item, back[i], `${path}[${i}]`, encoded));
      return;
    }
    if (typeof sent === 'object') {
      const entries = Object.entries(sent as Record<string, unknown>);
      if (entries.length === 0 && (back === undefined || back === null)) return;
      if (back === null || typeof back !== 'object' || Array.isArray(back)) {
        out.push(`${path}: sent ${JSON.stringify(sent)}, got ${JSON.stringify(back)}`);
        return;
      }
      for (const [key, value] of entries) {
        const child = path === '' ? key : `${path}.${key}`;
        visit(value, (back as Record<string, unknown>)[key], child, path === '' && base64.has(key) ? true : encoded);
      }
      return;
    }
    if (encoded ? sameBase64(sent, back) : sameScalar(sent, back)) return;
    out.push(`${path}: sent ${JSON.stringify(sent)}, got ${JSON.stringify(back)}`);
  };
  // stringData is write-only: kube folds it into data (checked there), never returns it.
  const { stringData, ...rest } = applied as CorpusObject & { stringData?: Record<string, string> };
  const expected = stringData
    ? { ...rest, data: { ...(rest['data'] as Record<string, string> | undefined), ...Object.fromEntries(Object.entries(stringData).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) } }
    : rest;
  visit(expected, got, '', false);
  return out;
};

/** The API path of an object as applied in `namespace` (`/apis/apps/v1/namespaces/ns/deployments/web`). */
export const objectPath = (object: CorpusObject, namespace: string): string => {
  const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : ['', object.apiVersion];
  const kind = kindByGroupKind(group ?? '', object.kind);
  if (!kind) throw new Error(`${object.apiVersion} ${object.kind} is not a registered kind`);
  const prefix = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  const scope = kind.scope === 'Namespaced' ? `/namespaces/${object.metadata.namespace ?? namespace}` : '';
  return `${prefix}${scope}/${kind.plural}/${object.metadata.name}`;
};
