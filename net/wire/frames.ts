/**
 * Frames: how messages share one WebSocket frame or one QUIC stream. Everything a
 * side sends in one tick leaves as one frame (one TCP segment, one stream write),
 * not one per message: at 52 B of TCP/IP per frame, headers cost more than payload.
 *
 *   frame = message message …      a CBOR sequence (RFC 8742): every message is one
 *                                  self-delimiting CBOR item, so joining costs 0 bytes
 *
 * A frame of one message is that message, byte for byte. A QUIC stream carries frames
 * back to back; MessageStreamReader finds the items again whatever the chunking. A
 * datagram carries one message. Pure: no I/O.
 */
import { CodecError } from "./bytes.ts";
import { messageBytes, ownBytes } from "./slab.ts";

/**
 * Most messages a client accepts in one server frame: far above a tick's events,
 * snapshot and pongs (a flood of pings is answered in kind), yet bounded.
 */
export const MAX_SERVER_FRAME_MESSAGES = 4096;

/**
 * Joins messages into one frame. `own`: in a buffer of its own, never a view of a message
 * slab, for a socket that may queue it while a slow reader lags (`ownBytes`).
 */
export function packFrame(
  messages: readonly Uint8Array[],
  opts: { own?: boolean } = {},
): Uint8Array {
  if (messages.length === 1) return opts.own ? ownBytes(messages[0]) : messages[0];
  let size = 0;
  for (const m of messages) size += m.byteLength;
  const out = opts.own ? new Uint8Array(size) : messageBytes(size);
  let at = 0;
  for (const m of messages) {
    out.set(m, at);
    at += m.byteLength;
  }
  return out;
}

/**
 * True when the frame is one whole message, as nearly every client frame is (an input
 * batch): it can be read as it is, with no array of parts. False for anything else
 * (several messages, a cut one: splitFrame says which); a malformed head throws CodecError.
 */
export function isOneMessage(data: Uint8Array): boolean {
  return data.byteLength > 0 && cborItemEnd(data, 0, 0) === data.byteLength;
}

/** Splits a frame into its messages; throws CodecError when it is malformed or holds too many. */
export function splitFrame(data: Uint8Array, opts: { maxMessages: number }): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < data.byteLength) {
    if (out.length >= opts.maxMessages) {
      throw new CodecError(`Cannot decode frame: more than ${opts.maxMessages} messages`);
    }
    const end = cborItemEnd(data, at, 0);
    if (end === INCOMPLETE) {
      throw new CodecError(
        `Cannot decode frame: not CBOR (unexpected end of CBOR data after byte ${at})`,
      );
    }
    out.push(data.subarray(at, end));
    at = end;
  }
  if (out.length === 0) throw new CodecError("Cannot decode frame: empty");
  return out;
}

/**
 * Reassembles messages from a byte stream that arrives in arbitrary chunks (a QUIC
 * stream). Bounded: an item still incomplete after `maxMessageBytes` is an error, so
 * a peer cannot make the reader buffer without limit.
 */
export class MessageStreamReader {
  readonly #maxMessageBytes: number;
  #buf = new Uint8Array(0);

  constructor(opts: { maxMessageBytes: number }) {
    this.#maxMessageBytes = opts.maxMessageBytes;
  }

  /** Bytes held back waiting for the rest of a message. */
  get pendingBytes(): number {
    return this.#buf.byteLength;
  }

