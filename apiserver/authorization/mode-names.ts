/**
 * kube-apiserver's `--authorization-mode` names and their parser, apart from the
 * authorizers so that the CLI can parse its flags without loading the apiserver.
 */
import { AuthorizationModeError } from './errors.ts';

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'Node', 'RBAC'] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];

const isMode = (mode: string): mode is AuthorizationMode => (AUTHORIZATION_MODES as readonly string[]).includes(mode);

/** Parses `RBAC` or `AlwaysAllow,RBAC` (kube's names; no repeats, at least one). */
export const parseAuthorizationModes = (text: string): readonly AuthorizationMode[] => {
  const modes = text.split(',').map((mode) => mode.trim());
  const seen = new Set<string>();
  for (const mode of modes) {
    if (!isMode(mode)) {
      throw new AuthorizationModeError(`--authorization-mode: authorization mode ${JSON.stringify(mode)} is not a valid mode; supported modes: ${AUTHORIZATION_MODES.join(', ')}`);
    }
    if (seen.has(mode)) throw new AuthorizationModeError(`--authorization-mode: authorization mode ${JSON.stringify(mode)} is specified more than once`);
    seen.add(mode);
  }
  return modes as AuthorizationMode[];
};
