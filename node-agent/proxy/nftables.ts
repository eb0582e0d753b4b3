/**
 * nftables mode: the forwarding table rendered as one atomic `nft -f` ruleset, in the
 * spirit of kube-proxy's nftables mode, and an applier that loads it (optionally inside a
 * network namespace).
 *
 * Packet path: the `nat output` (locally generated traffic) and `nat prerouting` base
 * chains jump to `services`, which looks `daddr . proto . dport` up in the `services`
 * verdict map (and `proto . dport` in `nodeports` for local destinations) and goes to the
 * service port's `svc-<hash>` chain; that picks an endpoint with `numgen random` and goes
 * to the endpoint's `sep-<hash>` chain, which DNATs. Service ports without endpoints are
 * in the `no-endpoint-*` maps instead, checked by filter chains that reject new
 * connections, so a client is refused at once instead of timing out.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Logger, pino } from 'pino';
import { ProxyApplyError, ProxyClosedError, ProxyConfigError } from './errors.ts';
import { type EndpointTarget, type ForwardingTable, type ServicePortRule, canonicalTable, validateForwardingTable } from './table.ts';

/** Options of {@link renderNftables}. */
export interface RenderNftablesOptions {
  /** Name of the `ip` family table that holds every rule; default `logplane`. */
  readonly tableName?: string;
}

const DEFAULT_TABLE_NAME = 'logplane';
const TABLE_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const NETNS_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$/;

function checkedTableName(tableName: string): string {
  if (!TABLE_NAME_PATTERN.test(tableName)) {
    throw new ProxyConfigError(`nftables table name "${tableName}" must be a letter followed by letters, digits, _ or -`, {
      tableName,
    });
  }
  return tableName;
}

function shortHash(input: string): string {
  return createHash('sha256').update(input).digest('hex').slice(0, 16);
}

function servicePortId(rule: ServicePortRule): string {
  return `${rule.serviceKey}:${rule.portName}`;
}

/** Name of the chain that picks an endpoint for a service port; stable across renders. */
export function serviceChainName(rule: ServicePortRule): string {
  return `svc-${shortHash(`${servicePortId(rule)}/tcp`)}`;
}

/** Name of the chain that DNATs to one endpoint of a service port; stable across renders. */
export function endpointChainName(rule: ServicePortRule, endpoint: EndpointTarget): string {
  return `sep-${shortHash(`${servicePortId(rule)}/tcp/${endpoint.ip}:${endpoint.port}`)}`;
}

function quoted(text: string): string {
  return `"${text.replace(/["\\]/g, '')}"`;
}

function mapBlock(name: string, type: string, elements: readonly string[]): string[] {
  const lines = [`\tmap ${name} {`, `\t\ttype ${type}`];
  if (elements.length > 0) {
    lines.push('\t\telements = {', ...elements.map((element) => `\t\t\t${element},`), '\t\t}');
  }
  lines.push('\t}');
  return lines;
}

function chainBlock(name: string, body: readonly string[]): string[] {
  return [`\tchain ${name} {`, ...body.map((line) => `\t\t${line}`), '\t}'];
}

const REJECT_CHAIN = 'reject-no-endpoints';

/**
 * Renders the whole table as one `nft -f` transaction. It first declares and deletes the
 * table (so stale services disappear in the same transaction, and the first apply works
 * on a host without the table), then defines everything. Output is deterministic: rules
 * and endpoints are sorted, chain names are short stable hashes of service port and
 * endpoint. Throws {@link ProxyConfigError} for a table that cannot be rendered.
 */
