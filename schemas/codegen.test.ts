import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GENERATED_TYPES, generateTypes } from './codegen.ts';
import { loadSchemaRegistry } from './registry.ts';

describe('generated types', () => {
  it('match the newest schema (run `npx tsx schemas/codegen.ts` if not)', () => {
    expect(readFileSync(GENERATED_TYPES, 'utf8')).toBe(generateTypes(loadSchemaRegistry().current));
  });
});
