/**
 * Wires a ClientRuntime to a WebSocket (the browser's or Deno's, same API).
 * The socket carries binary CBOR only.
 */
import { ClientRuntime, type RuntimeOptions } from "./runtime.ts";

/** A runtime on an open-or-opening socket. */
export interface WsClient {
  readonly runtime: ClientRuntime;
  readonly socket: WebSocket;
  /** Resolves once the socket has closed, with the close code and reason. */
  readonly closed: Promise<{ code: number; reason: string }>;
}

/** Opens `url`, says hello as `name` and feeds the runtime every message. */
export function connectClient(
  url: string,
  opts: Omit<RuntimeOptions, "send"> & {
    name: string;
    now: () => number;
    version?: number;
    /** Called when a server message fails to decode (the runtime closes the socket). */
    onError?: (err: Error) => void;
  },
): WsClient {
  const socket = new WebSocket(url);
  socket.binaryType = "arraybuffer";
  const runtime = new ClientRuntime({
    ...opts,
    send: (data) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(data);
    },
  });
  socket.onopen = () => runtime.hello(opts.name, opts.now(), opts.version);
  socket.onmessage = (evt) => {
    if (!(evt.data instanceof ArrayBuffer)) return;
    try {
      runtime.receive(new Uint8Array(evt.data), opts.now());
    } catch (err) {
      opts.onError?.(err as Error);
      socket.close(4000, "client could not decode a server message");
    }
  };
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.onclose = (evt) => {
      runtime.closed(evt.reason || `connection closed (${evt.code})`);
      resolve({ code: evt.code, reason: evt.reason });
    };
  });
  return { runtime, socket, closed };
}
