/** The `--ingress` listen address: `IP[:HTTPPORT[,HTTPSPORT]]`, parsed eagerly. */
import { isIP } from 'node:net';
import { IngressConfigError } from './errors.ts';

/** Where the Ingress proxy listens. Port 0: a free one; `httpsPort` absent: no HTTPS. */
export interface IngressAddress {
  readonly host: string;
  readonly httpPort: number;
  readonly httpsPort?: number;
}

const portOf = (text: string | undefined, what: string, whole: string): number => {
  if (text === undefined || text === '') return 0;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) throw new IngressConfigError(`--ingress "${whole}": the ${what} port "${text}" is not 0..65535`, { ingress: whole });
  return port;
};

/**
 * Parses `127.0.0.1`, `127.0.0.1:8080`, `127.0.0.1:8080,8443`, `127.0.0.1:8080,none`
 * (no HTTPS) or `[::1]:8080,8443`. A port left out or 0 picks a free one.
 */
export const parseIngressAddress = (text: string): IngressAddress => {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d*)(?:,(\d+|none))?)?$/.exec(text.trim());
  const host = match?.[1] ?? match?.[2];
  if (!match || !host || isIP(host) === 0) {
    throw new IngressConfigError(`--ingress "${text}" is not IP[:HTTPPORT[,HTTPSPORT]] (e.g. 127.0.0.1, 127.0.0.1:8080,8443, [::1]:8080,none); port 0 picks a free one`, { ingress: text });
  }
  const httpPort = portOf(match[3], 'HTTP', text);
  if (match[4] === 'none') return { host, httpPort };
  return { host, httpPort, httpsPort: portOf(match[4], 'HTTPS', text) };
};
