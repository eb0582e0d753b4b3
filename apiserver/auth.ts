/**
 * Authentication with static bearer tokens, from a token file in kube-apiserver's format
 * (`--token-auth-file`): CSV lines `token,user,uid,"group1,group2"`.
 *
 * Every authenticated user is also in `system:authenticated`, as kube adds it. What a user
 * may do is the authorizer's (`authorization/`); the user is recorded as the actor of every
 * event it appends.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { Actor } from '../schemas/index.ts';
import { apiErrors } from './errors.ts';

/** An authenticated user. */
export interface UserInfo {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
  /** Extra attributes (kube's `UserInfo.Extra`), e.g. those an impersonating request names. */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
  /** The authenticated user acting as this one (`Impersonate-User`), if any. */
  readonly impersonatedBy?: UserInfo;
}

/** Parsed token file: token → user. */
export interface TokenFile {
  readonly users: ReadonlyMap<string, UserInfo>;
}

/** Splits one CSV line, honouring double quotes (`""` is a literal quote). */
const splitCsvLine = (line: string): string[] => {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') {
        quoted = false;
      } else {
        field += char;
      }
    } else if (char === '"') {
      quoted = true;
    } else if (char === ',') {
      fields.push(field);
      field = '';
    } else {
      field += char;
    }
  }
  fields.push(field);
  return fields.map((f) => f.trim());
};

/**
 * Parses a token file's text. Blank lines and `#` comments are skipped; a line needs at
 * least a token and a user name. Throws naming the line otherwise.
 */
export const parseTokenFile = (text: string): TokenFile => {
  const users = new Map<string, UserInfo>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const [token = '', name = '', uid = '', groups = ''] = splitCsvLine(line);
    if (token === '' || name === '') {
      throw new Error(`token file line ${index + 1}: expected token,user[,uid[,"group1,group2"]]`);
    }
    users.set(token, {
      name,
      uid: uid === '' ? name : uid,
      groups: groups.split(',').map((g) => g.trim()).filter((g) => g !== ''),
    });
  });
  return { users };
};

/** Reads and parses a token file from disk. */
export const loadTokenFile = (path: string): TokenFile => parseTokenFile(readFileSync(path, 'utf8'));

/** Formats users as token file text (for `logplane up` and tests that write a kubeconfig). */
export const formatTokenFile = (entries: readonly { token: string; user: UserInfo }[]): string =>
  entries.map(({ token, user }) => `${token},${user.name},${user.uid},"${user.groups.join(',')}"`).join('\n') + '\n';

/** The group kube adds to every authenticated user. */
export const AUTHENTICATED_GROUP = 'system:authenticated';

/** The user a bearer token stands for, with `system:authenticated` added (kube's `AuthenticatedGroupAdder`). */
export const authenticateToken = (tokens: TokenFile, token: string): UserInfo | undefined => {
  const user = tokens.users.get(token);
  if (!user) return undefined;
  return user.groups.includes(AUTHENTICATED_GROUP) ? user : { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
};

/**
 * The user of a request: from `Authorization: Bearer <token>`. Throws 401 Unauthorized
 * for a missing or unknown token.
 */
export const authenticate = (tokens: TokenFile, req: IncomingMessage): UserInfo => {
  const token = bearerToken(req);
  const user = token === undefined ? undefined : authenticateToken(tokens, token);
  if (!user) throw apiErrors.unauthorized();
  return user;
};

/** The token of `Authorization: Bearer <token>`, or undefined. */
export const bearerToken = (req: IncomingMessage): string | undefined => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return match ? match[1] : undefined;
};

/**
 * The actor of the events a user's request appends: `system:controller:<name>` is a
 * controller, `system:node:<name>` a node agent, everyone else a user.
 */
export const actorOf = (user: UserInfo): Actor => {
  const controller = /^system:controller:(.+)$/.exec(user.name);
  if (controller) return { type: 'controller', name: controller[1]! };
  const node = /^system:node:(.+)$/.exec(user.name);
  if (node) return { type: 'node', name: node[1]! };
  return { type: 'user', name: user.name };
};

/** The group of the controllers' identities (`system:controller:<name>`). */
export const CONTROLLERS_GROUP = 'system:controllers';

/** The scheduler's identity, as kube-scheduler's. */
export const SCHEDULER_USER = 'system:kube-scheduler';

/**
 * Whether a user speaks for a controller: a member of `system:controllers`, or the scheduler.
 * Only they may say which event caused a write and which position their decision read
 * (`X-Logplane-Causation-Id`, `-Correlation-Id`, `-Decided-At`).
 */
export const isControllerIdentity = (user: UserInfo): boolean =>
  user.groups.includes(CONTROLLERS_GROUP) || user.name === SCHEDULER_USER;

/** Paths anyone may read without a token. */
export const ANONYMOUS_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/livez']);
