/**
 * `kubectl attach` in the process runtime. A container process writes its stdout and stderr
 * to its log file (it keeps running while no agent does), and its stdin is not held open:
 * attach streams the container's output from the moment of attaching (the log followed
 * from its end, both streams merged on stdout as the log holds them) until the container
 * exits or the client leaves. Input the client sends is discarded.
 */
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { PodRuntime } from '../kubelet/index.ts';
import { CHANNEL, type ChannelProtocol, encodeChannelMessage, outcomeStatus } from './channels.ts';
import { MAX_UNSENT_BYTES } from './process-exec.ts';
import type { StreamRequest } from './request.ts';

export interface AttachSessionOptions {
  readonly ws: WebSocket;
  readonly protocol: ChannelProtocol;
  readonly runtime: PodRuntime;
  readonly request: Extract<StreamRequest, { type: 'attach' }>;
  readonly logger: Logger;
}

/** Streams the container's output to the client until it exits or the client leaves. */
export const runProcessAttach = ({ ws, runtime, request, logger }: AttachSessionOptions): void => {
  const abort = new AbortController();
  ws.on('close', () => abort.abort());
  ws.on('message', () => undefined);
  const channel = request.options.stdout ? CHANNEL.stdout : CHANNEL.stderr;
  ws.send(encodeChannelMessage(request.options.stdout || request.options.stderr ? channel : CHANNEL.error));
  const pump = async (): Promise<void> => {
    const lines = runtime.logs(request.namespace, request.pod, request.container, { follow: true, previous: false, tailLines: 0, signal: abort.signal });
    for await (const text of lines) {
      if (ws.readyState !== ws.OPEN) return;
      if (request.options.stdout || request.options.stderr) ws.send(encodeChannelMessage(channel, Buffer.from(text, 'utf8')));
      // A client that does not read is let go rather than buffered for.
      if (ws.bufferedAmount > MAX_UNSENT_BYTES) {
        ws.terminate();
        return;
      }
    }
    if (ws.readyState !== ws.OPEN) return;
    ws.send(encodeChannelMessage(CHANNEL.error, Buffer.from(JSON.stringify(outcomeStatus({ type: 'exited', exitCode: 0 }, [])))));
    ws.close(1000);
  };
  pump().catch((error: unknown) => {
    if (abort.signal.aborted) return;
    logger.debug({ err: error instanceof Error ? error.message : String(error) }, 'attach ended');
    if (ws.readyState !== ws.OPEN) return;
    ws.send(encodeChannelMessage(CHANNEL.error, Buffer.from(JSON.stringify(outcomeStatus({ type: 'failed', message: error instanceof Error ? error.message : String(error) }, [])))));
    ws.close(1000);
  });
};
