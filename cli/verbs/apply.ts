/**
 * `logplane apply -f FILE|DIR|-`: client-side apply like kubectl's. Each document of each
 * manifest is read (multi-document YAML or JSON, `kind: List` expanded), then GET → on
 * 404 POST (`created`), else the manifest is merged onto the live object (three-way, with
 * the `kubectl.kubernetes.io/last-applied-configuration` annotation telling which fields
 * the manifest dropped) and PUT with the live resourceVersion (`configured`), or nothing
 * is sent when the merge changes nothing (`unchanged`). A 409 is retried once on a fresh GET.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { Command } from 'commander';
import YAML from 'yaml';
import type { KubeObject } from '../../schemas/index.ts';
import { ApiError, ConnectionError, type Client } from '../client.ts';
import { action, connect, out, printError, ReportedError, withConnectionOptions, withNamespaceOption } from './common.ts';
import { NoKindMatchError, objectPath, typedName, type Resources, type ResourceType } from './kinds.ts';

/** The annotation kubectl keeps the last applied manifest in. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** One object read from a manifest. */
export interface Manifest {
  readonly object: Record<string, unknown>;
  /** The file it came from (`-` for stdin), for messages. */
  readonly source: string;
}

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The objects of a manifest: every non-empty YAML document (JSON is YAML too), with the
 * items of `kind: List` documents spliced in. Throws on a syntax error or a document that
 * is not an object with `apiVersion` and `kind`.
 */
export const parseManifests = (text: string, source: string): Manifest[] => {
  const manifests: Manifest[] = [];
  const documents = YAML.parseAllDocuments(text);
  const all = Array.isArray(documents) ? documents : [documents];
  all.forEach((document, index) => {
    const problem = document.errors[0];
    if (problem) throw new Error(`error parsing ${source}: ${problem.message}`);
    const value: unknown = document.toJS();
    if (value === null || value === undefined) return;
    const add = (object: unknown, where: string): void => {
      if (!isMap(object)) throw new Error(`error validating ${JSON.stringify(source)}: ${where} is not an object`);
      const missing = ['apiVersion', 'kind'].filter((field) => typeof object[field] !== 'string' || object[field] === '');
      if (missing.length > 0) {
        throw new Error(`error validating ${JSON.stringify(source)}: error validating data: [${missing.map((m) => `${m} not set`).join(', ')}]`);
      }
      if (typeof object['kind'] === 'string' && object['kind'].endsWith('List') && Array.isArray(object['items'])) {
        (object['items'] as unknown[]).forEach((item, i) => add(item, `${where}, item ${i}`));
        return;
      }
      manifests.push({ object, source });
    };
    add(value, `document ${index + 1}`);
  });
  return manifests;
};

/**
 * The manifest files named by `-f`: a file, every `.yaml`/`.yml`/`.json` file of a
 * directory (sorted; sub-directories too with `recursive`), or `-` for stdin.
 */
