/**
 * kubelet's token manager: a token is fetched once per (account, audiences, lifetime, pod),
 * refreshed after 80 % of its lifetime (or 24 h) with the pod's volumes told, a refused fetch
 * reported once and asked again, a forgotten pod's token no longer refreshed.
 */
import pino from 'pino';
import { firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createServiceAccountTokenManager, refreshAt, type ServiceAccountTokenRequest } from './service-account-tokens.ts';

const logger = pino({ level: 'silent' });
const request = (uid = 'uid-1', expirationSeconds = 3607): ServiceAccountTokenRequest => ({
  namespace: 'default',
  serviceAccountName: 'default',
  audiences: [],
  expirationSeconds,
  pod: { name: 'web', uid },
});

describe('refreshAt (kubelet requiresRefresh)', () => {
  const hour = 3600_000;
  it.each([
    ['80 % of a one-hour token', 0, hour, 0.8 * hour],
    ['80 % of a token issued later', 10_000, 10_000 + 1000, 10_800],
    ['a day for a year-long token', 0, 365 * 24 * hour, 24 * hour],
  ])('%s', (_case, issuedAt, expiresAt, due) => {
    expect(refreshAt(issuedAt, expiresAt)).toBe(due);
  });
});

describe('the service-account token manager', () => {
  it('fetches a token once, hands it out, refreshes it at 80 % of its lifetime and tells the pod', async () => {
    const asked: ServiceAccountTokenRequest[] = [];
    const manager = createServiceAccountTokenManager({
      logger,
      // A token living 600 ms: refreshed after 480 ms.
      request: async (r) => {
        asked.push(r);
        return { token: `token-${asked.length}`, expiresAt: Date.now() + 600 };
      },
    });
    try {
      const first = manager.lookup(request());
      expect(first.type).toBe('pending');
      // A second lookup while the fetch is on its way does not ask again.
      expect(manager.lookup(request()).type).toBe('pending');
      await (first as { ready: Promise<void> }).ready;
      expect(manager.lookup(request())).toEqual({ type: 'ok', token: 'token-1' });
      expect(asked).toHaveLength(1);
      expect(await firstValueFrom(manager.refreshed$)).toBe('uid-1');
      expect(manager.lookup(request())).toEqual({ type: 'ok', token: 'token-2' });
      // Another pod (another bound object) gets its own token.
      const other = manager.lookup(request('uid-2'));
      expect(other.type).toBe('pending');
      await (other as { ready: Promise<void> }).ready;
      expect(manager.lookup(request('uid-2'))).toEqual({ type: 'ok', token: expect.stringMatching(/^token-\d+$/) });
      expect(asked.map((r) => r.pod.uid)).toContain('uid-2');
    } finally {
      manager.close();
    }
  });

  it('reports a refused fetch once, then asks again; forgets a pod that is gone', async () => {
    let refuse = true;
    let calls = 0;
    const manager = createServiceAccountTokenManager({
      logger,
      request: async () => {
        calls++;
        if (refuse) throw new Error('serviceaccounts "default" not found');
        return { token: 'granted', expiresAt: Date.now() + 3_600_000 };
      },
    });
    try {
      const first = manager.lookup(request());
      expect(first.type).toBe('pending');
      await (first as { ready: Promise<void> }).ready;
      expect(manager.lookup(request())).toEqual({ type: 'error', message: 'failed to fetch token: serviceaccounts "default" not found' });
      refuse = false;
      const again = manager.lookup(request());
      expect(again.type).toBe('pending');
      await (again as { ready: Promise<void> }).ready;
      expect(manager.lookup(request())).toEqual({ type: 'ok', token: 'granted' });
      expect(calls).toBe(2);
      manager.forgetPod('uid-1');
      expect(manager.lookup(request()).type).toBe('pending');
      expect(calls).toBe(3);
    } finally {
      manager.close();
    }
  });
});