export function renderNftables(table: ForwardingTable, options: RenderNftablesOptions = {}): string {
  const tableName = checkedTableName(options.tableName ?? DEFAULT_TABLE_NAME);
  validateForwardingTable(table);
  const { rules } = canonicalTable(table);
  const forwarded = rules.filter((rule) => rule.endpoints.length > 0);
  const unforwarded = rules.filter((rule) => rule.endpoints.length === 0);

  const serviceElements = forwarded.map((rule) => `${rule.clusterIP} . tcp . ${rule.port} : goto ${serviceChainName(rule)}`);
  const nodePortElements = forwarded.flatMap((rule) =>
    rule.nodePort === null ? [] : [`tcp . ${rule.nodePort} : goto ${serviceChainName(rule)}`],
  );
  const noEndpointServiceElements = unforwarded.map((rule) => `${rule.clusterIP} . tcp . ${rule.port} : goto ${REJECT_CHAIN}`);
  const noEndpointNodePortElements = unforwarded.flatMap((rule) =>
    rule.nodePort === null ? [] : [`tcp . ${rule.nodePort} : goto ${REJECT_CHAIN}`],
  );

  const blocks: string[][] = [
    mapBlock('services', 'ipv4_addr . inet_proto . inet_service : verdict', serviceElements),
    mapBlock('nodeports', 'inet_proto . inet_service : verdict', nodePortElements),
    mapBlock('no-endpoint-services', 'ipv4_addr . inet_proto . inet_service : verdict', noEndpointServiceElements),
    mapBlock('no-endpoint-nodeports', 'inet_proto . inet_service : verdict', noEndpointNodePortElements),
    chainBlock('nat-prerouting', ['type nat hook prerouting priority -100; policy accept;', 'jump services']),
    chainBlock('nat-output', ['type nat hook output priority -100; policy accept;', 'jump services']),
    chainBlock('filter-input', ['type filter hook input priority 0; policy accept;', 'ct state new jump endpoints-check']),
    chainBlock('filter-forward', ['type filter hook forward priority 0; policy accept;', 'ct state new jump endpoints-check']),
    chainBlock('filter-output', ['type filter hook output priority 0; policy accept;', 'ct state new jump endpoints-check']),
    chainBlock('services', [
      'ip daddr . meta l4proto . th dport vmap @services',
      'fib daddr type local meta l4proto . th dport vmap @nodeports',
    ]),
    chainBlock('endpoints-check', [
      'ip daddr . meta l4proto . th dport vmap @no-endpoint-services',
      'fib daddr type local meta l4proto . th dport vmap @no-endpoint-nodeports',
    ]),
    chainBlock(REJECT_CHAIN, ['reject']),
  ];
  for (const rule of forwarded) {
    const picks = rule.endpoints.map((endpoint, i) => `${i} : goto ${endpointChainName(rule, endpoint)}`);
    blocks.push(
      chainBlock(serviceChainName(rule), [
        `comment ${quoted(servicePortId(rule))}`,
        `numgen random mod ${rule.endpoints.length} vmap { ${picks.join(', ')} }`,
      ]),
    );
    for (const endpoint of rule.endpoints) {
      blocks.push(
        chainBlock(endpointChainName(rule, endpoint), [
          `comment ${quoted(`${servicePortId(rule)} -> ${endpoint.ip}:${endpoint.port}`)}`,
          `meta l4proto tcp dnat to ${endpoint.ip}:${endpoint.port}`,
        ]),
      );
    }
  }

  return [
    '# logplane node-agent proxy ruleset; load atomically with `nft -f`.',
    `table ip ${tableName} {}`,
    `delete table ip ${tableName}`,
    `table ip ${tableName} {`,
    blocks.map((block) => block.join('\n')).join('\n\n'),
    '}',
    '',
  ].join('\n');
}

/** A ruleset that removes the table if it exists, and does nothing otherwise. */
export function renderNftablesDelete(options: RenderNftablesOptions = {}): string {
  const tableName = checkedTableName(options.tableName ?? DEFAULT_TABLE_NAME);
  return [`table ip ${tableName} {}`, `delete table ip ${tableName}`, ''].join('\n');
}

