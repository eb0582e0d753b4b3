/**
 * HTTP plumbing: request bodies (size-limited, JSON or YAML), JSON replies, and the
 * content negotiation kubectl relies on (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { apiErrors } from './errors.ts';
import { assertPlainData } from './plain-data.ts';
import { decodeKubernetesProtobuf, PROTOBUF_MAGIC, PROTOBUF_MEDIA_TYPE } from './protobuf.ts';
import type { Status } from './status.ts';

/** kube-apiserver's default request body limit. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/**
 * Reads the whole request body; 413 when it is larger than `limit` (the request is then
 * destroyed, as it was when this read with `for await`). Plain stream events rather than an
 * async iterator: on the path of every write, the iterator's promise per chunk costs more
 * CPU than the read itself (a bare server answering 16 clients: 112 vs 119 µs per request).
 */
export const readBody = (req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> =>
  new Promise<Buffer>((resolve, reject) => {
    if (req.readableEnded) {
      resolve(Buffer.alloc(0));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        stop();
        req.destroy();
        reject(apiErrors.tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      stop();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error): void => {
      stop();
      reject(error);
    };
    // The client went away before the body ended.
    const onClose = (): void => onError(new Error('the client closed the connection before the request body ended'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });

/** The media type of a Content-Type header, lowercased, without parameters. */
export const mediaTypeOf = (header: string | undefined): string => (header ?? '').split(';')[0]!.trim().toLowerCase();

/** The media types whose bodies are JSON text (the patch types among them). */
const JSON_MEDIA_TYPES: ReadonlySet<string> = new Set([
  'application/json',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+json',
]);
const YAML_MEDIA_TYPES: ReadonlySet<string> = new Set(['application/yaml', 'application/apply-patch+yaml']);

/**
 * Parses a request body as JSON, YAML (by Content-Type) or Kubernetes protobuf (what
 * kubectl's typed clients send); 400 when it is none of them, 415 for a media type that is
 * none of them (a body without a Content-Type is read as JSON). The parsed value passes
 * {@link assertPlainData} before anything else sees it.
 */
export const parseBody = (body: Buffer, contentType: string | undefined): unknown => {
  const type = mediaTypeOf(contentType);
  const parsed = parseByType(body, type);
  assertPlainData(parsed);
  return parsed;
};

const parseByType = (body: Buffer, type: string): unknown => {
  if (type === PROTOBUF_MEDIA_TYPE || body.subarray(0, 4).equals(PROTOBUF_MAGIC)) return decodeKubernetesProtobuf(body);
  const yaml = YAML_MEDIA_TYPES.has(type);
  if (!yaml && type !== '' && !JSON_MEDIA_TYPES.has(type)) {
    throw apiErrors.unsupportedMediaType(
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, ${PROTOBUF_MEDIA_TYPE}`,
    );
  }
  const text = body.toString('utf8');
  if (text.trim() === '') throw apiErrors.badRequest('the request body is empty');
  try {
    return yaml ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    throw apiErrors.badRequest(`the request body is not valid ${yaml ? 'YAML' : 'JSON'}: ${(error as Error).message}`);
  }
};

/** Reads and parses a request body (see `parseBody`). */
export const readJsonBody = async (req: IncomingMessage): Promise<unknown> =>
  parseBody(await readBody(req), req.headers['content-type']);

/** One entry of an Accept header. */
export interface MediaRange {
  readonly type: string;
  readonly params: Readonly<Record<string, string>>;
}

/** Splits an Accept header into media ranges, in the client's order. */
export const parseAccept = (header: string | undefined): MediaRange[] =>
  (header ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const [type = '', ...params] = part.split(';').map((p) => p.trim());
      return {
        type: type.toLowerCase(),
        params: Object.fromEntries(
          params.map((p) => {
            const eq = p.indexOf('=');
            return eq < 0 ? [p, ''] : [p.slice(0, eq).trim(), p.slice(eq + 1).trim()];
          }),
        ),
      };
    });

/** The representation a read asked for. */
export type Representation =
  | { readonly type: 'object' }
  | { readonly type: 'table'; readonly version: 'v1' | 'v1beta1' }
  | { readonly type: 'partialMetadata'; readonly version: 'v1' | 'v1beta1' };

const acceptsJson = (range: MediaRange): boolean =>
  range.type === 'application/json' || range.type === '*/*' || range.type === 'application/*';

/**
 * Picks the first acceptable representation in the client's order: a meta.k8s.io Table or
 * PartialObjectMetadata(List), or the object itself as JSON. 406 when nothing fits.
 */
export const negotiate = (header: string | undefined): Representation => {
  const ranges = parseAccept(header);
  if (ranges.length === 0) return { type: 'object' };
  for (const range of ranges) {
    if (!acceptsJson(range)) continue;
    const as = range.params['as'];
    if (as === undefined) return { type: 'object' };
    if (range.params['g'] !== 'meta.k8s.io') continue;
    const version = range.params['v'];
    if (version !== 'v1' && version !== 'v1beta1') continue;
    if (as === 'Table') return { type: 'table', version };
    if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList') return { type: 'partialMetadata', version };
  }
  throw apiErrors.notAcceptable(header ?? '');
};

/** Lists longer than this are written item by item rather than as one string (see `streamList`). */
const STREAMED_LIST_ITEMS = 1_000;
/** Items serialized per write of a streamed list. */
const STREAMED_ITEMS_PER_WRITE = 500;

/** A body whose `items` is long enough to stream. */
const longList = (body: unknown): body is { items: unknown[] } =>
  typeof body === 'object' && body !== null && Array.isArray((body as { items?: unknown }).items) && (body as { items: unknown[] }).items.length > STREAMED_LIST_ITEMS;

/** Resolves when `res` can take more (drain) or is gone (close), leaving no listener behind. */
const drainedOrClosed = (res: ServerResponse): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });

/**
 * Writes a long list as chunks of items, waiting for the socket to drain between them: one
 * string of 150,000 pods would pass V8's string limit (~512 MiB) and hold the whole reply
 * twice; this holds one chunk of items at a time (kube-apiserver encodes into a buffer, with
 * no such limit). The reply is chunked (no Content-Length); `items` comes last.
 */
const streamList = async (res: ServerResponse, code: number, body: { items: unknown[] }, headers: Readonly<Record<string, string | readonly string[]>>): Promise<void> => {
  const { items, ...rest } = body;
  const head = JSON.stringify(rest);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', ...headers });
  let ok = res.write(`${head.slice(0, -1)}${head === '{}' ? '' : ','}"items":[`);
  for (let from = 0; from < items.length && !res.destroyed; from += STREAMED_ITEMS_PER_WRITE) {
    if (!ok) await drainedOrClosed(res);
    if (res.destroyed) return;
    const part = items.slice(from, from + STREAMED_ITEMS_PER_WRITE).map((item) => JSON.stringify(item)).join(',');
    ok = res.write(from === 0 ? part : `,${part}`);
  }
  res.end(']}');
};

/** Sends a JSON body with `code`; extra headers (e.g. `Warning`) are added. A long list is streamed. */
export const sendJson = (
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Readonly<Record<string, string | readonly string[]>> = {},
): void => {
  if (longList(body)) {
    streamList(res, code, body, headers).catch((error: unknown) => res.destroy(error instanceof Error ? error : new Error(String(error))));
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
    ...headers,
  });
  res.end(text);
};

/** Sends a Status with its code. */
export const sendStatus = (res: ServerResponse, status: Status): void => sendJson(res, status.code, status);

/** A `Warning: 299 - "text"` header value (RFC 7234), as kube-apiserver sends them. */
export const warningHeader = (text: string): string => `299 - ${JSON.stringify(text)}`;
