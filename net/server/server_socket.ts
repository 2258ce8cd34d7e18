/**
 * The server's end of a game WebSocket, whoever ends the protocol: Deno's own
 * (Deno.upgradeWebSocket, when the app is served straight from Deno.serve) or the
 * front door, which ends the sockets it accepted itself so that their frames skip a
 * second hop and Deno's WebSocket machinery (net/server/door_socket.ts). The route
 * calls `upgradeWebSocket` and cannot tell which one it got.
 */
import type { SocketLike } from "./transport.ts";

/** What a server socket tells its owner. */
export interface SocketListener {
  /** A whole message: text as a string, binary as bytes. */
  message(data: string | Uint8Array): void;
  /** The socket is gone (a close code as a string, or "error"), once. */
  closed(code: string, reason: string): void;
}

/** A server-side WebSocket: what the transport needs, plus one listener. */
export interface ServerSocket extends SocketLike {
  listen(listener: SocketListener): void;
}

/**
 * A socket the front door will end itself, handed to the app with the upgrade
 * request: `accept()` checks the handshake (throwing like Deno.upgradeWebSocket on a
 * bad one) and returns the socket; the door answers 101 when the route accepted,
 * else it relays the route's response.
 */
export interface PendingSocket {
  accept(): ServerSocket;
}

const pending = new WeakMap<Request, PendingSocket>();

/** The front door offers a socket for this request (it ends the protocol itself). */
export function offerSocket(request: Request, socket: PendingSocket): void {
  pending.set(request, socket);
}

/**
 * Upgrades `request`: the front door's socket when it offered one, else Deno's. The
 * response is what the route returns (the door ignores it once the socket is accepted).
 */
export function upgradeWebSocket(request: Request): { socket: ServerSocket; response: Response } {
  const offered = pending.get(request);
  if (offered) {
    pending.delete(request);
    return { socket: offered.accept(), response: new Response(null, { status: 204 }) };
  }
  const { socket, response } = Deno.upgradeWebSocket(request);
  return { socket: denoSocket(socket), response };
}

/** Deno's WebSocket as a ServerSocket. */
function denoSocket(ws: WebSocket): ServerSocket {
  ws.binaryType = "arraybuffer";
  return {
    get readyState() {
      return ws.readyState;
    },
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
    send: (data) => ws.send(data),
    close: (code, reason) => ws.close(code, reason),
    listen(listener) {
      let closed = false;
      const gone = (code: string, reason: string) => {
        if (closed) return;
        closed = true;
        listener.closed(code, reason);
      };
      ws.onmessage = (evt) => {
        const data = evt.data;
        if (typeof data === "string") listener.message(data);
        else if (data instanceof ArrayBuffer) listener.message(new Uint8Array(data));
      };
      ws.onclose = (evt) => gone(String(evt.code), evt.reason);
      ws.onerror = () => gone("error", "socket error");
    },
  };
}