export const manifestFiles = (path: string, recursive: boolean): string[] => {
  if (path === '-') return ['-'];
  if (!existsSync(path)) throw new Error(`the path "${path}" does not exist`);
  const stat = statSync(path);
  if (!stat.isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((entry) => {
      const full = join(path, entry);
      if (statSync(full).isDirectory()) return recursive ? manifestFiles(full, true) : [];
      return ['.yaml', '.yml', '.json'].includes(extname(entry)) ? [full] : [];
    });
};

/** Reads and parses every manifest named by the `-f` values. */
export const readManifests = async (paths: readonly string[], recursive: boolean): Promise<Manifest[]> => {
  const manifests: Manifest[] = [];
  for (const path of paths) {
    for (const file of manifestFiles(path, recursive)) {
      const text = file === '-' ? await readStdin() : readFileSync(file, 'utf8');
      manifests.push(...parseManifests(text, file));
    }
  }
  return manifests;
};

const readStdin = async (): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/** A manifest resolved to its resource type, namespace and name. */
export interface Target {
  readonly type: ResourceType;
  readonly namespace: string | undefined;
  readonly name: string;
}

/**
 * Where a manifest goes. The namespace is the manifest's, else the default one; with an
 * explicit `-n` that differs from the manifest's, this throws like kubectl.
 */
export const targetOf = (manifest: Manifest, resources: Resources, defaultNamespace: string, explicitNamespace: boolean): Target => {
  const { object } = manifest;
  const kind = String(object['kind']);
  const apiVersion = String(object['apiVersion']);
  let type: ResourceType;
  try {
    type = resources.forApiVersionKind(apiVersion, kind);
  } catch (error) {
    if (!(error instanceof NoKindMatchError)) throw error;
    throw new Error(`resource mapping not found for ${JSON.stringify(manifest.source)}: ${error.message}`);
  }
  const metadata = isMap(object['metadata']) ? object['metadata'] : {};
  const name = typeof metadata['name'] === 'string' ? metadata['name'] : '';
  if (!name) {
    if (typeof metadata['generateName'] === 'string') throw new Error(`from ${metadata['generateName']}: cannot use generate name with apply`);
    throw new Error(`error validating ${JSON.stringify(manifest.source)}: metadata.name not set`);
  }
  if (!type.namespaced) return { type, namespace: undefined, name };
  const own = typeof metadata['namespace'] === 'string' && metadata['namespace'] !== '' ? metadata['namespace'] : undefined;
  if (own !== undefined && explicitNamespace && own !== defaultNamespace) {
    throw new Error(
      `the namespace from the provided object "${own}" does not match the namespace "${defaultNamespace}". You must pass '--namespace=${own}' to perform this operation.`,
    );
  }
  return { type, namespace: own ?? defaultNamespace, name };
};

const SERVER_OWNED_METADATA = ['resourceVersion', 'uid', 'creationTimestamp', 'generation', 'deletionTimestamp', 'deletionGracePeriodSeconds'];

/**
 * The manifest as it will be recorded in the last-applied annotation: server-owned fields
 * (status, resourceVersion, uid …) and the annotation itself removed, the namespace filled in.
 */
export const desiredObject = (manifest: Manifest, target: Target): Record<string, unknown> => {
  const desired = structuredClone(manifest.object);
  delete desired['status'];
  const metadata: Record<string, unknown> = isMap(desired['metadata']) ? desired['metadata'] : {};
  for (const field of SERVER_OWNED_METADATA) delete metadata[field];
  if (target.namespace !== undefined) metadata['namespace'] = target.namespace;
  if (isMap(metadata['annotations'])) {
    delete metadata['annotations'][LAST_APPLIED_ANNOTATION];
    if (Object.keys(metadata['annotations']).length === 0) delete metadata['annotations'];
  }
  desired['metadata'] = metadata;
  return desired;
};

/** Fields that identify an item of a list, tried in order (strategic merge's merge keys: containers and env by name, ports by number …). */
const MERGE_KEYS = ['name', 'containerPort', 'port', 'ip'] as const;

/** The field that identifies every item of both lists (present and unique in each), if any. */
const mergeKeyOf = (desired: readonly unknown[], current: readonly unknown[]): string | undefined =>
  MERGE_KEYS.find((key) =>
    [desired, current].every((list) => {
      if (list.length === 0 || !list.every((item) => isMap(item) && (typeof item[key] === 'string' || typeof item[key] === 'number'))) return false;
      return new Set(list.map((item) => (item as Record<string, unknown>)[key])).size === list.length;
    }),
  );

/**
 * Merges `desired` onto `current`: maps merge key by key; lists whose items carry an
 * identifying field (containers and env by `name`, container ports by `containerPort`,
 * service ports by `port`) merge item by item, so fields the server defaulted survive;
 * other lists and scalars are replaced; `null` removes a field; and fields that
 * `lastApplied` had but `desired` no longer has are removed.
 */
export const threeWayMerge = (current: unknown, desired: unknown, lastApplied: unknown): unknown => {
  if (isMap(desired)) {
    if (!isMap(current)) return stripNulls(desired);
    const result: Record<string, unknown> = { ...current };
    for (const [key, value] of Object.entries(desired)) {
      if (value === null) delete result[key];
      else result[key] = threeWayMerge(current[key], value, isMap(lastApplied) ? lastApplied[key] : undefined);
    }
    if (isMap(lastApplied)) {
      for (const key of Object.keys(lastApplied)) if (!(key in desired)) delete result[key];
    }
    return result;
  }
  if (Array.isArray(desired) && Array.isArray(current)) {
    const key = mergeKeyOf(desired, current);
    if (key !== undefined) {
      const previous = Array.isArray(lastApplied) ? lastApplied : [];
      const sameItem = (item: unknown) => (other: unknown) => isMap(other) && isMap(item) && other[key] === item[key];
      return desired.map((item) => threeWayMerge(current.find(sameItem(item)), item, previous.find(sameItem(item))));
    }
  }
  return stripNulls(desired);
};

const stripNulls = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(stripNulls);
  if (isMap(value)) return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, stripNulls(v)]));
  return value;
};