  /** Adds a chunk; returns every message it completed, in order. */
  push(chunk: Uint8Array): Uint8Array[] {
    let buf = chunk;
    if (this.#buf.byteLength > 0) {
      buf = new Uint8Array(this.#buf.byteLength + chunk.byteLength);
      buf.set(this.#buf);
      buf.set(chunk, this.#buf.byteLength);
    }
    const out: Uint8Array[] = [];
    let at = 0;
    while (at < buf.byteLength) {
      const end = cborItemEnd(buf, at, 0);
      if (end === INCOMPLETE) break;
      if (end - at > this.#maxMessageBytes) throw this.#tooLong(end - at);
      out.push(buf.slice(at, end));
      at = end;
    }
    this.#buf = buf.slice(at);
    if (this.#buf.byteLength > this.#maxMessageBytes) throw this.#tooLong(this.#buf.byteLength);
    return out;
  }

  #tooLong(bytes: number): CodecError {
    return new CodecError(
      `Cannot decode stream: a message of ${bytes}+ bytes exceeds ${this.#maxMessageBytes}`,
    );
  }
}

const INCOMPLETE = -1;
/** `readCborHead`'s answer for a head with no definite argument (an indefinite length, or none). */
const NOT_DEFINITE = -2;
/** Deeper nesting than any message of ours: refused, so hostile input cannot recurse far. */
const MAX_DEPTH = 8;

/** What `readCborHead` read last: the head's argument, and the byte after the head. */
export const cborHead = { arg: 0, next: 0 };

/**
 * The major type of the CBOR head at `at`, with its argument and the byte after it left
 * in `cborHead` (read them before the next call); -1 when the bytes stop inside it, -2
 * when it has no definite argument. The one reading of heads for the frame splitter and
 * the codec's hand-read messages; nothing is allocated.
 */
export function readCborHead(b: Uint8Array, at: number): number {
  if (at >= b.byteLength) return INCOMPLETE;
  const head = b[at];
  const info = head & 0x1f;
  if (info < 24) {
    cborHead.arg = info;
    cborHead.next = at + 1;
    return head >> 5;
  }
  if (info > 27) return NOT_DEFINITE;
  const size = 1 << (info - 24);
  if (at + 1 + size > b.byteLength) return INCOMPLETE;
  let arg = 0;
  for (let i = 0; i < size; i++) arg = arg * 256 + b[at + 1 + i];
  cborHead.arg = arg;
  cborHead.next = at + 1 + size;
  return head >> 5;
}

/**
 * Where the CBOR item starting at `at` ends, or INCOMPLETE if the bytes stop first.
 * Walks the structure only (heads and lengths); the codec validates contents later.
 */
function cborItemEnd(b: Uint8Array, at: number, depth: number): number {
  if (depth > MAX_DEPTH) throw new CodecError("Cannot decode frame: nested too deep");
  // Tags wrap one item: step over their heads here rather than recursing once per tag.
  for (;;) {
    if (at >= b.byteLength) return INCOMPLETE;
    const info = b[at] & 0x1f;
    if (b[at] >> 5 !== 6) break;
    if (info < 24) at += 1;
    else if (info <= 27) at += 1 + (1 << (info - 24));
    else {throw new CodecError(
        `Cannot decode frame: not CBOR (invalid head 0x${b[at].toString(16)})`,
      );}
  }
  let major = readCborHead(b, at);
  if (major === INCOMPLETE) return INCOMPLETE;
  if (major === NOT_DEFINITE) {
    const head = b[at];
    major = head >> 5;
    if ((head & 0x1f) !== 31 || major < 2 || major > 5) {
      throw new CodecError(`Cannot decode frame: not CBOR (invalid head 0x${head.toString(16)})`);
    }
    // Indefinite length: items (or chunks) until the break byte 0xff.
    let p = at + 1;
    for (;;) {
      if (p >= b.byteLength) return INCOMPLETE;
      if (b[p] === 0xff) return p + 1;
      p = cborItemEnd(b, p, depth + 1);
      if (p === INCOMPLETE) return INCOMPLETE;
      if (major === 5) {
        p = cborItemEnd(b, p, depth + 1);
        if (p === INCOMPLETE) return INCOMPLETE;
      }
    }
  }
  // Read before any recursion below reads another head.
  const { arg, next } = cborHead;
  switch (major) {
    case 0: // unsigned
    case 1: // negative
    case 7: // simple values and floats: the argument bytes were the value
      return next;
    case 2: // bytes
    case 3: // text
      return next + arg > b.byteLength ? INCOMPLETE : next + arg;
    case 4: // array
    case 5: { // map
      const items = major === 5 ? arg * 2 : arg;
      let p = next;
      for (let i = 0; i < items; i++) {
        p = cborItemEnd(b, p, depth + 1);
        if (p === INCOMPLETE) return INCOMPLETE;
      }
      return p;
    }
    default: // tags were stepped over above
      throw new CodecError("Cannot decode frame: unreachable CBOR tag");
  }
}
