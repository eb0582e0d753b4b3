/**
 * The GET of an `httpGet` action, shared by probes and lifecycle hooks, as kubelet 1.32 builds
 * it (`NewRequestForHTTPGetAction`, `newProbeRequest`): to `host` (default the pod's address)
 * at the resolved port and `path`, with the action's `httpHeaders` (a `Host` header sets the
 * request's host), `User-Agent: <fragment>/<version>` and `Accept` (any type) unless the action sets
 * them (an empty `Accept` removes it).
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { HTTPGetAction } from '../../schemas/index.ts';
import { resolvePort, type ProbeTarget } from './probe-target.ts';

/** The Kubernetes minor version kubelet's user agents name (`kube-probe/1.32`). */
const KUBE_VERSION = '1.32';

/** How a GET ended: a response (any status), or why there was none (kubelet's `Get "URL": …`). */
export type HttpGetResult = { readonly type: 'response'; readonly statusCode: number } | { readonly type: 'error'; readonly message: string };

/** The request headers of `action`, on a prototype-free object (header names come from the pod spec). */
export const httpGetHeaders = (action: HTTPGetAction, userAgentFragment: string): Record<string, string> => {
  const headers = Object.create(null) as Record<string, string>;
  for (const header of action.httpHeaders ?? []) {
    const name = header.name.toLowerCase();
    // Repeated names are one header with every value, as Go's http.Header sends them.
    headers[name] = name in headers ? `${headers[name]}, ${header.value}` : header.value;
  }
  if (!('user-agent' in headers)) headers['user-agent'] = `${userAgentFragment}/${KUBE_VERSION}`;
  if (!('accept' in headers)) headers['accept'] = '*/*';
  else if (headers['accept'] === '') delete headers['accept'];
  headers['connection'] = 'close';
  return headers;
};

/** Sends the GET of `action` against `target`; never rejects. */
export const httpGet = (action: HTTPGetAction, target: ProbeTarget, options: { readonly userAgentFragment: string; readonly timeoutMs: number; readonly abort?: AbortSignal }): Promise<HttpGetResult> => {
  const port = resolvePort(action.port, target.ports);
  if (port === undefined) return Promise.resolve({ type: 'error', message: `no container port named "${action.port}"` });
  const https = (action.scheme ?? 'HTTP').toUpperCase() === 'HTTPS';
  const host = action.host || target.podIP;
  const rawPath = action.path ?? '';
  const path = rawPath.startsWith('/') ? rawPath : `/${rawPath}`;
  const url = `${https ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;
  return new Promise((resolve) => {
    const request = { host, port, path, method: 'GET', timeout: options.timeoutMs, agent: false, headers: httpGetHeaders(action, options.userAgentFragment), ...(options.abort ? { signal: options.abort } : {}) } as const;
    let req;
    try {
      req = https ? httpsRequest({ ...request, rejectUnauthorized: false }) : httpRequest(request);
    } catch (error) {
      // An invalid header value from the pod spec (a newline, say) is refused before sending.
      resolve({ type: 'error', message: `Get "${url}": ${error instanceof Error ? error.message : String(error)}` });
      return;
    }
    req.once('response', (res) => {
      res.resume();
      resolve({ type: 'response', statusCode: res.statusCode ?? 0 });
    });
    req.once('timeout', () => req.destroy(new Error(`timeout after ${options.timeoutMs} ms`)));
    req.once('error', (err) => resolve({ type: 'error', message: `Get "${url}": ${err.message}` }));
    req.end();
  });
};
