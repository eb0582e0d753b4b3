/**
 * Writes the draft schema version generated from the Kubernetes 1.32 API document,
 * `schemas/avro-draft/v5/` (a version directory as `registry.ts` loads them: a
 * `manifest.json` and `.avsc` files in dependency order), and the list of compatibility
 * rules in `schemas/avro-draft/README.md`:
 *
 *     npm run schemas:avro-gen
 *
 * The draft is not a released version: nothing writes it yet, and the TypeScript types
 * stay those of the newest version under `schemas/avro/`. `draft.test.ts` fails when the
 * committed files differ from what this produces.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SchemaError } from '../errors.ts';
import type { KindDescriptor } from '../kinds/descriptor.ts';
import { STORED_KINDS } from '../kinds/registry.ts';
import { loadSchemaRegistry, loadSchemaVersion, type SchemaVersion } from '../registry.ts';
import { analyzeCompatibility } from './compat.ts';
import { carryOverEvents } from './events.ts';
import { generateObjectSchemas } from './generate.ts';
import { loadApiDocument, type ApiDocument } from './openapi.ts';

/** The name of the generated version. */
export const GENERATED_VERSION = 'v9';
/** The directory of the generated version. */
export const DRAFT_DIR = new URL(`../avro/${GENERATED_VERSION}/`, import.meta.url);
/** The generator's README, whose compatibility section is generated. */
export const DRAFT_README = new URL('./README.md', import.meta.url);
/** The root type of the draft, as of every version. */
export const DRAFT_ROOT = 'logplane.event.EventEnvelope';

const SECTION_BEGIN = '<!-- generated compatibility rules: begin (npm run schemas:avro-gen) -->';
const SECTION_END = '<!-- generated compatibility rules: end -->';

/** The draft's files by path relative to `DRAFT_DIR` (manifest.json included), as text. */
export interface Draft {
  readonly files: ReadonlyMap<string, string>;
  /** The compatibility section of the README (between its markers). */
  readonly compatibilitySection: string;
}

/**
 * Generates the draft from the API document, the kinds and the released versions (whose
 * events it must read). Throws a `SchemaError` if a released version cannot be resolved
 * to it.
 */
export function generateDraft(options: {
  document?: ApiDocument;
  kinds?: readonly KindDescriptor[];
  released?: readonly SchemaVersion[];
} = {}): Draft {
  const document = options.document ?? loadApiDocument();
  const kinds = options.kinds ?? STORED_KINDS;
  const released = options.released ?? releasedBefore();
  const compatibility = analyzeCompatibility(document, released, kinds);
  const objects = generateObjectSchemas(document, kinds.map((kind) => kind.definition), compatibility);
  const events = carryOverEvents({
    kindRecords: objects.roots.map((root) => root.name),
    kindNames: objects.roots.map((root) => root.gvk.kind),
    definitions: compatibility.definitions,
  });
  const schemas = [...objects.files, ...events];
  const files = new Map<string, string>([
    ['manifest.json', `${JSON.stringify({ root: DRAFT_ROOT, files: schemas.map((file) => file.path) }, null, 2)}\n`],
    ...schemas.map((file): [string, string] => [file.path, `${JSON.stringify(file.schema, null, 2)}\n`]),
  ]);

  const rules = (title: string, entries: ReadonlyMap<string, readonly string[]>): string[] => [
    `${title} (${entries.size}):`,
    '',
    ...[...entries].sort(([a], [b]) => a.localeCompare(b)).map(([key, reasons]) => `- \`${key.replace('#', '.')}\`: ${reasons.join('; ')}`),
    '',
  ];
  const compatibilitySection = [
    ...rules('Required in Kubernetes, optional here', compatibility.optional),
    ...rules('Optional in Kubernetes, required here', compatibility.keptRequired),
    ...rules('int32 in Kubernetes, long here', compatibility.widenedToLong),
    ...rules(
      'Aliases (released names read into a generated record)',
      new Map([...compatibility.aliases].map(([definition, names]) => [definition, names.map((name) => `\`${name}\``)])),
    ),
  ].join('\n');
  return { files, compatibilitySection };
}

/** The versions released before the generated one, whose events it must read. */
export function releasedBefore(): SchemaVersion[] {
  return loadSchemaRegistry().versions.filter((version) => version.name !== GENERATED_VERSION);
}

/** The README with its compatibility section replaced by `section`. */
export function withCompatibilitySection(readme: string, section: string): string {
  const begin = readme.indexOf(SECTION_BEGIN);
  const end = readme.indexOf(SECTION_END);
  if (begin < 0 || end < begin) {
    throw new SchemaError(`${DRAFT_README.pathname} lacks the markers ${SECTION_BEGIN} … ${SECTION_END}`);
  }
  return `${readme.slice(0, begin + SECTION_BEGIN.length)}\n\n${section}\n${readme.slice(end)}`;
}

/** Replaces the draft directory with `draft`, checks that it loads, and updates the README. */
export function writeDraft(draft: Draft): void {
  rmSync(DRAFT_DIR, { recursive: true, force: true });
  for (const [path, text] of draft.files) {
    const file = new URL(path, DRAFT_DIR);
    mkdirSync(dirname(fileURLToPath(file)), { recursive: true });
    writeFileSync(file, text);
  }
  const version = loadSchemaVersion(DRAFT_DIR, GENERATED_VERSION);
  for (const old of releasedBefore()) {
    version.type.createResolver(old.type);
  }
  writeFileSync(DRAFT_README, withCompatibilitySection(readFileSync(DRAFT_README, 'utf8'), draft.compatibilitySection));
  console.log(`wrote ${draft.files.size} files to ${DRAFT_DIR.pathname} (fingerprint ${version.fingerprintHex})`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeDraft(generateDraft());
}
