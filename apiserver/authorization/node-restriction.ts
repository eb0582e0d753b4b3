/**
 * kube's NodeRestriction admission plugin (plugin/pkg/admission/noderestriction) for the
 * writes the Node authorizer lets every node make: a node may modify only its own Node (and
 * its status), create only mirror pods bound to itself, and update the status of, delete and
 * evict only the pods bound to itself. Refusals are kube's 403s (`pods "x" is forbidden: node
 * "node-1" can only update pod status for pods with spec.nodeName set to itself`).
 */
import type { View } from '../../projections/index.ts';
import type { KubeObject, Pod } from '../../schemas/index.ts';
import { ApiError } from '../errors.ts';
import { failureStatus } from '../status.ts';
import type { Subject } from './attributes.ts';
import { nodeIdentity } from './node.ts';

/** The annotation of a mirror pod (a static pod the kubelet reports). */
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

const forbidden = (resource: 'pods' | 'nodes', name: string, reason: string): ApiError =>
  new ApiError(failureStatus('Forbidden', `${resource} "${name}" is forbidden: ${reason}`, { name, kind: resource }));

/** The request a node makes on one named object, as NodeRestriction sees it. */
export interface NodeRequest {
  readonly resource: string;
  readonly apiGroup: string;
  readonly subresource: string | undefined;
  readonly verb: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
}

/** Refuses (403) a node's update, patch, delete or eviction of an object that is not its own; anyone else passes. */
export const admitNodeRequest = (user: Subject, request: NodeRequest, view: View): void => {
  const node = nodeIdentity(user);
  if (node === undefined || request.apiGroup !== '' || request.name === undefined) return;
  const { resource, subresource, verb, name } = request;
  if (resource === 'nodes' && ['update', 'patch', 'delete'].includes(verb) && name !== node) {
    throw forbidden('nodes', name, `node "${node}" is not allowed to modify node "${name}"`);
  }
  if (resource !== 'pods') return;
  const pod = view.get(`Pod/${request.namespace ?? ''}/${name}`) as Pod | undefined;
  const bound = pod?.spec.nodeName === node;
  if (subresource === 'status' && (verb === 'update' || verb === 'patch') && !bound) {
    throw forbidden('pods', name, `node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
  }
  if (subresource === undefined && verb === 'delete' && pod !== undefined && !bound) {
    throw forbidden('pods', name, `node "${node}" can only delete pods with spec.nodeName set to itself`);
  }
  if (subresource === 'eviction' && verb === 'create' && pod !== undefined && !bound) {
    throw forbidden('pods', name, `node "${node}" can only evict pods with spec.nodeName set to itself`);
  }
};

/** Refuses (403) a node's create of a Node other than its own, or of a pod that is not a mirror pod bound to itself. */
export const admitNodeCreate = (user: Subject, object: KubeObject): void => {
  const node = nodeIdentity(user);
  if (node === undefined) return;
  if (object.kind === 'Node' && object.metadata.name !== node) {
    throw forbidden('nodes', object.metadata.name, `node "${node}" is not allowed to modify node "${object.metadata.name}"`);
  }
  if (object.kind === 'Pod') {
    if (object.metadata.annotations?.[MIRROR_ANNOTATION] === undefined) {
      throw forbidden('pods', object.metadata.name, `pod does not have "${MIRROR_ANNOTATION}" annotation, node "${node}" can only create mirror pods`);
    }
    if (object.spec.nodeName !== node) {
      throw forbidden('pods', object.metadata.name, `node "${node}" can only create pods with spec.nodeName set to itself`);
    }
  }
};
