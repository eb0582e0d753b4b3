import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProxyApplyError, ProxyConfigError } from './errors.ts';
import { createNftablesProxy, endpointChainName, renderNftables, renderNftablesDelete, serviceChainName } from './nftables.ts';
import type { ForwardingTable } from './table.ts';
import { idle, web } from './testdata/rules.ts';

const twoServices: ForwardingTable = { rules: [idle, web] };

/**
 * Loading a ruleset, even in check mode, needs CAP_NET_ADMIN. CI runs as root, so there
 * these tests always run, and fail loudly if `nft` is missing; for a developer without
 * root they are reported as skipped (not applicable) rather than failing.
 */
const isRoot = process.getuid?.() === 0;

describe('renderNftables', () => {
  it('renders two services (two endpoints with a NodePort; none) exactly as the golden file', async () => {
    await expect(renderNftables(twoServices)).toMatchFileSnapshot('./testdata/two-services.nft');
  });

  it('renders an empty table that still removes stale rules', async () => {
    await expect(renderNftables({ rules: [] })).toMatchFileSnapshot('./testdata/empty.nft');
  });

  it('is deterministic: input order of rules and endpoints does not matter', () => {
    const shuffled: ForwardingTable = { rules: [{ ...web, endpoints: [...web.endpoints].reverse() }, idle] };
    expect(renderNftables(shuffled)).toBe(renderNftables(twoServices));
  });

  it('starts by declaring and deleting the table, so one `nft -f` replaces it atomically', () => {
    const lines = renderNftables(twoServices, { tableName: 'lp-node1' }).split('\n');
    expect(lines.slice(1, 4)).toEqual(['table ip lp-node1 {}', 'delete table ip lp-node1', 'table ip lp-node1 {']);
    expect(renderNftablesDelete({ tableName: 'lp-node1' })).toBe('table ip lp-node1 {}\ndelete table ip lp-node1\n');
  });

  it.each([
    { what: 'service chain', a: serviceChainName(web), b: serviceChainName({ ...web, endpoints: [] }), same: true },
    { what: 'service chain of another port', a: serviceChainName(web), b: serviceChainName({ ...web, portName: 'https' }), same: false },
    {
      what: 'endpoint chain of another endpoint',
      a: endpointChainName(web, { ip: '127.100.0.2', port: 8080 }),
      b: endpointChainName(web, { ip: '127.100.0.2', port: 8081 }),
      same: false,
    },
    {
      what: 'endpoint chain of the same endpoint in another service',
      a: endpointChainName(web, { ip: '127.100.0.2', port: 8080 }),
      b: endpointChainName(idle, { ip: '127.100.0.2', port: 8080 }),
      same: false,
    },
  ])('names the $what from a stable hash (same: $same)', ({ a, b, same }) => {
    expect(a).toMatch(/^(svc|sep)-[0-9a-f]{16}$/);
    expect(a === b).toBe(same);
  });

  it.each([
    { case: 'nodePort out of range', render: () => renderNftables({ rules: [{ ...web, nodePort: 70000 }] }) },
    { case: 'bad table name', render: () => renderNftables(twoServices, { tableName: 'no spaces' }) },
    { case: 'table with a non-IPv4 endpoint', render: () => renderNftables({ rules: [{ ...web, endpoints: [{ ip: 'fd00::1', port: 80 }] }] }) },
  ])('rejects a $case', ({ render }) => {
    expect(render).toThrow(ProxyConfigError);
  });
});

describe('createNftablesProxy', () => {
  it.each([{ netns: 'bad name' }, { tableName: '1table' }, { nft: '' }])('validates options eagerly: %o', (options) => {
    expect(() => createNftablesProxy(options)).toThrow(ProxyConfigError);
  });

  it('reports a missing nft binary as a terminal apply error', async () => {
    const proxy = createNftablesProxy({ nft: '/nonexistent/nft' });
    await expect(proxy.apply(twoServices)).rejects.toMatchObject({
      name: 'ProxyApplyError',
      retriable: false,
      message: expect.stringContaining('not found'),
    });
  });

  it.runIf(isRoot)('the rendered golden ruleset passes `nft -c` (kernel check, nothing applied)', async () => {
    expect(execFileSync('nft', ['--version'], { encoding: 'utf8' })).toMatch(/nftables/);
    await createNftablesProxy().check(twoServices);
    await createNftablesProxy().check({ rules: [] });
  });

  it("turns a failing nft into a retriable error carrying nft's stderr", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lp-fake-nft-'));
    try {
      const fakeNft = join(dir, 'nft');
      await writeFile(fakeNft, '#!/bin/sh\nfor last; do :; done\necho "Error: rejected $*" >&2\nhead -n 3 "$last" >&2\nexit 1\n', {
        mode: 0o755,
      });
      const failure = await createNftablesProxy({ nft: fakeNft })
        .apply(twoServices)
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ProxyApplyError);
      expect(failure).toMatchObject({
        retriable: true,
        message: expect.stringContaining('Error: rejected -f '),
        context: { exitCode: 1, stderr: expect.stringContaining('table ip logplane {}\ndelete table ip logplane') },
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