/** Structural equality of JSON values (key order ignored). */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isMap(a) && isMap(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return false;
};

const withLastApplied = (object: Record<string, unknown>, lastApplied: string): Record<string, unknown> => {
  const metadata = isMap(object['metadata']) ? object['metadata'] : {};
  const annotations = isMap(metadata['annotations']) ? metadata['annotations'] : {};
  return { ...object, metadata: { ...metadata, annotations: { ...annotations, [LAST_APPLIED_ANNOTATION]: lastApplied } } };
};

/** What applying one manifest did. */
export type ApplyOutcome = 'created' | 'configured' | 'unchanged';

/**
 * The object to PUT so the live object matches the manifest, or `undefined` when it
 * already does.
 */
export const planUpdate = (current: Record<string, unknown>, desired: Record<string, unknown>): Record<string, unknown> | undefined => {
  const metadata = isMap(current['metadata']) ? current['metadata'] : {};
  const annotations = isMap(metadata['annotations']) ? metadata['annotations'] : {};
  const previousText = annotations[LAST_APPLIED_ANNOTATION];
  let previous: unknown;
  if (typeof previousText === 'string') {
    try {
      previous = JSON.parse(previousText);
    } catch {
      previous = undefined;
    }
  }
  const lastApplied = JSON.stringify(desired);
  const merged = withLastApplied(threeWayMerge(current, desired, previous) as Record<string, unknown>, lastApplied);
  const mergedMetadata = merged['metadata'] as Record<string, unknown>;
  mergedMetadata['resourceVersion'] = metadata['resourceVersion'];
  return jsonEqual(merged, current) ? undefined : merged;
};

/** Applies one manifest: create, update (retrying once on a conflict) or nothing. */
export const applyManifest = async (client: Client, manifest: Manifest, target: Target): Promise<ApplyOutcome> => {
  const path = objectPath(target.type, target.namespace, target.name);
  const desired = desiredObject(manifest, target);
  for (let attempt = 0; ; attempt++) {
    let current: Record<string, unknown>;
    try {
      current = await client.get<Record<string, unknown>>(path);
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 404) throw error;
      const collection = path.slice(0, path.lastIndexOf('/'));
      await client.request<KubeObject>('POST', collection, {
        body: withLastApplied(desired, JSON.stringify(desired)),
        query: { fieldManager: 'logplane-client-side-apply' },
      });
      return 'created';
    }
    const update = planUpdate(current, desired);
    if (!update) return 'unchanged';
    try {
      await client.request<KubeObject>('PUT', path, { body: update, query: { fieldManager: 'logplane-client-side-apply' } });
      return 'configured';
    } catch (error) {
      if (error instanceof ApiError && error.code === 409 && attempt === 0) continue;
      throw error;
    }
  }
};

/** Registers `apply`. */
export const registerApply = (program: Command): void => {
  const command = program
    .command('apply')
    .description('Create or update objects from manifests (multi-document YAML or JSON)')
    .requiredOption('-f, --filename <path...>', 'manifest file, directory, or - for stdin (repeatable)')
    .option('-R, --recursive', 'also read sub-directories of a -f directory', false);
  withNamespaceOption(command);
  withConnectionOptions(command);
  command.action(
    action(async (cmd) => {
      const options = cmd.opts<{ filename: string[]; recursive: boolean }>();
      const manifests = await readManifests(options.filename, options.recursive);
      if (manifests.length === 0) throw new Error('no objects passed to apply');
      const session = connect(cmd);
      const resources = await session.resources();
      let failures = 0;
      for (const manifest of manifests) {
        try {
          const target = targetOf(manifest, resources, session.namespace, session.explicitNamespace);
          const outcome = await applyManifest(session.client, manifest, target);
          out(`${typedName(target.type, target.name)} ${outcome}\n`);
        } catch (error) {
          if (error instanceof ConnectionError) throw error;
          printError(error);
          failures++;
        }
      }
      if (failures > 0) throw new ReportedError(failures);
    }),
  );
};
