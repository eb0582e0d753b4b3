/** Field numbers of k8s.io/api generated.proto messages, by message name, one module per API group. */
import { APPS } from './apps.ts';
import { AUTH } from './auth.ts';
import { AUTOSCALING } from './autoscaling.ts';
import { BATCH } from './batch.ts';
import { CORE } from './core.ts';
import { META } from './meta.ts';
import { RBAC } from './rbac.ts';
import type { Message } from './spec.ts';

export const MESSAGES: Readonly<Record<string, Message>> = { ...META, ...CORE, ...AUTH, ...BATCH, ...APPS, ...AUTOSCALING, ...RBAC };
