/**
 * The apiserver's own keeper of the objects every cluster has (kube-apiserver's bootstrap
 * controller with the lease endpoint reconciler): the `kubernetes` Service in `default`, its
 * Endpoints and EndpointSlice listing every live apiserver, the `kube-dns` Service in
 * `kube-system`, and this apiserver's Lease in `kube-system`. It plans on its projection (`plan.ts`) every `intervalMs` (kube's
 * `--endpoint-reconciler` interval, 10 s), renewing the Lease, and again whenever one of
 * those objects changes (so a deleted Service comes back at once); it writes through the
 * apiserver's writer, so the fold judges every write as it judges a user's.
 */
import { createHash, randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { hostname as osHostname } from 'node:os';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import { foldSettingsOf, CONFIGURATION_ALLOCATION } from '../../projections/index.ts';
import { kindRef, objectKey } from '../../schemas/index.ts';
import { catchUp, type ServerContext } from '../context.ts';
import { planSystemObjects, KUBE_DNS_SERVICE, KUBERNETES_SERVICE, LEASE_NAMESPACE, type ApiserverIdentity, type SystemWrite } from './plan.ts';

export { KUBE_DNS_SERVICE, kubeDnsServiceIP, kubernetesServiceIP } from './plan.ts';

export interface SystemObjectsOptions {
  /** Where clients reach this apiserver: an IP or a host name (resolved once). */
  readonly address: string;
  readonly port: number;
  /** Pass and Lease renewal interval (default 10,000 ms, as kube's endpoint reconciler). */
  readonly intervalMs?: number;
  /** A Lease not renewed for this long is no longer an endpoint (default 15 s, kube's endpoint reconciler TTL). */
  readonly leaseDurationSeconds?: number;
  readonly logger: Logger;
}

export interface SystemObjects {
  /** Resolves after the first pass (the Service, Lease and endpoints written or found in place). */
  readonly ready: Promise<void>;
  /** Stops the passes, deletes this apiserver's Lease and takes its address out of the endpoints. */
  stop(): Promise<void>;
}

const resolveAddress = async (address: string): Promise<string> => (isIP(address) !== 0 ? address : (await lookup(address)).address);

/** kube names identity Leases `apiserver-<hash>`; here the hash covers the address and port, so two apiservers of one host differ. */
const identityOf = (hostname: string, address: string, port: number): ApiserverIdentity => {
  const hash = createHash('sha256').update(`${hostname}/${address}:${port}`).digest('hex').slice(0, 26);
  const leaseName = `apiserver-${hash}`;
  return { leaseName, holderIdentity: `${leaseName}_${randomUUID()}`, hostname, address, port };
};

/** The keys whose changes call for a pass: the Services, the kubernetes Endpoints and EndpointSlice, kube-system, and the apiservers' Leases. */
const WATCHED_KEYS = new Set([
  ...(['Service', 'Endpoints', 'EndpointSlice'] as const).map((kind) => objectKey({ kind, metadata: KUBERNETES_SERVICE })),
  objectKey({ kind: 'Service', metadata: KUBE_DNS_SERVICE }),
  objectKey({ kind: 'Namespace', metadata: { name: KUBE_DNS_SERVICE.namespace } }),
]);
const LEASE_PREFIX = `${kindRef('Lease')}/${LEASE_NAMESPACE}/`;
const isWatched = (key: string): boolean => WATCHED_KEYS.has(key) || key.startsWith(LEASE_PREFIX);

/** Starts keeping the system objects for the apiserver of `server`, reachable at `options.address:port`. */
export const startSystemObjects = (server: ServerContext, options: SystemObjectsOptions): SystemObjects => {
  const intervalMs = options.intervalMs ?? 10_000;
  const leaseDurationSeconds = options.leaseDurationSeconds ?? 15;
  const logger = options.logger.child({ component: 'system-objects' });
  let self: ApiserverIdentity | undefined;
  let stopped = false;
  let running: Promise<void> | undefined;
  let again: { renew: boolean } | undefined;
  let timer: NodeJS.Timeout | undefined;
  const failing = new Map<string, string>();

  const submit = async (write: SystemWrite): Promise<void> => {
    const result = await server.writer.submit({
      topic: 'desired',
      key: write.key,
      body: write.body,
      identity: { actor: { type: 'user', name: 'system:apiserver' }, causationId: null, correlationId: null },
    });
    const verdict = result.record.verdict;
    if (verdict.type === 'accepted') {
      if (failing.delete(write.key)) logger.info({ key: write.key }, `${write.what}: written`);
      else logger.debug({ key: write.key }, `${write.what}: written`);
      return;
    }
    // Conflicts and AlreadyExists are another apiserver's write winning: the next pass sees it.
    if (verdict.reason === 'Conflict' || verdict.reason === 'AlreadyExists' || verdict.reason === 'NotFound') return;
    const holder = ipHolder(write);
    const message = `${write.what} was refused: ${verdict.reason}: ${verdict.message}${holder ? `; ${holder} holds that address: delete it (or give it another clusterIP) so ${write.what} can have the address kube reserves for it` : ''}`;
    if (failing.get(write.key) !== message) logger.error({ key: write.key }, message);
    failing.set(write.key, message);
  };

  const ipHolder = (write: SystemWrite): string | undefined => {
    if (write.body.type !== 'ObjectCreated' || write.body.object.kind !== 'Service') return undefined;
    const ip = write.body.object.spec?.clusterIP;
    return ip ? server.projection.store.allocations.get(`ip/${ip}`) : undefined;
  };

  const pass = async (renew: boolean, leaving = false): Promise<void> => {
    if (!self) return;
    await catchUp(server);
    const stored = server.projection.store.allocations.get(CONFIGURATION_ALLOCATION);
    const writes = planSystemObjects({
      view: server.projection.view(),
      self,
      serviceCIDR: stored === undefined ? undefined : foldSettingsOf(() => stored).serviceCIDR,
      now: Date.now(),
      renew,
      leaving,
      leaseDurationSeconds,
    });
    // One at a time, in plan order: the Service before its endpoints, the Lease before the endpoints it names.
    for (const write of writes) await submit(write);
  };

  /** Runs a pass now, or once more after the running one (passes never overlap). */
  const schedule = (renew: boolean): void => {
    if (stopped) return;
    if (running) {
      again = { renew: renew || (again?.renew ?? false) };
      return;
    }
    running = pass(renew)
      .catch((error: unknown) => logger.warn({ error: String(error) }, 'keeping the kubernetes Service, its endpoints and this apiserver’s Lease failed; retrying on the next pass'))
      .finally(() => {
        running = undefined;
        const next = again;
        again = undefined;
        if (next) schedule(next.renew);
      });
  };

  const tick = (): void => {
    schedule(true);
    timer = setTimeout(tick, intervalMs);
    timer.unref();
  };

  const subscription = server.projection.changes$.subscribe((change) => {
    if (isWatched(change.key)) schedule(false);
  });

  const ready = (async () => {
    const address = await resolveAddress(options.address);
    self = identityOf(osHostname(), address, options.port);
    logger.info({ lease: `${LEASE_NAMESPACE}/${self.leaseName}`, address, port: options.port, intervalMs }, 'keeping the kubernetes Service and its endpoints');
    tick();
    while (running) await running;
  })();

  return {
    ready,
    stop: async () => {
      stopped = true;
      subscription.unsubscribe();
      if (timer) clearTimeout(timer);
      // As kube's Stop: leave the endpoints at once (after the pass under way), but never hold
      // the shutdown for longer than two intervals, even when the log does not answer.
      const leave = (async () => {
        await ready.catch(() => undefined);
        while (running) await running;
        await pass(false, true);
      })().catch((error: unknown) => logger.warn({ error: String(error) }, 'could not remove this apiserver from the kubernetes endpoints'));
      let deadline: NodeJS.Timeout | undefined;
      await Promise.race([
        leave,
        new Promise<void>((resolve) => {
          deadline = setTimeout(() => {
            logger.warn({ waitedMs: 2 * intervalMs }, 'stopping without removing this apiserver from the kubernetes endpoints: the log did not answer in time (its Lease expires instead)');
            resolve();
          }, 2 * intervalMs);
          deadline.unref();
        }),
      ]);
      if (deadline) clearTimeout(deadline);
    },
  };
};
