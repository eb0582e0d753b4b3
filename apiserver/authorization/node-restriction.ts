/**
 * kube's NodeRestriction admission plugin (plugin/pkg/admission/noderestriction) for the
 * writes the Node authorizer lets every node make: a node may modify only its own Node (and
 * its status), create only mirror pods bound to itself, update the status of, delete and
 * evict only the pods bound to itself, and ask only for service-account tokens bound to a
 * pod bound to itself. Refusals are kube's 403s (`pods "x" is forbidden: node
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

const forbidden = (resource: 'pods' | 'nodes' | 'serviceaccounts', name: string, reason: string): ApiError =>
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

/** What a TokenRequest asks for, as NodeRestriction reads it: the service account of the URL and the body's `spec.boundObjectRef`. */
export interface TokenRequestAttributes {
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly boundObjectRef: unknown;
}

const field = (object: unknown, name: string): unknown => (typeof object === 'object' && object !== null && Object.hasOwn(object, name) ? (object as Record<string, unknown>)[name] : undefined);

/**
 * Refuses (403) a node's TokenRequest that is not bound, with its uid, to a pod bound to that
 * node (kube's admitServiceAccount), so `system:node:node-1` gets no token of a pod on node-2
 * even for a service account a pod of its own uses; a pod that does not exist is 404.
 */
export const admitNodeTokenRequest = (user: Subject, request: TokenRequestAttributes, view: View): void => {
  const node = nodeIdentity(user);
  if (node === undefined) return;
  const ref = request.boundObjectRef;
  const podName = field(ref, 'name');
  if (field(ref, 'apiVersion') !== 'v1' || field(ref, 'kind') !== 'Pod' || typeof podName !== 'string' || podName === '') {
    throw forbidden('serviceaccounts', request.serviceAccount, 'node requested token not bound to a pod');
  }
  const uid = field(ref, 'uid');
  if (typeof uid !== 'string' || uid === '') throw forbidden('serviceaccounts', request.serviceAccount, 'node requested token with a pod binding without a uid');
  const pod = view.get(`Pod/${request.namespace}/${podName}`) as Pod | undefined;
  if (pod === undefined) throw new ApiError(failureStatus('NotFound', `pods "${podName}" not found`, { name: podName, kind: 'pods' }));
  if (pod.metadata.uid !== uid) {
    throw forbidden(
      'serviceaccounts',
      request.serviceAccount,
      `the UID in the bound object reference (${uid}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  }
  if (pod.spec.nodeName !== node) throw forbidden('serviceaccounts', request.serviceAccount, 'node requested token bound to a pod scheduled on a different node');
};
