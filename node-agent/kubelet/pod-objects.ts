/**
 * The API objects a pod's configuration reads (kubelet's configMapManager, secretManager,
 * serviceLister, PV/PVC lookups and node allocatable), as the node agent gives them to its
 * runtimes: read from the agent's projection when a container starts or a volume is written.
 */
import type { Observable } from 'rxjs';
import type { ConfigMap, Node, PersistentVolume, PersistentVolumeClaim, Secret, Service } from '../../schemas/index.ts';
import type { ServiceAccountTokenManager } from './volumes/service-account-tokens.ts';

/** A ConfigMap or Secret changed (volumes showing it are rewritten). */
export interface PodObjectChange {
  readonly kind: 'ConfigMap' | 'Secret';
  readonly namespace: string;
  readonly name: string;
}

/** Where a runtime reads the objects pods refer to. */
export interface PodObjectSource {
  configMap(namespace: string, name: string): ConfigMap | undefined;
  secret(namespace: string, name: string): Secret | undefined;
  /** Every Service of the cluster (the Service environment variables read those of the pod's namespace and `default/kubernetes`). */
  services(): readonly Service[];
  persistentVolumeClaim(namespace: string, name: string): PersistentVolumeClaim | undefined;
  persistentVolume(name: string): PersistentVolume | undefined;
  node(name: string): Node | undefined;
  /** ConfigMap and Secret changes; absent: volumes are written once. */
  readonly changes$?: Observable<PodObjectChange>;
  /** Bound tokens of projected `serviceAccountToken` sources (kubelet's token manager); absent: those files are not written (logged). */
  readonly serviceAccountTokens?: ServiceAccountTokenManager;
}

/** A source that has no objects (runtimes created without an agent, e.g. in unit tests). */
export const NO_POD_OBJECTS: PodObjectSource = {
  configMap: () => undefined,
  secret: () => undefined,
  services: () => [],
  persistentVolumeClaim: () => undefined,
  persistentVolume: () => undefined,
  node: () => undefined,
};

/** Minimal read side of a projection view (`projections/view.ts`). */
export interface ObjectReader {
  get(key: string): unknown;
  list(kind: 'Service'): unknown[];
}

/** A {@link PodObjectSource} over a projection's live view (`view()` is called per lookup, so it always reads the latest). */
export function viewObjectSource(view: () => ObjectReader, changes$?: Observable<PodObjectChange>, serviceAccountTokens?: ServiceAccountTokenManager): PodObjectSource {
  return {
    configMap: (namespace, name) => view().get(`ConfigMap/${namespace}/${name}`) as ConfigMap | undefined,
    secret: (namespace, name) => view().get(`Secret/${namespace}/${name}`) as Secret | undefined,
    services: () => view().list('Service') as Service[],
    persistentVolumeClaim: (namespace, name) => view().get(`PersistentVolumeClaim/${namespace}/${name}`) as PersistentVolumeClaim | undefined,
    persistentVolume: (name) => view().get(`PersistentVolume//${name}`) as PersistentVolume | undefined,
    node: (name) => view().get(`Node//${name}`) as Node | undefined,
    ...(changes$ === undefined ? {} : { changes$ }),
    ...(serviceAccountTokens === undefined ? {} : { serviceAccountTokens }),
  };
}
