/**
 * The dashboard's only way to the cluster: the public HTTP APIs (Kubernetes REST + watch,
 * `/logplane/v1`) of the server that served the page, with the bearer token of the session.
 */
import { clearToken, readToken } from './session.ts';

/** A Kubernetes object as the API returns it (only the fields the dashboard relies on are typed). */
export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
    readonly generation?: number;
    readonly creationTimestamp?: string;
    readonly deletionTimestamp?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly ownerReferences?: readonly { readonly apiVersion?: string; readonly kind: string; readonly name: string; readonly uid?: string; readonly controller?: boolean }[];
  };
  readonly spec?: Record<string, unknown>;
  readonly status?: Record<string, unknown>;
  readonly [field: string]: unknown;
}

export interface KubeList {
  readonly metadata: { readonly resourceVersion?: string };
  readonly items: readonly KubeObject[];
}

/** A watch event of the Kubernetes watch protocol. */
export type WatchEvent =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; readonly object: KubeObject }
  | { readonly type: 'ERROR'; readonly object: { readonly code?: number; readonly message?: string } };

/** A request the server refused, with its Kubernetes Status message. */
export class ApiRequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Called when the server says the token is not (or no longer) valid. */
let onUnauthorized: () => void = () => undefined;

/** Sets what happens on a 401 (the app shows the login form). */
export const whenUnauthorized = (handler: () => void): void => {
  onUnauthorized = handler;
};

const headers = (extra: Readonly<Record<string, string>> = {}): Record<string, string> => {
  const token = readToken();
  return { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra };
};

const failure = async (response: Response): Promise<ApiRequestError> => {
  if (response.status === 401) {
    clearToken();
    onUnauthorized();
  }
  const text = await response.text();
  let message = text || response.statusText;
  try {
    const status = JSON.parse(text) as { message?: string };
    if (status.message) message = status.message;
  } catch {
    // not a Status: keep the text
  }
  return new ApiRequestError(response.status, message);
};

/** Sends a request and parses the JSON reply; a non-2xx reply throws ApiRequestError. */
export const request = async <T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> => {
  const response = await fetch(path, {
    method,
    headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    ...(signal ? { signal } : {}),
  });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
};

/** GETs JSON. */
export const get = <T>(path: string, signal?: AbortSignal): Promise<T> => request<T>('GET', path, undefined, signal);

/** Reads a streamed reply line by line (watch events, NDJSON progress, followed logs) until it ends or `signal` aborts. */
export const streamLines = async (method: string, path: string, onLine: (line: string) => void, signal: AbortSignal): Promise<void> => {
  const response = await fetch(path, { method, headers: headers(), signal });
  if (!response.ok || !response.body) throw await failure(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line.trim() !== '') onLine(line);
      newline = buffered.indexOf('\n');
    }
  }
  if (buffered.trim() !== '') onLine(buffered);
};

/** Checks a token against the server (an authenticated GET of the history API's position). */
export const checkToken = async (token: string): Promise<boolean> => {
  const response = await fetch('/logplane/v1/position', { headers: { accept: 'application/json', authorization: `Bearer ${token}` } });
  return response.ok;
};
