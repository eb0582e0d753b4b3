/**
 * The bound service-account tokens of projected volumes, as kubelet's token manager
 * (`pkg/kubelet/token/token_manager.go`) keeps them: one token per (service account,
 * audiences, lifetime, pod), asked of the apiserver's TokenRequest API through a hook the
 * composition root hands in (in-process in `logplane up`, over HTTPS in distributed mode), and
 * fetched again once 80 % of its lifetime has passed or it is 24 h old. A refreshed token is
 * announced (`refreshed$`, the pod's uid) so the pod's volume files are rewritten; a pod's
 * tokens are forgotten when it goes.
 */
import type { Logger } from 'pino';
import { Subject, type Observable } from 'rxjs';

/** What a projected `serviceAccountToken` source asks for, bound to its pod. */
export interface ServiceAccountTokenRequest {
  readonly namespace: string;
  readonly serviceAccountName: string;
  /** Empty: the apiserver's own audiences. */
  readonly audiences: readonly string[];
  readonly expirationSeconds: number;
  readonly pod: { readonly name: string; readonly uid: string };
}

/** A token the apiserver issued, and when it expires (epoch ms). */
export interface IssuedServiceAccountToken {
  readonly token: string;
  readonly expiresAt: number;
}

/** Asks the apiserver for a token (`POST …/serviceaccounts/NAME/token`); rejects with the reason it was refused. */
export type RequestServiceAccountToken = (request: ServiceAccountTokenRequest) => Promise<IssuedServiceAccountToken>;

/** A token to write, one on its way (retry once `ready` resolves), or why none could be had. */
export type TokenLookup =
  | { readonly type: 'ok'; readonly token: string }
  | { readonly type: 'pending'; readonly ready: Promise<void> }
  | { readonly type: 'error'; readonly message: string };

export interface ServiceAccountTokenManager {
  /** The pod's token for `request`; starts fetching it when there is none. */
  lookup(request: ServiceAccountTokenRequest): TokenLookup;
  /** The uid of a pod one of whose tokens was refreshed. */
  readonly refreshed$: Observable<string>;
  /** The pod is gone: its tokens are dropped and no longer refreshed. */
  forgetPod(uid: string): void;
  close(): void;
}

/** kubelet's `maxTTL`: a token is refreshed after a day whatever its lifetime. */
const MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** kubelet refreshes a token once this share of its lifetime has passed. */
const REFRESH_SHARE = 0.8;

interface Entry {
  readonly podUid: string;
  token?: { readonly value: string; readonly issuedAt: number; readonly expiresAt: number };
  inFlight?: Promise<void>;
  failure?: string;
  timer?: NodeJS.Timeout;
}

/** kubelet's keyFunc: the account, the audiences, the lifetime and the bound pod. */
const keyOf = (request: ServiceAccountTokenRequest): string =>
  JSON.stringify([request.namespace, request.serviceAccountName, [...request.audiences], request.expirationSeconds, request.pod.uid]);

/** When a token issued at `issuedAt` expiring at `expiresAt` is due for a refresh (kubelet's requiresRefresh). */
export const refreshAt = (issuedAt: number, expiresAt: number): number => Math.min(issuedAt + REFRESH_SHARE * (expiresAt - issuedAt), issuedAt + MAX_AGE_MS);

export const createServiceAccountTokenManager = (options: {
  readonly request: RequestServiceAccountToken;
  readonly logger: Logger;
  /** The clock (epoch ms). */
  readonly now?: () => number;
}): ServiceAccountTokenManager => {
  const now = options.now ?? Date.now;
  const { logger } = options;
  const entries = new Map<string, Entry>();
  const refreshed = new Subject<string>();
  let closed = false;

  const fetch = (key: string, entry: Entry, request: ServiceAccountTokenRequest): Promise<void> => {
    const issuedAt = now();
    const refreshing = entry.token !== undefined;
    const done = options.request(request).then(
      (issued) => {
        if (closed || entries.get(key) !== entry) return;
        entry.token = { value: issued.token, issuedAt, expiresAt: issued.expiresAt };
        delete entry.failure;
        clearTimeout(entry.timer);
        // Refreshed ahead of need, as kubelet's periodic remount would find it due.
        entry.timer = setTimeout(() => void fetch(key, entry, request), Math.max(0, refreshAt(issuedAt, issued.expiresAt) - now()));
        entry.timer.unref();
        logger.debug({ pod: `${request.namespace}/${request.pod.name}`, serviceAccount: request.serviceAccountName, expiresAt: new Date(issued.expiresAt).toISOString() }, 'service-account token fetched');
        if (refreshing) refreshed.next(entry.podUid);
      },
      (error: unknown) => {
        if (entries.get(key) !== entry) return;
        entry.failure = `failed to fetch token: ${error instanceof Error ? error.message : String(error)}`;
        logger.warn({ pod: `${request.namespace}/${request.pod.name}`, serviceAccount: request.serviceAccountName, err: entry.failure }, 'cannot fetch a service-account token');
        if (refreshing && entry.token !== undefined && entry.token.expiresAt > now()) {
          // The old token still holds: try again in a while, as kubelet's next sync would.
          clearTimeout(entry.timer);
          entry.timer = setTimeout(() => void fetch(key, entry, request), Math.max(1000, (entry.token.expiresAt - now()) / 10));
          entry.timer.unref();
        }
      },
    );
    const flight: Promise<void> = done.finally(() => {
      if (entry.inFlight === flight) delete entry.inFlight;
    });
    entry.inFlight = flight;
    return flight;
  };

  return {
    lookup(request) {
      const key = keyOf(request);
      let entry = entries.get(key);
      if (entry === undefined) {
        entry = { podUid: request.pod.uid };
        entries.set(key, entry);
      }
      if (entry.token !== undefined && entry.token.expiresAt > now()) return { type: 'ok', token: entry.token.value };
      if (entry.inFlight !== undefined) return { type: 'pending', ready: entry.inFlight };
      if (entry.failure !== undefined) {
        const message = entry.failure;
        // Reported once: the next lookup (the container's retry) asks again.
        delete entry.failure;
        return { type: 'error', message };
      }
      return { type: 'pending', ready: fetch(key, entry, request) };
    },
    refreshed$: refreshed.asObservable(),
    forgetPod(uid) {
      for (const [key, entry] of entries) {
        if (entry.podUid !== uid) continue;
        clearTimeout(entry.timer);
        entries.delete(key);
      }
    },
    close() {
      closed = true;
      for (const entry of entries.values()) clearTimeout(entry.timer);
      entries.clear();
      refreshed.complete();
    },
  };
};
