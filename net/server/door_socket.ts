/**
 * A game WebSocket the front door ends itself. The door reads the client's TCP
 * connection and audits its frames anyway; here they become messages for the
 * server directly, and the server's frames go straight to the client's connection:
 * one write per flush, no second hop through Deno.serve and back, no WebSocket
 * machinery in between. Implements the same ServerSocket as Deno's socket does
 * (net/server/server_socket.ts), so the route and the transport cannot tell them apart.
 */
import type { PendingSocket, ServerSocket, SocketListener } from "./server_socket.ts";
import { closeFrame } from "./stream_audit.ts";
import {
  type ClientFrameSink,
  ClientMessageReader,
  handshakeAccept,
  OutBuffer,
  switchingProtocols,
  WsOp,
} from "./ws_frames.ts";

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

/** How long a close we sent waits for the client's answer before the connection is dropped. */
const CLOSE_WAIT_MS = 1000;
/** After a close for cause, how long the close frame gets to leave. */
const LINGER_MS = 200;
/** No bytes: the chunk in progress when no write is. */
const NOTHING: Uint8Array = new Uint8Array(0);
/** Each of a socket's two output buffers starts this large (a tick's frame is far smaller). */
const OUT_BYTES = 2048;

/** The door's side: writing to the client, ending the connection. */
export interface SocketWire {
  /** The client's connection (the socket writes to it; the door reads it). */
  readonly conn: {
    write(bytes: Uint8Array): Promise<number>;
    /**
     * Writes the first `length` bytes on the spot, with no promise: what the socket took
     * (maybe fewer), or undefined when it cannot so (a write is waiting, or it failed:
     * write() then says why). The C library's sockets have it; Deno's do not.
     */
    writeNow?(bytes: Uint8Array, length: number): number | undefined;
  };
  /** Ends our writing half: the client reads EOF after what was written. */
  closeWrite(): Promise<void>;
  /** Drops the connection (the door forgets it; `gone()` follows). */
  end(): void;
}

export class DoorSocket implements ServerSocket, PendingSocket {
  #readyState = CONNECTING;
  readonly #headers: Headers;
  readonly #wire: SocketWire;
  readonly #reader = new ClientMessageReader();
  #listener: SocketListener | undefined;
  /**
   * Frames waiting for the next write, written in place; the other buffer is the one a
   * write in progress reads from (they swap at each write), with its bytes still to go.
   */
  #pending = new OutBuffer(OUT_BYTES);
  #spare = new OutBuffer(OUT_BYTES);
  #inFlight = 0;
  #writing = false;
  /** The bytes being written (a view of the spare buffer), and how many of them have gone. */
  #chunk: Uint8Array = NOTHING;
  #written = 0;
  /** Writes begun so far, and whether one is still in progress (the door's stall check). */
  #writes = 0;
  #writePending = false;
  #notified = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #textDecoder: TextDecoder | undefined;
  /** What runs once the writes in progress are done (ending after a close). */
  #drained: (() => void | Promise<void>) | undefined;
  /** The close we sent, told to the listener when the connection ends. */
  #sentClose: { code: number; reason: string } | undefined;

  constructor(opts: { headers: Headers; wire: SocketWire }) {
    this.#headers = opts.headers;
    this.#wire = opts.wire;
  }

  /** The route took the socket: the 101 is queued, and the socket is open. */
  get accepted(): boolean {
    return this.#readyState !== CONNECTING;
  }

  get readyState(): number {
    return this.#readyState;
  }

  /** Writes begun so far: the same count on two looks at a pending write means it has not moved. */
  get writes(): number {
    return this.#writes;
  }

  /** A write to the client is in progress. */
  get writePending(): boolean {
    return this.#writePending;
  }

  /** Bytes handed to the socket that have not been written yet. */
  get bufferedAmount(): number {
    return this.#pending.length + this.#inFlight;
  }

