import { describe, expect, it } from 'vitest';
import { ProxyConfigError, ProxyMode, createProxy } from './index.ts';

describe('createProxy', () => {
  it.each([
    { options: { mode: ProxyMode.Userspace, nodePortAddress: 'not-an-ip' } },
    { options: { mode: ProxyMode.Nftables, tableName: 'not a name' } },
  ] as const)('hands $options.mode its own options, validated eagerly', ({ options }) => {
    expect(() => createProxy(options)).toThrow(ProxyConfigError);
  });

  it('creates a userspace proxy that applies an empty table and closes', async () => {
    const proxy = createProxy({ mode: ProxyMode.Userspace });
    await proxy.apply({ rules: [] });
    await proxy.close();
  });
});
