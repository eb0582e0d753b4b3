/**
 * The root CA certificate publisher (kube-controller-manager's `root-ca-cert-publisher`,
 * `pkg/controller/certificates/rootcacertpublisher`): every active namespace holds the
 * ConfigMap `kube-root-ca.crt` whose `ca.crt` is the CA that verifies the apiserver, so a
 * pod can reach `https://kubernetes.default.svc` (or the `kubernetes` Service's endpoints)
 * and check the certificate. Deleted, it is created again; edited, its data and its
 * description annotation are put back (other annotations and labels are left alone).
 */
import type { AppliedChange, View } from '../../projections/index.ts';
import { objectKey, parseObjectKey, type ConfigMap, type EventBody, type Namespace } from '../../schemas/index.ts';
import type { Controller, Decision } from '../runtime.ts';

/** The ConfigMap's name in every namespace, as kube's `RootCACertConfigMapName`. */
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
/** The annotation kube sets on it, and its text. */
export const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
export const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

export interface RootCACertPublisherOptions {
  /**
   * The PEM CA bundle to publish (`--root-ca-file`, or the apiserver's own certificate in
   * embedded mode). Empty when the apiserver serves plain HTTP: kube publishes what its
   * client configuration holds, which is then nothing.
   */
  readonly rootCA: string;
}

const configMapKey = (namespace: string): string => objectKey({ kind: 'ConfigMap', metadata: { namespace, name: ROOT_CA_CONFIGMAP } });

/** Whether `namespace` takes new content: it exists and is not terminating. */
const isActive = (namespace: Namespace | undefined): namespace is Namespace =>
  namespace !== undefined && !namespace.metadata.deletionTimestamp && (namespace.status?.phase ?? 'Active') === 'Active';

const sameData = (data: Readonly<Record<string, string>> | undefined, wanted: Readonly<Record<string, string>>): boolean => {
  const keys = Object.keys(data ?? {});
  return keys.length === Object.keys(wanted).length && keys.every((k) => Object.hasOwn(wanted, k) && data?.[k] === wanted[k]);
};

/** Commands that make `ConfigMap/<ns>/kube-root-ca.crt` hold `rootCA`, as kube's `syncNamespace`. */
export const decideRootCA = (key: string, view: View, rootCA: string): Decision => {
  const { namespace } = parseObjectKey(key);
  if (namespace === null || !isActive(view.get(`Namespace//${namespace}`) as Namespace | undefined)) return { commands: [] };
  const data = { 'ca.crt': rootCA };
  const current = view.get(key) as ConfigMap | undefined;
  if (!current) {
    const object: ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: ROOT_CA_CONFIGMAP, namespace, annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } },
      data,
    };
    return { commands: [{ type: 'ObjectCreated', object }] };
  }
  if (current.metadata.deletionTimestamp) return { commands: [] };
  if (sameData(current.data, data) && (current.metadata.annotations?.[DESCRIPTION_ANNOTATION] ?? '') !== '') return { commands: [] };
  // The view carries a status slot for every kind; a ConfigMap has none to write.
  const { status: _status, ...rest } = current as ConfigMap & { status?: unknown };
  const update: EventBody = {
    type: 'ObjectUpdated',
    object: { ...rest, metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, [DESCRIPTION_ANNOTATION]: DESCRIPTION } }, data },
    expectedResourceVersion: current.metadata.resourceVersion ?? null,
    subresource: null,
  };
  return { commands: [update] };
};

const keysFor = (change: AppliedChange): readonly string[] => {
  const { object } = change;
  if (object.kind === 'Namespace') return change.type === 'DELETED' ? [] : [configMapKey(object.metadata.name)];
  const { namespace, name } = object.metadata;
  return object.kind === 'ConfigMap' && name === ROOT_CA_CONFIGMAP && namespace ? [configMapKey(namespace)] : [];
};

/** Creates the root CA certificate publisher for `rootCA`. */
export const createRootCACertPublisher = (options: RootCACertPublisherOptions): Controller => ({
  name: 'root-ca-cert-publisher',
  keysFor,
  initialKeys: (view) => view.list('Namespace').map((n) => configMapKey(n.metadata.name)),
  decide: (key, view) => decideRootCA(key, view, options.rootCA),
});
