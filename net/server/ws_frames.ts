/**
 * The server's half of RFC 6455 for sockets the front door ends itself (no Deno
 * WebSocket, no second hop): the opening handshake's answer, client frames into
 * messages (unmasked, fragments joined) and server frames out. Pure byte work, no
 * I/O. Frames reach the reader already audited (net/server/stream_audit.ts: opcodes,
 * masks, sizes and control-frame rates were checked at each header), so it trusts
 * their shape.
 */
import { createHash } from "node:crypto";
import { packFrame } from "../wire/frames.ts";
import { messageBytes } from "../wire/mod.ts";
import { headerLength, payloadLength, WsOp } from "./stream_audit.ts";

export { WsOp };

const HANDSHAKE_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** What one client frame (or the last fragment of a message) amounts to. */
export type ClientFrameEvent =
  | { readonly kind: "binary"; readonly data: Uint8Array }
  | { readonly kind: "text"; readonly data: Uint8Array }
  | { readonly kind: "ping"; readonly data: Uint8Array }
  | { readonly kind: "pong" }
  /** `code` 1005 when the close frame carried none. */
  | { readonly kind: "close"; readonly code: number; readonly reason: string };

/**
 * Checks a WebSocket upgrade's headers and returns the Sec-WebSocket-Accept value,
 * or throws with what is wrong (as Deno.upgradeWebSocket does).
 */
export function handshakeAccept(headers: Headers): string {
  const connection = headers.get("connection")?.toLowerCase() ?? "";
  if (!connection.split(",").some((t) => t.trim() === "upgrade")) {
    throw new TypeError("Invalid Header: 'connection' header must contain 'Upgrade'");
  }
  if (headers.get("upgrade")?.toLowerCase() !== "websocket") {
    throw new TypeError("Invalid Header: 'upgrade' header must be 'websocket'");
  }
  if (headers.get("sec-websocket-version") !== "13") {
    throw new TypeError("Invalid Header: 'sec-websocket-version' header must be '13'");
  }
  const key = headers.get("sec-websocket-key") ?? "";
  // 16 random bytes, base64: 24 characters ending in "==".
  if (!/^[A-Za-z0-9+/]{22}==$/.test(key)) {
    throw new TypeError("Invalid Header: 'sec-websocket-key' header must be set");
  }
  return createHash("sha1").update(key + HANDSHAKE_GUID).digest("base64");
}

/** The 101 answer to an accepted upgrade (no extension, no subprotocol). */
export function switchingProtocols(accept: string): Uint8Array {
  return new TextEncoder().encode(
    "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n" +
      `sec-websocket-accept: ${accept}\r\n\r\n`,
  );
}

/** The header of an unmasked server frame (FIN set) of `n` payload bytes, written at `at`. */
function writeFrameHeader(out: Uint8Array, at: number, opcode: number, n: number): number {
  out[at] = 0x80 | opcode;
  if (n < 126) {
    out[at + 1] = n;
    return at + 2;
  }
  if (n < 0x10000) {
    out[at + 1] = 126;
    out[at + 2] = n >> 8;
    out[at + 3] = n & 0xff;
    return at + 4;
  }
  out[at + 1] = 127;
  // Messages stay far below 2^32 bytes: the high word is zero.
  out.fill(0, at + 2, at + 6);
  out[at + 6] = (n >>> 24) & 0xff;
  out[at + 7] = (n >>> 16) & 0xff;
  out[at + 8] = (n >>> 8) & 0xff;
  out[at + 9] = n & 0xff;
  return at + 10;
}

function headerBytes(n: number): number {
  return n < 126 ? 2 : n < 0x10000 ? 4 : 10;
}

/** One unmasked server frame (FIN set) carrying `parts` joined: header and payload in one buffer. */
export function serverFrame(opcode: number, parts: readonly Uint8Array[]): Uint8Array {
  const out = new OutBuffer(0);
  out.frame(opcode, parts, parts.length);
  return out.view();
}

/**
 * Bytes waiting to be written to one connection, built in place: frames are written
 * straight into a buffer the socket keeps from write to write, rather than each into
 * its own new one (a busy server writes tens of thousands of frames a second, and a
 * buffer a write holds on to outlives the young generation).
 */
export class OutBuffer {
  #bytes: Uint8Array;
  #length = 0;
  readonly #initial: number;

  constructor(capacity: number) {
    this.#initial = capacity;
    this.#bytes = new Uint8Array(capacity);
  }

  get length(): number {
    return this.#length;
  }

  /** The buffer itself: its first `length` bytes are the ones written (valid until the next write or clear). */
  get buffer(): Uint8Array {
    return this.#bytes;
  }

  /** The bytes written so far (a view: valid until the next write or clear). */
  view(): Uint8Array {
    return this.#bytes.subarray(0, this.#length);
  }

