/**
 * The small interface every transport implements: ordered-reliable send,
 * newest-wins send, one flush per tick, close with a reason. Instances and
 * connections speak only this; WebSocket (here) and WebTransport
 * (webtransport.ts) implement it.
 */
import { packFrame } from "../wire/frames.ts";
import type { TransportKind } from "../wire/protocol.ts";
import { type LinkClock, type LinkPath, LinkPipe } from "../link/mod.ts";

export type { TransportKind };

/** A way to reach one client. Sends are queued and leave together at `flush()`. */
export interface Transport {
  readonly kind: TransportKind;
  /**
   * True when `sendLatest` goes as an unreliable datagram: it may be lost, so a delta
   * must be against a snapshot the client acknowledged, not merely one that was sent.
   */
  readonly datagrams: boolean;
  /** Ordered and reliable: events, handshake, transfers. */
  sendReliable(data: Uint8Array): void;
  /**
   * Newest wins: returns false and sends nothing when an older message may still
   * be waiting to go out, so a snapshot never queues behind a stale one.
   */
  sendLatest(data: Uint8Array): boolean;
  /**
   * How many times each `sendLatest` goes (datagrams only: a second copy a tick later
   * rides out a lossy link). Ignored where every send arrives anyway.
   */
  setLatestCopies?(copies: 1 | 2): void;
  /** Sends what was queued since the last flush: one frame per tick, not one per message. */
  flush(): void;
  /** Flushes, then closes with an application close code and a human-readable reason. */
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
  /**
   * Sends the first `count` of `parts` as one message without joining them first (a socket
   * that builds its frames); the rest of `parts` is not read.
   */
  sendParts?(parts: readonly Uint8Array[], count: number): void;
  close(code?: number, reason?: string): void;
}

const OPEN = 1;
/** What a queue slot holds once its message is sent. */
const SENT = new Uint8Array(0);

/**
 * The turns of the event loop, as the server's loop counts them (its wake-ups,
 * `SchedulerStats.wakes`). A socket writes what it was given between turns, never during
 * one: bytes given in this turn are still buffered however fast the client reads.
 */
export interface LoopTurns {
  readonly wakes: number;
}

/**
 * What a transport's socket still held from earlier turns of the event loop. The socket
 * had the chance to write those bytes and could not: the client is not taking them. What
 * it was given in this turn cannot have left yet, however fast the client reads: a loop
 * catching up after a stall runs several ticks in one turn, and a snapshot skipped for
 * those bytes would charge the server's own lateness to every client that keeps up.
 */
export class EarlierTurns {
  readonly #turns: LoopTurns;
  /** The turn of the last flush, and what the socket held from before it then. */
  #turn = -1;
  #older = 0;

  constructor(turns: LoopTurns) {
    this.#turns = turns;
  }

