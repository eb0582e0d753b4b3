/**
 * `--authorization-mode`: kube-apiserver's comma-separated list of authorizers, asked in
 * order after the `system:masters` group (always allowed, as kube's superuser authorizer).
 * logplane has kube's `AlwaysAllow`, `AlwaysDeny`, `Node` and `RBAC`.
 */
import type { Projection } from '../../projections/index.ts';
import { assertNever } from '../../schemas/index.ts';
import { alwaysAllow, alwaysDeny, privilegedGroups, SYSTEM_MASTERS, unionAuthorizer, type Authorizer } from './decision.ts';
import { AuthorizationModeError } from './errors.ts';
import { AUTHORIZATION_MODES, type AuthorizationMode, parseAuthorizationModes } from './mode-names.ts';
import { createNodeAuthorizer } from './node.ts';
import { createPolicyIndex } from './policy-index.ts';
import { createRbacAuthorizer } from './rbac.ts';

export { AUTHORIZATION_MODES, type AuthorizationMode, parseAuthorizationModes };

/** The authorizer of a server, and how to release what it holds. */
export interface Authorization {
  readonly authorizer: Authorizer;
  readonly modes: readonly AuthorizationMode[];
  /** Whether RBAC is one of the modes (the bootstrap roles are then ensured at start). */
  readonly rbac: boolean;
  close(): void;
}

/** Builds the union of `modes` (after the system:masters authorizer) over `projection`. */
export const createAuthorization = (modes: readonly AuthorizationMode[], projection: Projection): Authorization => {
  if (modes.length === 0) throw new AuthorizationModeError('--authorization-mode: at least one mode is required');
  const closers: (() => void)[] = [];
  const authorizers: Authorizer[] = [privilegedGroups(SYSTEM_MASTERS)];
  for (const mode of modes) {
    switch (mode) {
      case 'AlwaysAllow':
        authorizers.push(alwaysAllow);
        break;
      case 'AlwaysDeny':
        authorizers.push(alwaysDeny);
        break;
      case 'Node':
        authorizers.push(createNodeAuthorizer(projection));
        break;
      case 'RBAC': {
        const index = createPolicyIndex(projection);
        closers.push(() => index.close());
        authorizers.push(createRbacAuthorizer(index));
        break;
      }
      default:
        assertNever(mode, 'authorization mode');
    }
  }
  return {
    authorizer: unionAuthorizer(authorizers),
    modes,
    rbac: modes.includes('RBAC'),
    close: () => closers.forEach((close) => close()),
  };
};
