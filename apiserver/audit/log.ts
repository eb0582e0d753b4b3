/**
 * The audit log, as kube-apiserver's `--audit-log-path` backend: one audit.k8s.io/v1 Event per
 * request the policy records, written as a JSON line when the request completes (stage
 * ResponseComplete), with who asked (and whom it impersonated), what, the answer's status and,
 * for a refusal, the authorizer's decision and reason. It is not the forever log: the file
 * rotates at `maxSizeMB` and keeps `maxBackups` old files (kube's `--audit-log-maxsize`,
 * `--audit-log-maxbackup`), so what any token holder makes it write is bounded.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { createStream, type RotatingFileStream } from 'rotating-file-stream';
import type { UserInfo } from '../auth.ts';
import type { Attributes } from '../authorization/attributes.ts';
import { auditLevelOf, type AuditPolicy } from './policy.ts';

export interface AuditLogOptions {
  readonly path: string;
  readonly policy: AuditPolicy;
  /** Rotate when the file reaches this size (MB, kube's default 100). */
  readonly maxSizeMB?: number;
  /** Old files kept (kube keeps all by default; here 10, so the disk use is bounded). */
  readonly maxBackups?: number;
  readonly logger: Logger;
}

/** What one finished request was, as the apiserver saw it. */
export interface AuditedRequest {
  readonly auditID: string;
  readonly received: Date;
  readonly requestURI: string;
  readonly sourceIP: string | undefined;
  readonly userAgent: string | undefined;
  /** The user the request acted as (impersonated or not); undefined when authentication failed. */
  readonly user: UserInfo | undefined;
  readonly attributes: Attributes | undefined;
  readonly code: number;
  readonly status?: { readonly status?: string; readonly reason?: string; readonly message?: string };
  /** The authorization decision when it refused (kube's `authorization.k8s.io/decision` annotation). */
  readonly denial?: { readonly reason: string };
}

export interface AuditLog {
  /** A new audit ID (sent back as the `Audit-Id` header, as kube does). */
  newId(): string;
  record(request: AuditedRequest): void;
  close(): Promise<void>;
}

/** kube's MicroTime: RFC 3339 with microseconds. */
const microTime = (date: Date): string => date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

const userOf = (user: UserInfo) => ({
  username: user.name,
  ...(user.uid !== '' ? { uid: user.uid } : {}),
  groups: [...user.groups],
  ...(user.extra ? { extra: user.extra } : {}),
});

/** The audit Event of `request`. */
export const auditEvent = (request: AuditedRequest, level: string, now: Date) => {
  const { attributes, user } = request;
  const verb = attributes?.verb ?? '';
  const real = user?.impersonatedBy ?? user;
  return {
    kind: 'Event',
    apiVersion: 'audit.k8s.io/v1',
    level,
    auditID: request.auditID,
    stage: 'ResponseComplete',
    requestURI: request.requestURI,
    verb,
    user: real ? userOf(real) : {},
    ...(user?.impersonatedBy ? { impersonatedUser: userOf(user) } : {}),
    sourceIPs: request.sourceIP ? [request.sourceIP] : [],
    ...(request.userAgent ? { userAgent: request.userAgent } : {}),
    ...(attributes?.type === 'resource'
      ? {
          objectRef: {
            resource: attributes.resource,
            ...(attributes.namespace ? { namespace: attributes.namespace } : {}),
            ...(attributes.name ? { name: attributes.name } : {}),
            ...(attributes.apiGroup ? { apiGroup: attributes.apiGroup } : {}),
            apiVersion: attributes.apiVersion,
            ...(attributes.subresource ? { subresource: attributes.subresource } : {}),
          },
        }
      : {}),
    responseStatus: { metadata: {}, ...(request.status ?? {}), code: request.code },
    requestReceivedTimestamp: microTime(request.received),
    stageTimestamp: microTime(now),
    ...(request.denial
      ? { annotations: { 'authorization.k8s.io/decision': 'forbid', 'authorization.k8s.io/reason': request.denial.reason } }
      : attributes && request.code !== 401
        ? { annotations: { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' } }
        : {}),
  };
};

/** Opens the audit log at `options.path` (its directory made 0700). */
export const createAuditLog = (options: AuditLogOptions): AuditLog => {
  mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
  const name = basename(options.path);
  const stream: RotatingFileStream = createStream(
    (time: number | Date | null, index?: number) => (time === null ? name : `${name}.${index ?? 0}`),
    // `history` lists the rotated files, so the oldest beyond `maxFiles` are removed.
    { path: dirname(options.path), size: `${options.maxSizeMB ?? 100}M`, maxFiles: options.maxBackups ?? 10, history: `${name}.history`, mode: 0o600 },
  );
  stream.on('error', (error) => options.logger.error({ err: error, path: options.path }, 'audit log write failed'));
  return {
    newId: () => randomUUID(),
    record: (request) => {
      // A request that failed authentication has no user to match rules on: it is recorded as a Metadata event.
      const level = request.attributes ? auditLevelOf(options.policy, request.attributes) : 'Metadata';
      if (level === 'None') return;
      // Request and RequestResponse would add the bodies; this log records their metadata only.
      stream.write(`${JSON.stringify(auditEvent(request, level, new Date()))}\n`);
    },
    close: () => new Promise((resolve) => stream.end(() => resolve())),
  };
};

/** Where `logplane up` keeps its audit log. */
export const defaultAuditLogPath = (dataDir: string): string => join(dataDir, 'audit', 'audit.log');
