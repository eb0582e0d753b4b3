/**
 * The StorageClass `logplane up` ships, as k3s ships rancher's local-path-provisioner:
 * `local-path`, the cluster's default class, provisioned by `rancher.io/local-path` (the
 * local-path-provisioner controller and the node agents, see
 * reconcilers/local-path-provisioner), WaitForFirstConsumer, reclaim policy Delete. It is
 * created at start when no StorageClass of that name exists (a deleted one comes back on
 * the next start, as k3s's bundled manifests do); an existing one is left as it is.
 */
import type { Logger } from 'pino';
import { admitControllerCreate } from '../apiserver/admission/controller-creates.ts';
import type { EventLog } from '../log/port.ts';
import { appendAndWait, type Projection } from '../projections/index.ts';
import { LOCAL_PATH_PROVISIONER } from '../projections/local-path.ts';
import type { StorageClass } from '../schemas/index.ts';
import { objectKey } from '../schemas/keys.ts';

/** The bundled class's name. */
export const LOCAL_PATH_CLASS = 'local-path';

/** The bundled class, as rancher's manifest declares it. */
export const localPathClass = (): StorageClass => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name: LOCAL_PATH_CLASS, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
  provisioner: LOCAL_PATH_PROVISIONER,
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'WaitForFirstConsumer',
  allowVolumeExpansion: false,
});

/** Creates the bundled `local-path` class unless the cluster has a StorageClass of that name. */
export const ensureLocalPathClass = async (log: EventLog, projection: Projection, logger: Logger): Promise<void> => {
  const view = projection.view();
  if (view.get(objectKey({ kind: 'StorageClass', metadata: { name: LOCAL_PATH_CLASS } }))) return;
  const admitted = admitControllerCreate(localPathClass(), view);
  if (admitted.type === 'refused') throw new Error(`the bundled ${LOCAL_PATH_CLASS} StorageClass was refused: ${admitted.message}`);
  const { object } = admitted;
  const [written] = await appendAndWait(log, projection, [{ type: 'ObjectCreated', object }], { actor: { type: 'controller', name: 'local-path-provisioner' } });
  const verdict = written?.record?.verdict.type;
  logger.info({ storageClass: LOCAL_PATH_CLASS, verdict }, 'bundled local-path StorageClass');
};
