/**
 * The Node authorizer, as kube-apiserver 1.32's (plugin/pkg/auth/authorizer/node, with
 * AuthorizeNodeWithSelectors on, its 1.32 default): a request of `system:node:<name>` in
 * `system:nodes` may read the Secrets, ConfigMaps, PersistentVolumeClaims (and their
 * volumes) and service accounts of the pods bound to its node, its own Node, Lease and
 * CSINode, list and watch pods only with `fieldSelector=spec.nodeName=<name>`, and do what
 * kube's `system:node` rules allow every node. Who the pods on a node are comes from the
 * projection (kube walks a graph its informers keep; here it is the view's pods-by-node
 * index). Anyone else gets no opinion. What a node may write into the objects it may touch
 * is NodeRestriction's (`node-restriction.ts`).
 */
import type { Projection, View } from '../../projections/index.ts';
import type { PersistentVolumeClaim, Pod } from '../../schemas/index.ts';
import type { Attributes, ResourceAttributes, Subject } from './attributes.ts';
import { NODE_RULES } from './bootstrap-policy.ts';
import type { Authorizer, Decision } from './decision.ts';
import { ruleAllows } from './rules.ts';
import { NODE_LEASE_NAMESPACE } from '../node-leases.ts';

/** The group every node identity is in. */
export const NODES_GROUP = 'system:nodes';
const NODE_USER_PREFIX = 'system:node:';

/** The node `user` speaks for (kube's default NodeIdentifier): undefined when it is not a node, '' when its name says none. */
export const nodeIdentity = (user: Subject): string | undefined => {
  if (!user.groups.includes(NODES_GROUP) || !user.name.startsWith(NODE_USER_PREFIX)) return undefined;
  return user.name.slice(NODE_USER_PREFIX.length);
};

const allow: Decision = { type: 'allow', reason: '' };
const noOpinion = (reason = ''): Decision => ({ type: 'noOpinion', reason });

/** What the pods bound to a node refer to, by namespace/name (kube's graph edges pod → object). */
interface NodeGraph {
  readonly pods: ReadonlySet<string>;
  readonly secrets: ReadonlySet<string>;
  readonly configMaps: ReadonlySet<string>;
  readonly claims: ReadonlySet<string>;
  readonly serviceAccounts: ReadonlySet<string>;
  readonly volumes: ReadonlySet<string>;
}

/** The graph of `node`: its pods and what their specs name (volumes, projected sources, env, envFrom, image pull secrets, service account). */
const graphOf = (view: View, node: string): NodeGraph => {
  const pods = new Set<string>();
  const secrets = new Set<string>();
  const configMaps = new Set<string>();
  const claims = new Set<string>();
  const serviceAccounts = new Set<string>();
  const volumes = new Set<string>();
  for (const pod of view.podsOnNode(node) as Pod[]) {
    const namespace = pod.metadata.namespace ?? 'default';
    const at = (name: string | undefined | null): string => `${namespace}/${name ?? ''}`;
    pods.add(at(pod.metadata.name));
    serviceAccounts.add(at(pod.spec.serviceAccountName ?? 'default'));
    for (const ref of pod.spec.imagePullSecrets ?? []) secrets.add(at(ref.name));
    for (const volume of pod.spec.volumes ?? []) {
      if (volume.secret?.secretName) secrets.add(at(volume.secret.secretName));
      if (volume.configMap?.name) configMaps.add(at(volume.configMap.name));
      if (volume.persistentVolumeClaim?.claimName) claims.add(at(volume.persistentVolumeClaim.claimName));
      for (const source of volume.projected?.sources ?? []) {
        if (source.secret?.name) secrets.add(at(source.secret.name));
        if (source.configMap?.name) configMaps.add(at(source.configMap.name));
      }
    }
    for (const container of [...(pod.spec.initContainers ?? []), ...pod.spec.containers, ...(pod.spec.ephemeralContainers ?? [])]) {
      for (const env of container.env ?? []) {
        if (env.valueFrom?.secretKeyRef?.name) secrets.add(at(env.valueFrom.secretKeyRef.name));
        if (env.valueFrom?.configMapKeyRef?.name) configMaps.add(at(env.valueFrom.configMapKeyRef.name));
      }
      for (const from of container.envFrom ?? []) {
        if (from.secretRef?.name) secrets.add(at(from.secretRef.name));
        if (from.configMapRef?.name) configMaps.add(at(from.configMapRef.name));
      }
    }
  }
  for (const claim of claims) {
    const [namespace, name] = claim.split('/');
    const stored = view.get(`PersistentVolumeClaim/${namespace}/${name}`) as PersistentVolumeClaim | undefined;
    if (stored?.spec?.volumeName) volumes.add(`/${stored.spec.volumeName}`);
  }
  return { pods, secrets, configMaps, claims, serviceAccounts, volumes };
};

const noRelationship = (node: string): Decision => noOpinion(`no relationship found between node '${node}' and this object`);

/** Whether `selector` (a fieldSelector as sent) pins `spec.nodeName` to `node`. */
const pinsNode = (selector: string | undefined, node: string): boolean =>
  (selector ?? '').split(',').some((term) => {
    const match = /^\s*spec\.nodeName\s*==?\s*(.*?)\s*$/.exec(term);
    return match !== null && match[1] === node;
  });

