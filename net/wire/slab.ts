/**
 * Byte arrays for messages that live a tick or so, as views into shared slabs.
 *
 * Deno's V8 keeps no typed array on its own heap: every `new Uint8Array(n)`, however
 * small, is an ArrayBuffer with a backing store of its own, allocated outside the heap
 * and swept by the collector when it dies (0.5–1 µs a message here, against ~60 ns for
 * a view of a buffer that exists). A server makes hundreds of such messages a tick.
 * A slab is never written twice: a view stays valid and zeroed as a fresh array would,
 * however long it is kept, and a slab goes with its last view.
 */

/** One slab's bytes: a tick or two of a busy server's messages. */
export const SLAB_BYTES = 64 * 1024;
/** Larger arrays get a buffer of their own (a slab would waste its tail on them). */
export const MAX_SLAB_ARRAY = SLAB_BYTES / 16;

/** The slab being filled, and how much of it is handed out. */
const current = { slab: new ArrayBuffer(SLAB_BYTES), used: 0 };

/** A zeroed array of `n` bytes for a message: a view into the current slab. */
export function messageBytes(n: number): Uint8Array {
  if (n > MAX_SLAB_ARRAY) return new Uint8Array(n);
  if (current.used + n > SLAB_BYTES) {
    current.slab = new ArrayBuffer(SLAB_BYTES);
    current.used = 0;
  }
  const out = new Uint8Array(current.slab, current.used, n);
  current.used += n;
  return out;
}

/**
 * `bytes` in a buffer of its own: a copy when they are a view of a slab, else themselves.
 * For bytes handed to something that may hold them a long while (a stream that queues what
 * a slow peer has not taken yet): a slab lives as long as its longest-held view, so a
 * reader that stopped reading would otherwise keep a whole slab alive for each frame
 * queued to it, and the 256 KB its queue is allowed (thousands of small frames) would hold
 * hundreds of megabytes.
 */
export function ownBytes(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? bytes
    : bytes.slice();
}
