/**
 * The front door's byte-level audit, as pure state machines (no I/O): the client's
 * side of one TCP connection, first HTTP/1.1 request heads (size-capped, the
 * client's address written in a header only the door can set), then, after a
 * WebSocket upgrade, RFC 6455 frames checked at their header, before their
 * payload is read: a message over the cap never gets buffered anywhere. Plus the
 * server's side, read only to know where its frames end (to slip a close frame in).
 * Imports nothing but its own types.
 */

/** What the audit says to do with a chunk from the client. */
export type AuditStep =
  /**
   * Pass these bytes to the server (the head rewritten; frames as they came). A head
   * comes with what it says, parsed.
   */
  | { readonly kind: "forward"; readonly bytes: Uint8Array; readonly request?: RequestHead }
  /** HTTP phase: answer with this status and reason, then close. */
  | { readonly kind: "refuse"; readonly status: number; readonly reason: string }
  /** WebSocket phase: send a close frame with this code and reason, then close. */
  | { readonly kind: "close"; readonly code: number; readonly reason: string };

/** A request head that passed the audit, as rewritten (the door's address header included). */
export interface RequestHead {
  readonly method: string;
  /** The request target as sent ("/ws?x=1"). */
  readonly target: string;
  readonly headers: readonly (readonly [string, string])[];
  /** A GET asking for a WebSocket upgrade: WebSocket frames follow it. */
  readonly upgrade: boolean;
}

/** Limits of one audited connection. */
export interface StreamLimits {
  /** Bytes of one request head (request line and headers). */
  readonly maxHeaderBytes: number;
  /** Bytes of a request body (the game has none; small forms at most). */
  readonly maxBodyBytes: number;
  /** Bytes of one WebSocket message, however it is fragmented. */
  readonly maxMessageBytes: number;
  /** Control frames (ping, pong, close) per second, sustained, and at once. */
  readonly controlPerSec: number;
  readonly controlBurst: number;
}

const CRLFCRLF = [13, 10, 13, 10];
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const REQUEST_LINE = /^([A-Z]+) (\S+) HTTP\/1\.[01]$/;

const NOTHING: readonly Uint8Array[] = [];

function joinAll(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  let out: Uint8Array = new Uint8Array(0);
  for (const p of parts) out = concat(out, p);
  return out;
}

/** The client's side of one connection: request heads, then WebSocket frames. */
export class ClientStreamAudit {
  readonly #peer: string;
  readonly #peerHeader: string;
  readonly #limits: StreamLimits;
  #state: "head" | "body" | "ws" | "done" = "head";
  /** The head read so far (at most maxHeaderBytes). */
  #head: Uint8Array = new Uint8Array(0);
  #bodyLeft = 0;
  #requests = 0;
  readonly #frames: ClientFrameScanner;

  constructor(opts: { peer: string; peerHeader: string; limits: StreamLimits; nowMs: number }) {
    this.#peer = opts.peer;
    this.#peerHeader = opts.peerHeader.toLowerCase();
    this.#limits = opts.limits;
    this.#frames = new ClientFrameScanner(opts.limits, opts.nowMs);
  }

  /** "head" while reading a request head, "body" in its body, "ws" after an upgrade. */
  get state(): "head" | "body" | "ws" | "done" {
    return this.#state;
  }

  /** Requests passed on so far (the upgrade request included). */
  get requests(): number {
    return this.#requests;
  }

  /** The server has sent its close: from the next frame, pass the client's control frames only. */
  serverClosed(): void {
    this.#frames.dropData = true;
  }

  /** True while part of a request head has arrived but not all of it (a header timer runs). */
  get midHead(): boolean {
    return this.#state === "head" && this.#head.byteLength > 0;
  }