/** Creates the Node authorizer over `projection`'s current view. */
export const createNodeAuthorizer = (projection: Pick<Projection, 'view'>): Authorizer => {
  /** kube's authorizeReadNamespacedObject / authorizeGet: one named object related to the node. */
  const readRelated = (node: string, attributes: ResourceAttributes, related: (graph: NodeGraph) => ReadonlySet<string>, verbs: readonly string[]): Decision => {
    if (!verbs.includes(attributes.verb)) return noOpinion(`can only ${verbs.join(', ')} individual resources of this type`);
    if (attributes.subresource !== '') return noOpinion(`cannot ${attributes.verb} subresource ${attributes.subresource}`);
    if (attributes.name === '') return noOpinion('can only get individual resources of this type');
    return related(graphOf(projection.view(), node)).has(`${attributes.namespace}/${attributes.name}`) ? allow : noRelationship(node);
  };

  const authorizeResource = (node: string, attributes: ResourceAttributes): Decision | undefined => {
    const { apiGroup, resource, subresource, verb, name } = attributes;
    if (apiGroup === '') {
      switch (resource) {
        case 'secrets':
          return readRelated(node, attributes, (g) => g.secrets, ['get', 'list', 'watch']);
        case 'configmaps':
          return readRelated(node, attributes, (g) => g.configMaps, ['get', 'list', 'watch']);
        case 'persistentvolumeclaims':
          if (subresource === 'status') {
            if (!['update', 'patch'].includes(verb)) return noOpinion('can only get, update or patch the status of a persistentvolumeclaim');
            return graphOf(projection.view(), node).claims.has(`${attributes.namespace}/${name}`) ? allow : noRelationship(node);
          }
          return readRelated(node, attributes, (g) => g.claims, ['get']);
        case 'persistentvolumes':
          return readRelated(node, attributes, (g) => g.volumes, ['get']);
        case 'serviceaccounts':
          if (subresource !== 'token' || verb !== 'create') return noOpinion('can only create tokens for individual service accounts');
          return graphOf(projection.view(), node).serviceAccounts.has(`${attributes.namespace}/${name}`) ? allow : noRelationship(node);
        case 'nodes':
          if (subresource === '' && ['create', 'update', 'patch'].includes(verb)) return allow; // NodeRestriction limits these to its own Node.
          if (subresource === '' && ['get', 'list', 'watch'].includes(verb)) {
            if (name === node) return allow;
            return noOpinion(name === '' ? `node '${node}' cannot read all nodes, only its own Node object` : `node '${node}' cannot read '${name}', only its own Node object`);
          }
          if (subresource === 'status' && ['update', 'patch'].includes(verb)) return allow; // NodeRestriction: its own status only.
          return noOpinion();
        case 'pods':
          if (subresource === '') {
            if (verb === 'get') return graphOf(projection.view(), node).pods.has(`${attributes.namespace}/${name}`) ? allow : noRelationship(node);
            if (verb === 'list' || verb === 'watch') return pinsNode(attributes.fieldSelector, node) ? allow : noOpinion('can only list/watch pods with spec.nodeName field selector');
            if (verb === 'create' || verb === 'delete') return allow; // NodeRestriction: mirror pods / pods bound to it.
            return noOpinion();
          }
          if (subresource === 'status' && ['update', 'patch'].includes(verb)) return allow; // NodeRestriction: its pods only.
          if (subresource === 'eviction' && verb === 'create') return allow; // NodeRestriction: its pods only.
          return noOpinion();
        default:
          return undefined;
      }
    }
    if (apiGroup === 'coordination.k8s.io' && resource === 'leases') {
      if (!['get', 'create', 'update', 'patch', 'delete'].includes(verb)) return noOpinion('can only get, create, update, patch, or delete a node lease');
      if (attributes.namespace !== NODE_LEASE_NAMESPACE) return noOpinion(`can only access leases in the ${NODE_LEASE_NAMESPACE} system namespace`);
      if (verb !== 'create' && name !== node) return noOpinion('can only access node lease with the same name as the requesting node');
      return allow;
    }
    if (apiGroup === 'storage.k8s.io' && resource === 'csinodes') {
      if (!['get', 'create', 'update', 'patch', 'delete'].includes(verb)) return noOpinion('can only get, create, update, patch, or delete a CSINode');
      if (verb !== 'create' && name !== node) return noOpinion('can only access CSINode with the same name as the requesting node');
      return allow;
    }
    return undefined;
  };

  return {
    authorize: (attributes: Attributes): Decision => {
      const node = nodeIdentity(attributes.user);
      if (node === undefined) return noOpinion();
      if (node === '') return noOpinion(`unknown node for user "${attributes.user.name}"`);
      if (attributes.type === 'resource') {
        const decided = authorizeResource(node, attributes);
        if (decided !== undefined) return decided;
      }
      return NODE_RULES.some((rule) => ruleAllows(attributes, rule)) ? allow : noOpinion();
    },
    // As kube's: a node's permissions depend on the graph, so they are not listed (incomplete); nobody else gets any here.
    rulesFor: (user) =>
      nodeIdentity(user) === undefined
        ? { resourceRules: [], nonResourceRules: [], incomplete: false }
        : { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'node authorizer does not support user rule resolution' },
  };
};
