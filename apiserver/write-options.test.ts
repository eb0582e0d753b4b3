/**
 * The field-manager options of writes as kube validates them (`ValidatePatchOptions`,
 * `ValidateFieldManager`) and the manager kube derives from the User-Agent
 * (`prefixFromUserAgent`).
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.ts';
import { managerOf, parseWriteOptions } from './write-options.ts';

const optionsError = (run: () => unknown): ApiError => {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected the options to be refused');
};

describe('write options: fieldManager and force', () => {
  it('requires fieldManager for apply patches, with kube message', () => {
    const error = optionsError(() => parseWriteOptions('PatchOptions', new URLSearchParams(), { apply: true }));
    expect(error.status).toMatchObject({ code: 422, message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch' });
    expect(parseWriteOptions('PatchOptions', new URLSearchParams('fieldManager=ci&force=true'), { apply: true })).toMatchObject({ fieldManager: 'ci', force: true });
  });

  it('forbids force on other patches, and refuses long or unprintable managers', () => {
    expect(optionsError(() => parseWriteOptions('PatchOptions', new URLSearchParams('force=true'), { apply: false })).status.message).toBe(
      'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
    );
    expect(optionsError(() => parseWriteOptions('UpdateOptions', new URLSearchParams({ fieldManager: 'x'.repeat(129) }))).status.message).toContain('fieldManager: Too long');
    expect(optionsError(() => parseWriteOptions('CreateOptions', new URLSearchParams({ fieldManager: 'bad\u0007name' }))).status.message).toContain('fieldManager: Invalid value: "bad\\u0007name": invalid characters');
  });

  it('records the User-Agent up to its first slash when no fieldManager is given', () => {
    const none = parseWriteOptions('UpdateOptions', new URLSearchParams());
    expect(managerOf(none, 'kubectl/v1.32.0 (linux/amd64) kubernetes/abc')).toBe('kubectl');
    expect(managerOf(none, 'logplane-cli')).toBe('logplane-cli');
    expect(managerOf(none, undefined)).toBe('');
    expect(managerOf(parseWriteOptions('UpdateOptions', new URLSearchParams('fieldManager=mine')), 'kubectl/v1.32.0')).toBe('mine');
  });
});
