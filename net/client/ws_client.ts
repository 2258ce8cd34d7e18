/**
 * Wires a ClientRuntime to a WebSocket (the browser's or Deno's, same API).
 * The socket carries binary CBOR only. When the server hands the player to
 * another process (a Transfer), the same runtime moves to a new socket there,
 * saying hello with the ticket: no reload, and the page sees one connection.
 * If the target cannot be reached or refuses the ticket, the client falls back
 * to the URL it first opened, as a fresh arrival.
 */
import { ClientRuntime, type RuntimeOptions } from "./runtime.ts";
import { CloseCode } from "../wire/protocol.ts";

/** A runtime on an open-or-opening socket (the current one, after any transfers). */
export interface WsClient {
  readonly runtime: ClientRuntime;
  /** The socket in use now. */
  readonly socket: WebSocket;
  /** The URL of the socket in use now. */
  readonly url: string;
  /** Resolves once the connection has ended (not on a transfer), with the last close. */
  readonly closed: Promise<{ code: number; reason: string }>;
  /** Closes the current socket for good. */
  close(code?: number, reason?: string): void;
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
  let socket: WebSocket;
  let currentUrl = url;
  let ended = false;
  let resolveClosed: (c: { code: number; reason: string }) => void = () => {};
  const closed = new Promise<{ code: number; reason: string }>((r) => resolveClosed = r);
  const runtime = new ClientRuntime({
    ...opts,
    send: (data) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(data);
    },
    onTransfer: (t) => {
      opts.onTransfer?.(t);
      // The old process closes its socket (4011) once the Transfer is out; we move now.
      open(t.url, t.ticket);
    },
  });

  const open = (target: string, ticket: string | undefined) => {
    const previous = socket as WebSocket | undefined;
    const ws = new WebSocket(target);
    socket = ws;
    currentUrl = target;
    ws.binaryType = "arraybuffer";
    if (previous && previous.readyState <= WebSocket.OPEN) previous.close(1000, "transferred");
    let welcomed = false;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      runtime.hello(opts.name, opts.now(), { version: opts.version, ticket });
    };
    ws.onmessage = (evt) => {
      if (ws !== socket || !(evt.data instanceof ArrayBuffer)) return;
      welcomed = true;
      try {
        runtime.receive(new Uint8Array(evt.data), opts.now());
      } catch (err) {
        opts.onError?.(err as Error);
        ws.close(4000, "client could not decode a server message");
      }
    };
    ws.onclose = (evt) => {
      if (ws !== socket) return; // superseded by a transfer
      if (ticket !== undefined && !welcomed || evt.code === CloseCode.BadTicket) {
        // The target is gone or refused the ticket: start over where we first came in.
        if (target !== url && !ended) {
          open(url, undefined);
          return;
        }
      }
      ended = true;
      if (opened) {
        runtime.closed(evt.reason || `connection closed (${evt.code})`);
        resolveClosed({ code: evt.code, reason: evt.reason });
        return;
      }
      // Refused before the upgrade, a socket only sees 1006: the server says why on a GET.
      askWhyRefused(target).then((refusal) => {
        if (refusal) runtime.refused(refusal.reason);
        else runtime.closed(evt.reason || `connection closed (${evt.code})`);
        resolveClosed(refusal ?? { code: evt.code, reason: evt.reason });
      });
    };
  };
  open(url, undefined);

  return {
    runtime,
    get socket() {
      return socket;
    },
    get url() {
      return currentUrl;
    },
    closed,
    close(code = 1000, reason = "") {
      ended = true;
      socket.close(code, reason);
    },
  };
}

/**
 * Why the server refused a socket that never opened: a plain GET of the same URL
 * answers a refusal with its status and `{ code, reason }`, or 426 when nothing
 * stands in the way (then the failure was the network's).
 */
export async function askWhyRefused(
  wsUrl: string,
): Promise<{ code: number; reason: string } | undefined> {
  try {
    const res = await fetch(wsUrl.replace(/^ws/, "http"), {
      signal: AbortSignal.timeout(3000),
      cache: "no-store",
    });
    if (res.status === 426 || res.ok) {
      await res.body?.cancel();
      return undefined;
    }
    const body = await res.json();
    if (typeof body?.code === "number" && typeof body?.reason === "string") {
      return { code: body.code, reason: body.reason };
    }
  } catch {
    // Unreachable or not our server: the socket's own failure stands.
  }
  return undefined;
}
