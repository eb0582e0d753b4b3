/** Errors of the audit log. */

/** An audit policy file or option that cannot be used; the message names what is wrong. Not retriable. */
export class AuditPolicyError extends Error {
  override readonly name = 'AuditPolicyError';
  readonly retriable = false;
  constructor(message: string) {
    super(`audit policy: ${message}`);
  }
}