  /**
   * A flush is about to hand the socket its frame, `pending` bytes still in the socket:
   * true at the turn's first flush.
   */
  flushing(pending: number): boolean {
    const turn = this.#turns.wakes;
    if (turn === this.#turn) return false;
    this.#turn = turn;
    this.#older = pending;
    return true;
  }

  /** True when this turn has flushed already (its bytes are in the socket). */
  get flushedThisTurn(): boolean {
    return this.#turn === this.#turns.wakes;
  }

  /** Of the `pending` bytes in the socket, those it was given in an earlier turn. */
  older(pending: number): number {
    return this.flushedThisTurn ? Math.min(pending, this.#older) : pending;
  }
}

/** Transport over one WebSocket: one ordered stream, "newest wins" emulated by skipping. */
export class WebSocketTransport implements Transport {
  readonly kind = "websocket";
  readonly datagrams = false;
  readonly #ws: SocketLike;
  /**
   * This tick's messages: the first `#count` slots. The array keeps its length from tick
   * to tick (emptying it would give its slots back, and every client's first message of
   * the next tick would allocate them again: ~5 % of what a loaded server allocated); a
   * slot that was sent is pointed at an empty array, so no message outlives its frame.
   */
  readonly #queued: Uint8Array[] = [];
  #count = 0;
  /** The bytes of `#queued`, kept as it grows: the connection asks at every message. */
  #queuedBytes = 0;
  readonly #earlier: EarlierTurns;

  constructor(ws: SocketLike, turns: LoopTurns) {
    this.#ws = ws;
    this.#earlier = new EarlierTurns(turns);
  }

  get bufferedBytes(): number {
    return this.#ws.bufferedAmount + this.#queuedBytes;
  }

  sendReliable(data: Uint8Array): void {
    if (this.#ws.readyState !== OPEN) return;
    this.#queue(data);
  }

  sendLatest(data: Uint8Array): boolean {
    // What this tick queued has not reached the socket yet. Bytes the socket still holds
    // from an earlier turn say it is backed up and may still hold the previous snapshot:
    // skip this one; the next (50 ms later) carries newer state.
    const ws = this.#ws;
    if (ws.readyState !== OPEN) return false;
    const buffered = ws.bufferedAmount;
    if (buffered > 0 && this.#earlier.older(buffered) > 0) return false;
    this.#queue(data);
    return true;
  }

  #queue(data: Uint8Array): void {
    const queued = this.#queued;
    if (this.#count < queued.length) queued[this.#count] = data;
    else queued.push(data);
    this.#count++;
    this.#queuedBytes += data.byteLength;
  }

  flush(): void {
    const count = this.#count;
    if (count === 0) return;
    const ws = this.#ws;
    const queued = this.#queued;
    this.#earlier.flushing(ws.bufferedAmount);
    if (ws.readyState === OPEN) {
      if (ws.sendParts) ws.sendParts(queued, count);
      // Deno's WebSocket may hold what it is given until the client takes it: a buffer of
      // its own, not a view that would keep a message slab alive (net/wire/slab.ts).
      else ws.send(packFrame(queued.slice(0, count), { own: true }));
    }
    for (let i = 0; i < count; i++) queued[i] = SENT;
    this.#count = 0;
    this.#queuedBytes = 0;
  }

  /**
   * Closes once what was sent has left (up to DRAIN_WAIT_MS): Deno drops a server socket
   * that receives data after close(), with whatever was still queued, so a flooding
   * client would otherwise lose the Reject that says why it was closed.
   */
  close(code: number, reason: string): void {
    this.flush();
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
  readonly kind: TransportKind;
  readonly datagrams: boolean;
  readonly #pipe: LinkPipe<() => void>;
  #inFlight = 0;
  readonly #frame: (() => void)[] = [];

  constructor(inner: Transport, opts: { path: LinkPath; clock: LinkClock }) {
    this.inner = inner;
    this.kind = inner.kind;
    this.datagrams = inner.datagrams;
    this.#pipe = new LinkPipe<() => void>(opts.path, { clock: opts.clock, deliver: (f) => f() });
  }

  /** Bytes still on the simulated path, plus what the inner transport holds. */
  get bufferedBytes(): number {
    return this.#inFlight + this.inner.bufferedBytes;
  }

  sendReliable(data: Uint8Array): void {
    this.#inFlight += data.byteLength;
    this.#frame.push(() => {
      this.#inFlight -= data.byteLength;
      this.inner.sendReliable(data);
    });
  }

  /**
   * Taken now, as a real socket takes it (the instance counts it as sent). On an ordered
   * stream it is then delivered, never skipped: frames the path bunches up (jitter, a
   * stall) arrive together, and the inner socket, still busy with the one before, would
   * otherwise drop a snapshot the next delta is based on.
   */
  sendLatest(data: Uint8Array): boolean {
    this.#inFlight += data.byteLength;
    this.#frame.push(() => {
      this.#inFlight -= data.byteLength;
      if (this.inner.datagrams) this.inner.sendLatest(data);
      else this.inner.sendReliable(data);
    });
    return true;
  }

  /** The tick's messages travel the path together, as the one frame they become. */
  flush(): void {
    if (this.#frame.length === 0) return;
    const frame = this.#frame.splice(0);
    this.#pipe.send(() => {
      for (const send of frame) send();
      this.inner.flush();
    });
  }

  close(code: number, reason: string): void {
    this.flush();
    this.#pipe.send(() => this.inner.close(code, reason));
  }

  /** The socket is gone: drop what is still in flight. */
  discard(): void {
    this.#pipe.clear();
    this.#inFlight = 0;
  }
}
