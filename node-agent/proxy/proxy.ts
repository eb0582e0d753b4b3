/** One entry point for the node agent: the forwarding mode picked by configuration. */
import { assertNever } from './errors.ts';
import { type NftablesProxyOptions, createNftablesProxy } from './nftables.ts';
import type { ForwardingTable } from './table.ts';
import { type UserspaceProxyOptions, createUserspaceProxy } from './userspace.ts';

/** How a node forwards Service traffic. */
export const ProxyMode = { Userspace: 'userspace', Nftables: 'nftables' } as const;
/** How a node forwards Service traffic. */
export type ProxyMode = (typeof ProxyMode)[keyof typeof ProxyMode];

/** Options of {@link createProxy}: the mode, and that mode's own options. */
export type ProxyOptions =
  | ({ readonly mode: typeof ProxyMode.Userspace } & UserspaceProxyOptions)
  | ({ readonly mode: typeof ProxyMode.Nftables } & NftablesProxyOptions);

/** What the node agent needs of any mode: program a table, and tear everything down. */
export interface ServiceProxy {
  /** Makes forwarding match `table`; see the mode's own `apply` for what happens on failure. */
  apply(table: ForwardingTable): Promise<void>;
  /** Removes everything this proxy programmed. Idempotent. */
  close(): Promise<void>;
}

/**
 * Creates the proxy of the given mode: `userspace` (default of logplane, no root) or
 * `nftables` (root, or CAP_NET_ADMIN in the target network namespace).
 */
export function createProxy(options: ProxyOptions): ServiceProxy {
  switch (options.mode) {
    case ProxyMode.Userspace:
      return createUserspaceProxy(options);
    case ProxyMode.Nftables:
      return createNftablesProxy(options);
    default:
      return assertNever(options);
  }
}