/** Options of {@link createNftablesProxy}. */
export interface NftablesProxyOptions {
  /** The `nft` binary; default `nft` from PATH. */
  readonly nft?: string;
  /** Run `nft` inside this network namespace (`ip netns exec NAME nft …`); default the current one. */
  readonly netns?: string;
  /** Name of the table the proxy owns; default `logplane`. */
  readonly tableName?: string;
  /** Structured log of applies; default silent. */
  readonly logger?: Logger;
}

/** The nftables applier of one node agent. Calls are serialized. */
export interface NftablesProxy {
  /** Replaces the proxy's table with the rendering of `table`, atomically. Rejects with {@link ProxyApplyError} carrying nft's stderr. */
  apply(table: ForwardingTable): Promise<void>;
  /** Loads the rendering of `table` in check mode (`nft -c`): validated by nft and the kernel, nothing changes. */
  check(table: ForwardingTable): Promise<void>;
  /** Deletes the proxy's table (established connections keep their conntrack NAT). Idempotent. */
  close(): Promise<void>;
}

/**
 * Creates the nftables applier. It writes each ruleset to a temporary file and runs
 * `nft -f` on it (through `ip netns exec` when `netns` is set). Options are checked here.
 */
export function createNftablesProxy(options: NftablesProxyOptions = {}): NftablesProxy {
  const nft = options.nft ?? 'nft';
  const tableName = checkedTableName(options.tableName ?? DEFAULT_TABLE_NAME);
  const netns = options.netns;
  if (netns !== undefined && !NETNS_NAME_PATTERN.test(netns)) {
    throw new ProxyConfigError(`network namespace name "${netns}" is not valid`, { netns });
  }
  if (nft === '') throw new ProxyConfigError('nft binary must not be empty');
  const logger = (options.logger ?? pino({ level: 'silent' })).child({ component: 'proxy', mode: 'nftables', tableName });

  let closed = false;
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(task: () => Promise<T>): Promise<T> => {
    const run = queue.then(task, task);
    queue = run.catch(() => undefined);
    return run;
  };

  const load = async (ruleset: string, checkOnly: boolean): Promise<void> => {
    const dir = await mkdtemp(join(tmpdir(), 'logplane-nft-'));
    const file = join(dir, 'ruleset.nft');
    try {
      await writeFile(file, ruleset);
      const nftArgs = checkOnly ? ['-c', '-f', file] : ['-f', file];
      const [command, args] = netns === undefined ? [nft, nftArgs] : ['ip', ['netns', 'exec', netns, nft, ...nftArgs]];
      await run(command, args, { netns, tableName });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };

  return {
    apply: (table) =>
      serialized(async () => {
        if (closed) throw new ProxyClosedError('nftables proxy is closed', { tableName });
        const ruleset = renderNftables(table, { tableName });
        const started = performance.now();
        await load(ruleset, false);
        logger.info(
          { rules: table.rules.length, bytes: ruleset.length, ms: Math.round(performance.now() - started) },
          'nftables ruleset applied',
        );
      }),
    check: (table) => serialized(() => load(renderNftables(table, { tableName }), true)),
    close: () =>
      serialized(async () => {
        if (closed) return;
        closed = true;
        await load(renderNftablesDelete({ tableName }), false);
        logger.info('nftables table deleted');
      }),
  };
}

function run(command: string, args: readonly string[], context: { netns: string | undefined; tableName: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { encoding: 'utf8' }, (error, _stdout, stderr) => {
      if (error === null) {
        resolve();
        return;
      }
      const errno = (error as NodeJS.ErrnoException).code;
      if (errno === 'ENOENT') {
        reject(
          new ProxyApplyError(`cannot run ${command}: not found (install nftables and iproute2)`, false, { ...context, command }, {
            cause: error,
          }),
        );
        return;
      }
      const detail = stderr.trim() || error.message;
      reject(
        new ProxyApplyError(
          `${[command, ...args].join(' ')} failed: ${detail}`,
          true,
          { ...context, command, exitCode: typeof error.code === 'number' ? error.code : undefined, stderr: stderr.trim() },
          { cause: error },
        ),
      );
    });
  });
}
