/**
 * The small interface every transport implements: ordered-reliable send,
 * newest-wins send, close with a reason. Instances and connections speak only
 * this, so a WebTransport path (datagrams for snapshots) can slot in beside
 * WebSocket without touching them.
 */

import { type LinkClock, type LinkPath, LinkPipe } from "../link/mod.ts";

/** A way to reach one client. */
export interface Transport {
  /** Ordered and reliable: events, handshake, transfers. */
  sendReliable(data: Uint8Array): void;
  /**
   * Newest wins: returns false and sends nothing when an older message may still
   * be waiting to go out, so a snapshot never queues behind a stale one.
   */
  sendLatest(data: Uint8Array): boolean;
  /** Closes with an application close code and a human-readable reason. */
  close(code: number, reason: string): void;
  /** Bytes handed to this transport that have not left yet (a client not reading grows it). */
  readonly bufferedBytes: number;
}

/** The WebSocket close reason is limited to 123 bytes of UTF-8. */
export function clampReason(reason: string): string {
  const enc = new TextEncoder();
  if (enc.encode(reason).byteLength <= 123) return reason;
  let out = reason;
  while (enc.encode(out + "…").byteLength > 123) out = out.slice(0, -1);
  return out + "…";
}

/** The parts of a WebSocket a transport needs (Deno's server socket and the browser's alike). */
export interface SocketLike {
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
}

const OPEN = 1;

/** Transport over one WebSocket: one ordered stream, "newest wins" emulated by skipping. */
export class WebSocketTransport implements Transport {
  readonly #ws: SocketLike;
  /** Bytes handed to the socket in this turn of the event loop; they leave right after it. */
  #turnBytes = 0;

  constructor(ws: SocketLike) {
    this.#ws = ws;
  }

  #sent(bytes: number): void {
    if (this.#turnBytes === 0) queueMicrotask(() => this.#turnBytes = 0);
    this.#turnBytes += bytes;
  }

  get bufferedBytes(): number {
    return this.#ws.bufferedAmount;
  }

  sendReliable(data: Uint8Array): void {
    if (this.#ws.readyState !== OPEN) return;
    this.#ws.send(data);
    this.#sent(data.byteLength);
  }

  sendLatest(data: Uint8Array): boolean {
    // bufferedAmount counts what this turn just sent too (an Events message of the same
    // tick); only bytes left over from an earlier turn mean the socket is backed up and
    // may still hold the previous snapshot, and then this one is skipped.
    if (this.#ws.readyState !== OPEN || this.#ws.bufferedAmount > this.#turnBytes) return false;
    this.#ws.send(data);
    this.#sent(data.byteLength);
    return true;
  }

  /**
   * Closes once what was sent has left (up to DRAIN_WAIT_MS): Deno drops a server socket
   * that receives data after close(), with whatever was still queued, so a flooding
   * client would otherwise lose the Reject that says why it was closed.
   */
  close(code: number, reason: string): void {
    const text = clampReason(reason);
    const attempt = (waitedMs: number) => {
      if (this.#ws.readyState > OPEN) return;
      if (this.#ws.bufferedAmount === 0 || waitedMs >= DRAIN_WAIT_MS) {
        try {
          this.#ws.close(code, text);
        } catch {
          // Not open yet (an upgrade the client never completed): nothing to tell it.
        }
      } else {setTimeout(() =>
          attempt(waitedMs + DRAIN_POLL_MS), waitedMs === 0 ? 0 : DRAIN_POLL_MS);}
    };
    attempt(0);
  }
}

const DRAIN_POLL_MS = 10;
const DRAIN_WAIT_MS = 500;

/**
 * The server's end of a simulated link (net/link): everything sent reaches the
 * inner transport when the path delivers it, in order — the close too, behind
 * everything sent before it, as on a real slow link (the Reject arrives first).
 * Newest-wins is judged by the inner transport when the snapshot reaches it: a
 * stall on the path holds snapshots in flight, as a real network does.
 */
export class LinkTransport implements Transport {
  /** The transport the path delivers to. */
  readonly inner: Transport;
  readonly #pipe: LinkPipe<() => void>;
  #inFlight = 0;

  constructor(inner: Transport, opts: { path: LinkPath; clock: LinkClock }) {
    this.inner = inner;
    this.#pipe = new LinkPipe<() => void>(opts.path, { clock: opts.clock, deliver: (f) => f() });
  }

  /** Bytes still on the simulated path, plus what the inner transport holds. */
  get bufferedBytes(): number {
    return this.#inFlight + this.inner.bufferedBytes;
  }

  sendReliable(data: Uint8Array): void {
    this.#inFlight += data.byteLength;
    this.#pipe.send(() => {
      this.#inFlight -= data.byteLength;
      this.inner.sendReliable(data);
    });
  }

  sendLatest(data: Uint8Array): boolean {
    this.#inFlight += data.byteLength;
    this.#pipe.send(() => {
      this.#inFlight -= data.byteLength;
      this.inner.sendLatest(data);
    });
    return true;
  }

  close(code: number, reason: string): void {
    this.#pipe.send(() => this.inner.close(code, reason));
  }

  /** The socket is gone: drop what is still in flight. */
  discard(): void {
    this.#pipe.clear();
    this.#inFlight = 0;
  }
}
