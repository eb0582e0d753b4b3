/**
 * Errors of authorization: a bad `--authorization-mode`, and the 403 Forbidden Status of a
 * denied request with kube-apiserver's exact message (`responsewriters.Forbidden`).
 */
import { ApiError } from '../errors.ts';
import { failureStatus } from '../status.ts';
import type { Attributes } from './attributes.ts';

/** A bad `--authorization-mode`; the message says what is accepted. Not retriable. */
export class AuthorizationModeError extends Error {
  override readonly name = 'AuthorizationModeError';
  readonly retriable = false;
}

/**
 * `User "x" cannot list resource "pods" in API group "" in the namespace "default"`, or
 * `… at the cluster scope`, or `User "x" cannot get path "/logplane/v1/audit"`.
 */
export const forbiddenMessage = (attributes: Attributes): string => {
  const user = JSON.stringify(attributes.user.name);
  if (attributes.type === 'nonResource') return `User ${user} cannot ${attributes.verb} path ${JSON.stringify(attributes.path)}`;
  const resource = attributes.subresource === '' ? attributes.resource : `${attributes.resource}/${attributes.subresource}`;
  const what = `User ${user} cannot ${attributes.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(attributes.apiGroup)}`;
  return attributes.namespace === '' ? `${what} at the cluster scope` : `${what} in the namespace ${JSON.stringify(attributes.namespace)}`;
};

/** kube escapes the message's user-supplied parts for HTML (its `sanitizer`). */
const sanitize = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The 403 of a denied request, as kube's `NewForbidden(groupResource, name, err)`:
 * `pods "x" is forbidden: …` (or `forbidden: …` for a path), reason Forbidden, details
 * {group, kind: the resource, name}; the authorizers' reason, if any, after a colon.
 */
export const forbidden = (attributes: Attributes, reason: string): ApiError => {
  const message = sanitize(forbiddenMessage(attributes));
  const detail = reason === '' ? message : `${message}: ${reason}`;
  if (attributes.type === 'nonResource') return new ApiError(failureStatus('Forbidden', `forbidden: ${detail}`, {}));
  const groupResource = attributes.apiGroup === '' ? attributes.resource : `${attributes.resource}.${attributes.apiGroup}`;
  const subject = attributes.name === '' ? groupResource : `${groupResource} ${JSON.stringify(attributes.name)}`;
  return new ApiError(
    failureStatus('Forbidden', `${subject} is forbidden: ${detail}`, {
      ...(attributes.name !== '' ? { name: attributes.name } : {}),
      ...(attributes.apiGroup !== '' ? { group: attributes.apiGroup } : {}),
      kind: attributes.resource,
    }),
  );
};