  /** Appends one server frame carrying the first `count` of `parts` joined. */
  frame(opcode: number, parts: readonly Uint8Array[], count: number): void {
    let n = 0;
    for (let i = 0; i < count; i++) n += parts[i].byteLength;
    let at = this.#reserve(headerBytes(n) + n);
    at = writeFrameHeader(this.#bytes, at, opcode, n);
    for (let i = 0; i < count; i++) {
      const p = parts[i];
      this.#bytes.set(p, at);
      at += p.byteLength;
    }
  }

  /** Appends bytes as they are (a handshake answer, a close frame made elsewhere). */
  raw(bytes: Uint8Array): void {
    this.#bytes.set(bytes, this.#reserve(bytes.byteLength));
  }

  /** Empties it; a buffer one large message grew far is given back (a fresh one is made). */
  clear(): void {
    this.#length = 0;
    if (this.#bytes.byteLength > 8 * this.#initial) this.#bytes = new Uint8Array(this.#initial);
  }

  /** Makes room for `n` more bytes; returns where they go. */
  #reserve(n: number): number {
    const at = this.#length;
    if (at + n > this.#bytes.byteLength) {
      const grown = new Uint8Array(Math.max(2 * this.#bytes.byteLength, at + n));
      grown.set(this.#bytes.subarray(0, at));
      this.#bytes = grown;
    }
    this.#length = at + n;
    return at;
  }
}

/** Where a reader hands the frames it completes. */
export interface ClientFrameSink {
  /** A whole data message (text: its bytes, not yet decoded). */
  message(data: Uint8Array, text: boolean): void;
  /** A control frame. */
  control(event: Exclude<ClientFrameEvent, { kind: "binary" | "text" }>): void;
}

/** No payload: what the reader holds between frames. */
const NO_PAYLOAD = new Uint8Array(0);

/**
 * Client frames (already audited) into events: payloads unmasked, a fragmented
 * message joined, control frames as they come (they may sit between fragments).
 *
 * A payload that arrives whole in one chunk (nearly every one: a client's input is a
 * few dozen bytes) is read into a fresh array that only the event holds (a view of a
 * message slab, net/wire/slab.ts: an array of its own costs ~0.5 µs in Deno); the reader
 * keeps a payload only while the rest of it is still to come. An array held by the
 * reader until the client's next frame could outlive a young-generation collection,
 * and one stored into it while a full collection marks is kept to the end of that
 * collection: either way, a server's every input would reach the old generation.
 */
export class ClientMessageReader {
  #header = new Uint8Array(14);
  #headerLength = 0;
  /** The frame being read: its opcode, mask, payload so far. */
  #opcode = 0;
  #fin = false;
  #mask = new Uint8Array(4);
  #payload: Uint8Array = NO_PAYLOAD;
  #got = 0;
  #reading = false;
  /** Fragments of the data message in progress, and its opcode. */
  #fragments: Uint8Array[] = [];
  #messageOp = 0;

  /** Reads a chunk of frames; returns the events it completed, in order. */
  feed(chunk: Uint8Array): ClientFrameEvent[] {
    const out: ClientFrameEvent[] = [];
    this.read(chunk, {
      message: (data, text) => out.push({ kind: text ? "text" : "binary", data }),
      control: (event) => out.push(event),
    });
    return out;
  }

  /**
   * Reads a chunk of frames, handing each completed one to `sink` as it comes: a data
   * message with no event object or array around it (a server reads fifteen a second
   * from every client).
   */
  read(chunk: Uint8Array, sink: ClientFrameSink): void {
    let at = 0;
    while (at < chunk.byteLength) {
      let payload: Uint8Array;
      if (!this.#reading) {
        this.#header[this.#headerLength++] = chunk[at++];
        const need = headerLength(this.#header, this.#headerLength);
        if (need === undefined || this.#headerLength < need) continue;
        const length = this.#begin(need);
        this.#headerLength = 0;
        if (length > chunk.byteLength - at) {
          // The rest comes in later chunks: the reader holds what it has.
          this.#payload = new Uint8Array(length);
          this.#got = this.#unmask(this.#payload, { from: chunk, at, got: 0 });
          at = chunk.byteLength;
          this.#reading = true;
          continue;
        }
        payload = messageBytes(length);
        at += this.#unmask(payload, { from: chunk, at, got: 0 });
      } else {
        const got = this.#unmask(this.#payload, { from: chunk, at, got: this.#got });
        at += got - this.#got;
        this.#got = got;
        if (got < this.#payload.byteLength) continue;
        payload = this.#payload;
        this.#payload = NO_PAYLOAD;
        this.#reading = false;
      }
      this.#complete(payload, sink);
    }
  }

  /** Takes a frame's header; returns its payload's length. */
  #begin(headerBytes: number): number {
    const h = this.#header;
    this.#fin = (h[0] & 0x80) !== 0;
    this.#opcode = h[0] & 0x0f;
    const masked = (h[1] & 0x80) !== 0;
    if (masked) this.#mask.set(h.subarray(headerBytes - 4, headerBytes));
    else this.#mask.fill(0);
    // The audit capped the size: a real length, far below 2^53.
    return payloadLength(h);
  }

  /**
   * Unmasks what `from` holds past `at` into `payload` after its first `got` bytes, as
   * much as fits; returns the bytes of `payload` filled now.
   */
  #unmask(payload: Uint8Array, opts: { from: Uint8Array; at: number; got: number }): number {
    const { from, at, got } = opts;
    const n = Math.min(payload.byteLength - got, from.byteLength - at);
    const m = this.#mask;
    for (let i = 0; i < n; i++) payload[got + i] = from[at + i] ^ m[(got + i) & 3];
    return got + n;
  }

  #complete(payload: Uint8Array, sink: ClientFrameSink): void {
    switch (this.#opcode) {
      case WsOp.Ping:
        sink.control({ kind: "ping", data: payload });
        return;
      case WsOp.Pong:
        sink.control({ kind: "pong" });
        return;
      case WsOp.Close: {
        if (payload.byteLength < 2) {
          sink.control({ kind: "close", code: 1005, reason: "" });
          return;
        }
        const reason = new TextDecoder().decode(payload.subarray(2));
        sink.control({ kind: "close", code: (payload[0] << 8) | payload[1], reason });
        return;
      }
    }
    if (this.#opcode !== WsOp.Continuation) this.#messageOp = this.#opcode;
    if (!this.#fin) {
      this.#fragments.push(payload);
      return;
    }
    let data = payload;
    if (this.#fragments.length > 0) {
      this.#fragments.push(payload);
      data = packFrame(this.#fragments);
      this.#fragments = [];
    }
    sink.message(data, this.#messageOp === WsOp.Text);
  }
}
