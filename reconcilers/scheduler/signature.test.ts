import { describe, expect, it } from 'vitest';
import type { Pod } from '../../schemas/index.ts';
import { signatureSpec } from './round-scheduler.ts';

const spec = (suffix: string, claim = 'data'): Pod['spec'] => ({
  containers: [{ name: 'c', image: 'nginx', volumeMounts: [{ name: `kube-api-access-${suffix}`, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }, { name: 'www', mountPath: '/www' }] }],
  initContainers: [{ name: 'i', image: 'busybox', volumeMounts: [{ name: `kube-api-access-${suffix}`, mountPath: '/x' }] }],
  volumes: [
    { name: 'www', persistentVolumeClaim: { claimName: claim } },
    { name: `kube-api-access-${suffix}`, projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } }] } },
  ],
});

describe('the round scheduler’s pod signature', () => {
  it('is the same for pods of one template whose volumes are named per pod, and differs by what a plugin reads', () => {
    const sign = (s: Pod['spec']): string => JSON.stringify(signatureSpec(s));
    expect(sign(spec('abcde'))).toBe(sign(spec('fghjk')));
    expect(sign(spec('abcde'))).not.toBe(sign(spec('abcde', 'other-claim')));
    // The spec itself is not changed.
    const original = spec('abcde');
    signatureSpec(original);
    expect(original).toEqual(spec('abcde'));
    const bare: Pod['spec'] = { containers: [{ name: 'c', image: 'nginx' }] };
    expect(signatureSpec(bare)).toBe(bare);
  });
});
