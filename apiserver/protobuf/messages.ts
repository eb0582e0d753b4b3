/** Field numbers of k8s.io/api generated.proto messages, by message name, one module per API group. */
import { APPS } from './apps.ts';
import { AUTH } from './auth.ts';
import { AUTOSCALING } from './autoscaling.ts';
import { BATCH } from './batch.ts';
import { CERTIFICATES } from './certificates.ts';
import { CORE } from './core.ts';
import { META } from './meta.ts';
import { NETWORKING } from './networking.ts';
import { POLICY } from './policy.ts';
import { RBAC } from './rbac.ts';
import { SCHEDULING } from './scheduling.ts';
import type { Message } from './spec.ts';

const GROUPS = { META, CORE, AUTH, BATCH, APPS, AUTOSCALING, RBAC, POLICY, SCHEDULING, NETWORKING, CERTIFICATES };

/** Merges the groups' tables; a message name defined twice is a programming error, caught at load. */
const merge = (groups: Readonly<Record<string, Readonly<Record<string, Message>>>>): Readonly<Record<string, Message>> => {
  const out: Record<string, Message> = Object.create(null) as Record<string, Message>;
  const owner: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [group, messages] of Object.entries(groups)) {
    for (const [name, message] of Object.entries(messages)) {
      if (owner[name]) throw new Error(`protobuf message ${name} is defined in both ${owner[name]} and ${group}`);
      owner[name] = group;
      out[name] = message;
    }
  }
  return out;
};

export const MESSAGES: Readonly<Record<string, Message>> = merge(GROUPS);

/** Messages that describe parts of a body, never a body's kind. */
const NOT_KINDS = new Set(['Unknown', 'TypeMeta', 'Time', 'IntOrString', 'Quantity']);

/**
 * The message a body of `apiVersion` and `kind` is written in: `<apiVersion>.<kind>` where
 * versions of a group differ (autoscaling/v2 HorizontalPodAutoscaler), else `<kind>`;
 * undefined when there is no table for it.
 */
export const kindMessage = (apiVersion: string, kind: string): string | undefined => {
  const versioned = `${apiVersion}.${kind}`;
  if (Object.hasOwn(MESSAGES, versioned)) return versioned;
  return Object.hasOwn(MESSAGES, kind) && !NOT_KINDS.has(kind) ? kind : undefined;
};
