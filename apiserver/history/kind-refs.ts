/**
 * The kinds the history API takes in paths and `kind=` parameters, as the kind refs its keys
 * use: a stored kind (`Pod`, `Job`), a registered kind's ref (`Job.batch`; a kind served from
 * another's storage, such as `Event.events.k8s.io`, names that storage), or a custom
 * resource's `Kind.group` (`CronTab.stable.example.com`), whose CRD may be gone: the history
 * keeps its objects.
 */
import { isKind, kindRef } from '../../schemas/keys.ts';
import { kindByRef } from '../../schemas/kinds/registry.ts';
import { kindRefOf, splitKindRef } from '../../schemas/kinds/refs.ts';
import type { CustomResourceDefinition } from '../../schemas/index.ts';

/** A CRD's kind: a DNS-1035 label but for its mixed case (kube's names.kind). */
const KIND_NAME = /^[A-Za-z]([-A-Za-z0-9]*[A-Za-z0-9])?$/;

/** A CRD's group: a DNS subdomain with at least one dot (kube refuses others). */
const CUSTOM_GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

/**
 * The kind ref `text` names in a history request, or undefined when it names none: a stored
 * kind or registered ref (as the log stores it), or an unregistered `Kind.group` of a
 * custom resource.
 */
export const historyKindRef = (text: string): string | undefined => {
  if (isKind(text)) return kindRef(text);
  const registered = kindByRef(text);
  if (registered) return registered.storageRef;
  const { kind, group } = splitKindRef(text);
  return group !== null && KIND_NAME.test(kind) && CUSTOM_GROUP.test(group) && group.length <= 253 ? text : undefined;
};

/** The kind ref of the custom kind a CRD serves (`CronTab.stable.example.com`). */
export const customKindRef = (crd: CustomResourceDefinition): string => kindRefOf(crd.spec.group, crd.spec.names.kind);