  /** Audits one chunk from the client; a terminal step ("refuse", "close") ends the audit. */
  feed(chunk: Uint8Array, nowMs: number): AuditStep[] {
    const out: AuditStep[] = [];
    let at = 0;
    while (at < chunk.byteLength && this.#state !== "done") {
      if (this.#state === "ws") {
        const step = this.#frames.feed(at === 0 ? chunk : chunk.subarray(at), nowMs);
        if (step.forward.byteLength > 0) out.push({ kind: "forward", bytes: step.forward });
        if (step.close) {
          this.#state = "done";
          out.push({ kind: "close", ...step.close });
        }
        break;
      }
      if (this.#state === "body") {
        const n = Math.min(this.#bodyLeft, chunk.byteLength - at);
        out.push({ kind: "forward", bytes: chunk.subarray(at, at + n) });
        this.#bodyLeft -= n;
        at += n;
        if (this.#bodyLeft === 0) this.#state = "head";
        continue;
      }
      // Head: gather until CRLFCRLF, never past the cap.
      const before = this.#head.byteLength;
      const room = this.#limits.maxHeaderBytes - before;
      const take = chunk.subarray(at, at + Math.max(0, room) + 1);
      const joined = concat(this.#head, take);
      const end = indexOf(joined, CRLFCRLF, Math.max(0, before - 3));
      if (end < 0) {
        if (joined.byteLength > this.#limits.maxHeaderBytes) {
          this.#state = "done";
          out.push({ kind: "refuse", status: 431, reason: "request head too large" });
          break;
        }
        this.#head = joined;
        at += take.byteLength;
        continue;
      }
      const headEnd = end + 4;
      at += headEnd - before;
      this.#head = new Uint8Array(0);
      const step = this.#request(joined.subarray(0, headEnd));
      out.push(step);
      if (step.kind !== "forward") {
        this.#state = "done";
        break;
      }
    }
    return out;
  }

  /** Parses one complete head; returns it rewritten, or why it is refused. */
  #request(head: Uint8Array): AuditStep {
    const lines = latin1(head.subarray(0, head.byteLength - 4)).split("\r\n");
    const line = REQUEST_LINE.exec(lines[0]);
    if (!line) return { kind: "refuse", status: 400, reason: "bad request line" };
    const kept: string[] = [lines[0]];
    const pairs: [string, string][] = [];
    const headers = new Map<string, string>();
    for (const h of lines.slice(1)) {
      const colon = h.indexOf(":");
      const name = colon > 0 ? h.slice(0, colon) : "";
      if (!TOKEN.test(name)) return { kind: "refuse", status: 400, reason: "bad header line" };
      const key = name.toLowerCase();
      const value = h.slice(colon + 1).trim();
      if (/[\0\r\n]/.test(value)) return { kind: "refuse", status: 400, reason: "bad header" };
      if (key === this.#peerHeader) continue; // only the door says where a client is
      if (headers.has(key) && (key === "content-length" || key === "host")) {
        return { kind: "refuse", status: 400, reason: `duplicate ${key}` };
      }
      headers.set(key, headers.has(key) ? `${headers.get(key)}, ${value}` : value);
      kept.push(h);
      pairs.push([name, value]);
    }
    if (headers.has("transfer-encoding")) {
      return { kind: "refuse", status: 501, reason: "request bodies in chunks are not accepted" };
    }
    const length = headers.get("content-length");
    const bodyBytes = length === undefined ? 0 : Number(length);
    if (!Number.isSafeInteger(bodyBytes) || bodyBytes < 0 || !/^\d*$/.test(length ?? "")) {
      return { kind: "refuse", status: 400, reason: "bad content-length" };
    }
    if (bodyBytes > this.#limits.maxBodyBytes) {
      return { kind: "refuse", status: 413, reason: "request body too large" };
    }
    kept.push(`${this.#peerHeader}: ${this.#peer}`);
    pairs.push([this.#peerHeader, this.#peer]);
    this.#requests++;
    const upgrade = line[1] === "GET" && headers.get("upgrade")?.toLowerCase() === "websocket";
    if (upgrade) this.#state = "ws";
    else if (bodyBytes > 0) {
      this.#state = "body";
      this.#bodyLeft = bodyBytes;
    }
    return {
      kind: "forward",
      bytes: fromLatin1(kept.join("\r\n") + "\r\n\r\n"),
      request: { method: line[1], target: line[2], headers: pairs, upgrade },
    };
  }
}

/** Opcodes of RFC 6455. */
export const WsOp = { Continuation: 0, Text: 1, Binary: 2, Close: 8, Ping: 9, Pong: 10 } as const;

/**
 * Client → server WebSocket frames: each checked at its header (opcode, mask, size;
 * a fragmented message by its running total) before a byte of its payload is taken.
 */
export class ClientFrameScanner {
  readonly #limits: StreamLimits;
  /** Header bytes of the frame being read (2–14). */
  #header = new Uint8Array(14);
  #headerLength = 0;
  #payloadLeft = 0;
  /** Bytes of the data message in progress, across its fragments (-1: none). */
  #messageBytes = -1;
  #controlTokens = 0;
  #controlAt = 0;

  constructor(limits: StreamLimits, nowMs: number) {
    this.#limits = limits;
    this.#controlTokens = limits.controlBurst;
    this.#controlAt = nowMs;
  }

  /**
   * Drop data frames from the next frame on, passing control frames only: set once the
   * server has sent its close, so that the server hears the client's close reply and
   * nothing else (Deno drops a socket that receives data after its close(), close
   * frame and all).
   */
  dropData = false;
  /** The frame in progress is being dropped. */
  #dropping = false;

  /** What feed() found, reused by every call (a game socket's every read goes through it). */
  readonly #result: { forward: Uint8Array; close: { code: number; reason: string } | undefined } = {
    forward: new Uint8Array(0),
    close: undefined,
  };

  /**
   * Scans a chunk: the bytes to forward, and a close if a frame broke a rule. The answer
   * is valid until the next call.
   */
  feed(
    chunk: Uint8Array,
    nowMs: number,
  ): {
    readonly forward: Uint8Array;
    readonly close: { code: number; reason: string } | undefined;
  } {
    const result = this.#result;
    result.close = undefined;
    /** The runs kept so far, once part of the chunk is cut (none until then). */
    let kept: Uint8Array[] | undefined;
    /** Start of the run of bytes being kept. */
    let keepFrom = 0;
    let cut = this.#dropping;
    let at = 0;
    /** Where the frame being read began in this chunk (0 if it began in an earlier one). */
    let frameStart = 0;
    while (at < chunk.byteLength) {
      if (this.#payloadLeft > 0) {
        const n = Math.min(this.#payloadLeft, chunk.byteLength - at);
        this.#payloadLeft -= n;
        at += n;
        // A dropped frame's end: keeping starts again after it.
        if (this.#payloadLeft === 0 && this.#dropping) {
          this.#dropping = false;
          keepFrom = at;
        }
        continue;
      }
      if (this.#headerLength === 0) {
        frameStart = at;
        if (this.dropData && (chunk[at] & 0x0f) <= WsOp.Binary) {
          if (at > keepFrom) (kept ??= []).push(chunk.subarray(keepFrom, at));
          this.#dropping = true;
          cut = true;
        }
      }
      this.#header[this.#headerLength++] = chunk[at++];
      const need = headerLength(this.#header, this.#headerLength);
      if (need === undefined || this.#headerLength < need) continue;
      const close = this.#frame(nowMs);
      this.#headerLength = 0;
      if (close) {
        // Forward up to (not including) the frame that broke the rule.
        if (!this.#dropping && frameStart > keepFrom) {
          (kept ??= []).push(chunk.subarray(keepFrom, frameStart));
        }
        result.forward = joinAll(kept ?? NOTHING);
        result.close = close;
        return result;
      }
      // A dropped frame without payload ends with its header.
      if (this.#payloadLeft === 0 && this.#dropping) {
        this.#dropping = false;
        keepFrom = at;
      }
    }
    if (!cut) {
      result.forward = chunk;
      return result;
    }
    if (!this.#dropping && at > keepFrom) (kept ??= []).push(chunk.subarray(keepFrom, at));
    result.forward = joinAll(kept ?? NOTHING);
    return result;
  }

  /** Checks a complete frame header; sets up its payload. */
  #frame(nowMs: number): { code: number; reason: string } | undefined {
    const h = this.#header;
    const fin = (h[0] & 0x80) !== 0;
    const rsv = h[0] & 0x70;
    const opcode = h[0] & 0x0f;
    const masked = (h[1] & 0x80) !== 0;
    const length = payloadLength(h);
    const max = this.#limits.maxMessageBytes;
    if (rsv !== 0) return { code: 1002, reason: "reserved bits set (no extension was agreed)" };
    if (!masked) return { code: 1002, reason: "client frames must be masked" };
    if (opcode >= WsOp.Close) {
      if (opcode > WsOp.Pong) return { code: 1002, reason: `unknown opcode ${opcode}` };
      if (!fin || length > 125) return { code: 1002, reason: "bad control frame" };
      const elapsed = (nowMs - this.#controlAt) / 1000;
      this.#controlAt = nowMs;
      this.#controlTokens = Math.min(
        this.#limits.controlBurst,
        this.#controlTokens + elapsed * this.#limits.controlPerSec,
      );
      if (--this.#controlTokens < 0) return { code: 4003, reason: "sending too fast" };
      this.#payloadLeft = length;
      return undefined;
    }
    if (opcode > WsOp.Binary) return { code: 1002, reason: `unknown opcode ${opcode}` };
    if (opcode === WsOp.Continuation) {
      if (this.#messageBytes < 0) return { code: 1002, reason: "continuation without a message" };
    } else {
      if (this.#messageBytes >= 0) return { code: 1002, reason: "new message inside a message" };
      this.#messageBytes = 0;
    }
    this.#messageBytes += length;
    if (this.#messageBytes > max) {
      const size = Number.isFinite(this.#messageBytes) ? `${this.#messageBytes} bytes` : "more";
      return { code: 4004, reason: `message of ${size} exceeds ${max}` };
    }
    if (fin) this.#messageBytes = -1;
    this.#payloadLeft = length;
    return undefined;
  }
}

/**
 * Server → client frames, read only for where each ends, so that a close frame of
 * the door's own never lands inside one of the server's.
 */
export class ServerFrameTracker {
  #header = new Uint8Array(14);
  #headerLength = 0;
  #payloadLeft = 0;
  /** True once a close frame has started. */
  sawClose = false;

  /** True between frames. */
  get atBoundary(): boolean {
    return this.#headerLength === 0 && this.#payloadLeft === 0;
  }

  /** How many bytes of `chunk` finish the frame in progress (0 at a boundary). */
  untilBoundary(chunk: Uint8Array): number {
    return this.atBoundary ? 0 : this.#scan(chunk, { stopAtBoundary: true });
  }

  /** Follows a chunk that was forwarded whole. */
  feed(chunk: Uint8Array): void {
    this.#scan(chunk, { stopAtBoundary: false });
  }

  /** Reads frame headers and skips payloads; returns where it stopped. */
  #scan(chunk: Uint8Array, opts: { stopAtBoundary: boolean }): number {
    let at = 0;
    while (at < chunk.byteLength) {
      if (this.#payloadLeft > 0) {
        const n = Math.min(this.#payloadLeft, chunk.byteLength - at);
        this.#payloadLeft -= n;
        at += n;
        if (opts.stopAtBoundary && this.atBoundary) return at;
        continue;
      }
      if (this.#headerLength === 0 && (chunk[at] & 0x0f) === WsOp.Close) this.sawClose = true;
      this.#header[this.#headerLength++] = chunk[at++];
      const need = headerLength(this.#header, this.#headerLength);
      if (need === undefined || this.#headerLength < need) continue;
      this.#payloadLeft = payloadLength(this.#header);
      this.#headerLength = 0;
      if (opts.stopAtBoundary && this.atBoundary) return at;
    }
    return at;
  }
}

/** A server → client close frame (unmasked) with `code` and `reason` (≤ 123 bytes of UTF-8). */
export function closeFrame(code: number, reason: string): Uint8Array {
  const text = new TextEncoder().encode(reason).subarray(0, 123);
  const out = new Uint8Array(4 + text.byteLength);
  out[0] = 0x88;
  out[1] = 2 + text.byteLength;
  out[2] = code >> 8;
  out[3] = code & 0xff;
  out.set(text, 4);
  return out;
}

/**
 * A client → server close frame (masked, with a zero key) with `code` and `reason`: the
 * door closing a client for cause tells the server the same code, so that the server
 * ends that player's session rather than keep it for a resume.
 */
export function clientCloseFrame(code: number, reason: string): Uint8Array {
  const unmasked = closeFrame(code, reason);
  const out = new Uint8Array(unmasked.byteLength + 4);
  out[0] = unmasked[0];
  out[1] = 0x80 | unmasked[1];
  out.set(unmasked.subarray(2), 6); // after the 4-byte key, all zeros
  return out;
}

/** A frame header's full length once its first `have` bytes are in (undefined: need 2). */
export function headerLength(h: Uint8Array, have: number): number | undefined {
  if (have < 2) return undefined;
  const len7 = h[1] & 0x7f;
  const mask = (h[1] & 0x80) !== 0 ? 4 : 0;
  return 2 + (len7 === 126 ? 2 : len7 === 127 ? 8 : 0) + mask;
}

/** The payload length a complete header declares (Infinity past 2^53). */
export function payloadLength(h: Uint8Array): number {
  const len7 = h[1] & 0x7f;
  if (len7 < 126) return len7;
  if (len7 === 126) return (h[2] << 8) | h[3];
  const high = ((h[2] << 24) >>> 0) + (h[3] << 16) + (h[4] << 8) + h[5];
  const low = ((h[6] << 24) >>> 0) + (h[7] << 16) + (h[8] << 8) + h[9];
  return high >= 0x200000 ? Infinity : high * 2 ** 32 + low;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.byteLength === 0) return b;
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}

function indexOf(hay: Uint8Array, needle: readonly number[], from: number): number {
  outer: for (let i = from; i <= hay.byteLength - needle.length; i++) {
    for (let k = 0; k < needle.length; k++) if (hay[i + k] !== needle[k]) continue outer;
    return i;
  }
  return -1;
}

function latin1(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return s;
}

function fromLatin1(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff);
}
