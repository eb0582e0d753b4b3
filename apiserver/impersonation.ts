/**
 * Impersonation, as kube-apiserver's `WithImpersonation` filter
 * (k8s.io/apiserver/pkg/endpoints/filters/impersonation.go): a request carrying
 * `Impersonate-User` (with `Impersonate-Group`, `Impersonate-Uid`, `Impersonate-Extra-<key>`)
 * acts as that user once the authenticated user may `impersonate` each thing it asks for:
 * `users` (or `serviceaccounts` in their namespace for `system:serviceaccount:NS:NAME`) and
 * `groups` in the core group, `uids` and `userextras/<key>` in `authentication.k8s.io`.
 * `kubectl --as`, `--as-group`, `--as-uid` send these headers.
 */
import type { IncomingMessage } from 'node:http';
import { AUTHENTICATED_GROUP, type UserInfo } from './auth.ts';
import type { ResourceAttributes } from './authorization/attributes.ts';
import type { Authorizer } from './authorization/decision.ts';
import { forbidden } from './authorization/errors.ts';
import { apiErrors } from './errors.ts';

const USER_HEADER = 'impersonate-user';
const UID_HEADER = 'impersonate-uid';
const GROUP_HEADER = 'impersonate-group';
const EXTRA_PREFIX = 'impersonate-extra-';

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
const ANONYMOUS_USER = 'system:anonymous';
const UNAUTHENTICATED_GROUP = 'system:unauthenticated';

/** At most this many groups and extra values, each at most this long (a request's headers are bounded anyway; these keep the user small). */
const MAX_VALUES = 100;
const MAX_VALUE_LENGTH = 1024;

/** The values of a header that may repeat (Node joins repeats of unknown headers with ", "; `rawHeaders` keeps them apart). */
const headerValues = (req: IncomingMessage, name: string): string[] => {
  const values: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() === name) values.push(req.rawHeaders[i + 1]!);
  }
  return values;
};

/** `Impersonate-Extra-<key>` headers by key, the key unescaped as kube does (it is %-encoded on the wire). */
const extraHeaders = (req: IncomingMessage): Map<string, string[]> => {
  const extra = new Map<string, string[]>();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    if (!name.startsWith(EXTRA_PREFIX)) continue;
    let key: string;
    try {
      key = decodeURIComponent(name.slice(EXTRA_PREFIX.length));
    } catch {
      throw apiErrors.badRequest(`invalid ${req.rawHeaders[i]} header: the key is not a valid percent-encoding`);
    }
    extra.set(key, [...(extra.get(key) ?? []), req.rawHeaders[i + 1]!]);
  }
  return extra;
};

const bounded = (what: string, values: readonly string[]): void => {
  if (values.length > MAX_VALUES) throw apiErrors.badRequest(`too many ${what}: at most ${MAX_VALUES}`);
  const long = values.find((value) => value.length > MAX_VALUE_LENGTH);
  if (long !== undefined) throw apiErrors.badRequest(`${what} longer than ${MAX_VALUE_LENGTH} characters`);
};

/** Whether the request asks to impersonate anyone. */
export const wantsImpersonation = (req: IncomingMessage): boolean =>
  req.rawHeaders.some((header, i) => i % 2 === 0 && (header.toLowerCase().startsWith('impersonate-')));

/**
 * The user `user` acts as: itself without impersonation headers; else the impersonated user,
 * once `authorizer` let `user` impersonate every part of it. Throws 400 for headers that ask
 * for groups, a uid or extras without a user, 403 naming the first part it may not take.
 */
export const impersonate = (req: IncomingMessage, user: UserInfo, authorizer: Authorizer): UserInfo => {
  if (!wantsImpersonation(req)) return user;
  const names = headerValues(req, USER_HEADER);
  const uids = headerValues(req, UID_HEADER);
  const groups = headerValues(req, GROUP_HEADER);
  const extra = extraHeaders(req);
  bounded('impersonated groups', groups);
  for (const [key, values] of extra) bounded(`values of impersonated extra ${key}`, values);
  if (extra.size > MAX_VALUES) throw apiErrors.badRequest(`too many impersonated extras: at most ${MAX_VALUES}`);
  const name = names[0];
  if (name === undefined || name === '') {
    const asked = [...groups.map((g) => `groups=${g}`), ...uids.map((u) => `uid=${u}`), ...[...extra].map(([k, v]) => `extra[${k}]=${v.join(',')}`)];
    throw apiErrors.badRequest(`requested [${asked.join(' ')}] without impersonating a user`);
  }
  if (names.length > 1 || uids.length > 1) throw apiErrors.badRequest('only one user and one uid may be impersonated');
  bounded('the impersonated user', [name, ...uids]);

  const check = (attributes: Omit<ResourceAttributes, 'type' | 'user' | 'verb' | 'apiVersion' | 'subresource'> & { subresource?: string }): void => {
    const full: ResourceAttributes = { type: 'resource', user, verb: 'impersonate', apiVersion: '*', subresource: '', ...attributes };
    const decision = authorizer.authorize(full);
    if (decision.type !== 'allow') throw forbidden(full, decision.reason);
  };

  let impersonatedGroups = [...groups];
  if (name.startsWith(SERVICE_ACCOUNT_PREFIX)) {
    const [namespace = '', account = ''] = name.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
    check({ apiGroup: '', resource: 'serviceaccounts', namespace, name: account });
    // A service account's groups are known: kube adds them unless groups were asked for.
    if (groups.length === 0) impersonatedGroups = ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
  } else {
    check({ apiGroup: '', resource: 'users', namespace: '', name });
  }
  for (const group of groups) check({ apiGroup: '', resource: 'groups', namespace: '', name: group });
  for (const uid of uids) check({ apiGroup: 'authentication.k8s.io', resource: 'uids', namespace: '', name: uid });
  for (const [key, values] of extra) {
    for (const value of values) check({ apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: key, namespace: '', name: value });
  }
  // kube adds system:authenticated to a non-anonymous user unless it was asked for, or system:unauthenticated was.
  if (name !== ANONYMOUS_USER && !impersonatedGroups.some((g) => g === AUTHENTICATED_GROUP || g === UNAUTHENTICATED_GROUP)) {
    impersonatedGroups.push(AUTHENTICATED_GROUP);
  }
  return {
    name,
    uid: uids[0] ?? '',
    groups: impersonatedGroups,
    ...(extra.size > 0 ? { extra: Object.fromEntries(extra) } : {}),
    impersonatedBy: user,
  };
};
