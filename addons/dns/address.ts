/** `host:port` text of the DNS options (listen address, upstreams), parsed eagerly. */
import { isIP } from 'node:net';
import { DnsConfigError } from './errors.ts';

/** An IP address and a port. */
export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/**
 * Parses `address:port`, `[v6]:port` or a bare address (then `defaultPort`). The address
 * must be an IP; the port 1..65535, or 0 when `allowAnyPort` (any free port).
 */
export const parseHostPort = (text: string, what: string, options: { defaultPort: number; allowAnyPort: boolean }): HostPort => {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const plain = /^([^:]+)(?::(\d+))?$/.exec(text);
  const [host, portText] = bracketed ? [bracketed[1], bracketed[2]] : plain ? [plain[1], plain[2]] : isIP(text) === 6 ? [text, undefined] : [undefined, undefined];
  const port = portText === undefined ? options.defaultPort : Number(portText);
  const lowest = options.allowAnyPort ? 0 : 1;
  if (!host || isIP(host) === 0 || !Number.isInteger(port) || port < lowest || port > 65_535) {
    throw new DnsConfigError(
      `${what} "${text}" is not an IP address with an optional port (e.g. 127.0.0.1, 127.0.0.1:10053, [::1]:10053)${options.allowAnyPort ? '; port 0 picks a free one' : ''}`,
      { [what]: text },
    );
  }
  return { host, port };
};
