/** Little-endian byte writer and reader for the hand-packed parts of messages. */
import { messageBytes } from "./slab.ts";

/** Thrown for any malformed or out-of-range wire data. */
export class CodecError extends TypeError {
  override name = "CodecError";
}

/** Up to this many bytes, `copyBytes` copies by hand. */
const SHORT_COPY = 64;

/**
 * Copies the first `n` bytes of `src` into `out` at `at`; returns where they end. A few
 * dozen bytes (most messages and their parts) go one by one: `set` is a call into the
 * runtime, and a part of `src` needs a view of its own first (a typed array, ~0.1 µs
 * here), where the loop needs neither.
 */
export function copyBytes(src: Uint8Array, n: number, out: Uint8Array, at: number): number {
  if (n <= SHORT_COPY) {
    for (let i = 0; i < n; i++) out[at + i] = src[i];
  } else {
    out.set(n === src.length ? src : src.subarray(0, n), at);
  }
  return at + n;
}

/** Appends fixed-size little-endian fields to a growing buffer. */
export class ByteWriter {
  #buf: Uint8Array;
  #view: DataView;
  length = 0;

  constructor(capacity = 256) {
    this.#buf = new Uint8Array(capacity);
    this.#view = new DataView(this.#buf.buffer);
  }

  /**
   * Empties the writer, keeping its buffer: an encoder that runs every tick reuses one
   * writer (`bytes()` copies out), where a fresh one costs an ArrayBuffer of its own
   * and a DataView, and the copy another. Only for encoders that never nest on it.
   */
  reset(): this {
    this.length = 0;
    return this;
  }

  /** Makes room for `n` bytes and returns where they start (call before reading #view). */
  #reserve(n: number): number {
    const at = this.length;
    if (at + n > this.#buf.length) {
      const next = new Uint8Array(Math.max(this.#buf.length * 2, at + n));
      next.set(this.#buf);
      this.#buf = next;
      this.#view = new DataView(next.buffer);
    }
    this.length += n;
    return at;
  }

  u8(v: number): void {
    const at = this.#reserve(1);
    this.#buf[at] = v;
  }
  i8(v: number): void {
    const at = this.#reserve(1);
    this.#view.setInt8(at, v);
  }
  u16(v: number): void {
    const at = this.#reserve(2);
    this.#view.setUint16(at, v, true);
  }
  i16(v: number): void {
    const at = this.#reserve(2);
    this.#view.setInt16(at, v, true);
  }
  u32(v: number): void {
    const at = this.#reserve(4);
    this.#view.setUint32(at, v, true);
  }
  i32(v: number): void {
    const at = this.#reserve(4);
    this.#view.setInt32(at, v, true);
  }
  f32(v: number): void {
    const at = this.#reserve(4);
    this.#view.setFloat32(at, v, true);
  }
  f64(v: number): void {
    const at = this.#reserve(8);
    this.#view.setFloat64(at, v, true);
  }

  /** The byte at `at` (already written). */
  getU8(at: number): number {
    return this.#buf[at];
  }

  /** Overwrites the byte at `at` (already written): a field whose value is known later. */
  setU8(at: number, v: number): void {
    if (at < 0 || at >= this.length) {
      throw new RangeError(`Cannot set byte ${at} of ${this.length}`);
    }
    this.#buf[at] = v;
  }

  /** Unsigned LEB128: 1 byte below 128, 2 below 16384, up to 5 for a uint32. */
  varuint(v: number): void {
    // A whole number in [0, 2^32): exactly what survives `>>> 0` unchanged.
    if (v >>> 0 !== v) throw new CodecError(`Cannot encode varuint ${v}`);
    while (v >= 0x80) {
      this.u8((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    this.u8(v);
  }

  /** Signed varint (zigzag then LEB128). */
  varint(v: number): void {
    if ((v | 0) === v) {
      // A 32-bit integer (nearly every one: deltas, gaps): zigzag with shifts, and the
      // common one-byte case written at once.
      const z = ((v << 1) ^ (v >> 31)) >>> 0;
      if (z < 0x80) this.u8(z);
      else this.varuint(z);
      return;
    }
    this.varuint(v < 0 ? -2 * v - 1 : 2 * v);
  }

  /** A copy of the bytes written so far (in a message slab: `messageBytes`). */
  bytes(): Uint8Array {
    const out = messageBytes(this.length);
    this.copyInto(out, 0);
    return out;
  }

  /** Copies the bytes written so far into `out` at `at`; returns where they end. */
  copyInto(out: Uint8Array, at: number): number {
    return copyBytes(this.#buf, this.length, out, at);
  }
}

/** Reads fixed-size little-endian fields; throws CodecError past the end. */
export class ByteReader {
  readonly #view: DataView;
  readonly #what: string;
  offset = 0;

  constructor(bytes: Uint8Array, what: string) {
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#what = what;
  }

  get remaining(): number {
    return this.#view.byteLength - this.offset;
  }

  #take(n: number): number {
    if (this.offset + n > this.#view.byteLength) {
      throw new CodecError(`Cannot decode ${this.#what}: truncated at byte ${this.offset}`);
    }
    const at = this.offset;
    this.offset += n;
    return at;
  }

  u8(): number {
    return this.#view.getUint8(this.#take(1));
  }
  i8(): number {
    return this.#view.getInt8(this.#take(1));
  }
  u16(): number {
    return this.#view.getUint16(this.#take(2), true);
  }
  i16(): number {
    return this.#view.getInt16(this.#take(2), true);
  }
  u32(): number {
    return this.#view.getUint32(this.#take(4), true);
  }
  i32(): number {
    return this.#view.getInt32(this.#take(4), true);
  }
  f32(): number {
    return this.#view.getFloat32(this.#take(4), true);
  }
  f64(): number {
    return this.#view.getFloat64(this.#take(8), true);
  }

  varuint(): number {
    let v = 0;
    for (let shift = 1, i = 0; i < 5; i++, shift *= 128) {
      const b = this.u8();
      v += (b & 0x7f) * shift;
      if ((b & 0x80) === 0) return v;
    }
    throw new CodecError(`Cannot decode ${this.#what}: varint longer than 5 bytes`);
  }

  varint(): number {
    const z = this.varuint();
    return z % 2 === 1 ? -(z + 1) / 2 : z / 2;
  }
}