  accept(): ServerSocket {
    if (this.#readyState !== CONNECTING) throw new TypeError("socket already accepted");
    const key = handshakeAccept(this.#headers);
    this.#readyState = OPEN;
    this.#push(switchingProtocols(key));
    return this;
  }

  listen(listener: SocketListener): void {
    this.#listener = listener;
  }

  send(data: Uint8Array): void {
    if (this.#readyState !== OPEN) return;
    this.#pushFrame(WsOp.Binary, [data], 1);
  }

  /** One binary message of the first `count` parts joined, built in one buffer with its header. */
  sendParts(parts: readonly Uint8Array[], count: number): void {
    if (this.#readyState !== OPEN) return;
    this.#pushFrame(WsOp.Binary, parts, count);
  }

  /** Sends a close frame; the connection ends when the client answers (or after a wait). */
  close(code = 1000, reason = ""): void {
    if (this.#readyState !== OPEN) return;
    this.#readyState = CLOSING;
    this.#sentClose = { code, reason };
    this.#push(closeFrame(code, reason));
    // The listener hears of it when the connection ends, never from inside this call.
    this.#timer = setTimeout(() => this.#wire.end(), CLOSE_WAIT_MS);
  }

  /** Audited frames from the client. */
  receive(bytes: Uint8Array): void {
    this.#reader.read(bytes, this.#frames);
  }

  /** Where the reader hands each frame (made once: every message of the client passes). */
  readonly #frames: ClientFrameSink = {
    message: (data, text) => {
      // After our close, the client's data is not read (its close answer is).
      if (this.#readyState !== OPEN) return;
      if (text) this.#text(data);
      else this.#listener?.message(data);
    },
    control: (e) => {
      if (this.#readyState === CLOSED) return;
      switch (e.kind) {
        case "ping":
          if (this.#readyState === OPEN) this.#pushFrame(WsOp.Pong, [e.data], 1);
          break;
        case "pong":
          break;
        case "close":
          this.#closeReceived(e.code, e.reason);
          break;
      }
    },
  };

  /**
   * The client broke a frame rule (the audit's verdict): a close frame with why, the
   * server hears the same code (no resume for cause), and the connection ends shortly.
   */
  fail(code: number, reason: string): void {
    if (this.#readyState === CLOSED) return;
    const wasOpen = this.#readyState === OPEN;
    this.#readyState = CLOSING;
    if (wasOpen) this.#push(closeFrame(code, reason));
    this.#notify(String(code), reason);
    this.#afterWrites(async () => {
      await this.#wire.closeWrite();
      clearTimeout(this.#timer);
      this.#timer = setTimeout(() => this.#wire.end(), LINGER_MS);
    });
  }

  /** The connection is gone (EOF, an error, the door ended it). */
  gone(): void {
    if (this.#readyState === CLOSED) return;
    this.#readyState = CLOSED;
    clearTimeout(this.#timer);
    this.#pending.clear();
    this.#inFlight = 0;
    const sent = this.#sentClose;
    this.#notify(sent ? String(sent.code) : "1006", sent?.reason ?? "");
  }

  #text(bytes: Uint8Array): void {
    let text: string;
    try {
      this.#textDecoder ??= new TextDecoder("utf-8", { fatal: true });
      text = this.#textDecoder.decode(bytes);
    } catch {
      this.fail(1007, "text message is not UTF-8");
      return;
    }
    this.#listener?.message(text);
  }

  #closeReceived(code: number, reason: string): void {
    if (this.#readyState === OPEN) {
      // The client closes: answer with its code (none if it gave none), then end.
      this.#readyState = CLOSING;
      this.#push(code === 1005 ? closeFrame1005() : closeFrame(code, ""));
      this.#notify(String(code), reason);
    } else if (this.#sentClose) {
      this.#notify(String(this.#sentClose.code), this.#sentClose.reason);
    }
    // Our close answered (or theirs echoed): nothing more goes either way.
    this.#afterWrites(() => this.#wire.end());
  }

  #notify(code: string, reason: string): void {
    if (this.#notified) return;
    this.#notified = true;
    this.#listener?.closed(code, reason);
  }

  /** Runs `fn` once every queued frame has been written. */
  #afterWrites(fn: () => void | Promise<void>): void {
    if (!this.#writing && this.#pending.length === 0) {
      void fn();
      return;
    }
    this.#drained = fn;
  }

  /** Queues bytes made elsewhere (the 101, a close frame) as they are. */
  #push(bytes: Uint8Array): void {
    this.#pending.raw(bytes);
    this.#startWriting();
  }

  /** Queues one frame of the first `count` parts joined, built straight into the pending buffer. */
  #pushFrame(opcode: number, parts: readonly Uint8Array[], count: number): void {
    this.#pending.frame(opcode, parts, count);
    this.#startWriting();
  }

  #startWriting(): void {
    if (this.#writing) return;
    // The write starts once the tick that queued it is over: the tick's time is the
    // game's, and its sockets are written together right after it, in the same wake-up
    // (as Deno's own WebSocket writes between ticks).
    this.#writing = true;
    queueMicrotask(this.#pump);
  }

  // The writes go by callbacks made once per socket, not by an async function: one of
  // those is an object per call, its registers and promise included, and a server writes
  // to every client twenty times a second.

  /** Starts the next write: what is queued goes out; frames queued meanwhile go into the other buffer. */
  readonly #pump = (): void => {
    if (this.#pending.length === 0 || this.#readyState === CLOSED) {
      this.#doneWriting();
      return;
    }
    const out = this.#pending;
    this.#pending = this.#spare;
    this.#spare = out;
    this.#writes++;
    // A socket that takes it all on the spot (nearly every write, on the C library's
    // sockets) needs no view and no promise: twenty writes a second for every client.
    const now = this.#wire.conn.writeNow?.(out.buffer, out.length) ?? 0;
    if (now === out.length) {
      out.clear();
      this.#pump();
      return;
    }
    this.#chunk = out.view();
    this.#written = now;
    this.#inFlight = this.#chunk.byteLength;
    this.#writePending = true;
    this.#writeRest();
  };

  /** Writes what is left of the chunk in progress. */
  #writeRest(): void {
    const chunk = this.#written === 0 ? this.#chunk : this.#chunk.subarray(this.#written);
    let wrote: Promise<number>;
    try {
      wrote = this.#wire.conn.write(chunk);
    } catch {
      this.#writeFailed();
      return;
    }
    wrote.then(this.#wrote, this.#writeFailed);
  }

  readonly #wrote = (n: number): void => {
    this.#written += n;
    if (this.#written < this.#chunk.byteLength) {
      this.#writeRest();
      return;
    }
    this.#writePending = false;
    this.#inFlight = 0;
    this.#chunk = NOTHING;
    // The buffer just written (the other one took the frames queued meanwhile).
    this.#spare.clear();
    this.#pump();
  };

  readonly #writeFailed = (): void => {
    this.#writePending = false;
    this.#chunk = NOTHING;
    this.#wire.end();
    this.#doneWriting();
  };

  /** Nothing more to write (or the connection broke): what waited for the writes runs. */
  #doneWriting(): void {
    this.#writing = false;
    const then = this.#drained;
    this.#drained = undefined;
    if (then && this.#readyState !== CLOSED) void then();
  }
}

/** A close frame with no status code (the answer to a close that carried none). */
function closeFrame1005(): Uint8Array {
  return Uint8Array.of(0x88, 0);
}
