/** Message slabs: arrays that share buffers, never written twice, as fresh ones would be. */
import assert from "node:assert/strict";
import { MAX_SLAB_ARRAY, messageBytes, ownBytes, SLAB_BYTES } from "../../../net/wire/slab.ts";
import {
  decodeServerMessage,
  encodeSnapshot,
  MessageDecoder,
  MessageEncoder,
} from "../../../net/wire/codec.ts";
import { ServerKind } from "../../../net/wire/protocol.ts";

Deno.test("messageBytes() gives zeroed arrays of the size asked, side by side in one buffer", () => {
  const a = messageBytes(10);
  const b = messageBytes(30);
  assert.equal(a.byteLength, 10);
  assert.equal(b.byteLength, 30);
  assert.ok(a.every((v) => v === 0) && b.every((v) => v === 0));
  // Consecutive small arrays share a buffer (none of their own), unless a slab filled
  // between them: at most once in a slab, so of three in a row two share one.
  let c = messageBytes(20);
  let d = messageBytes(20);
  if (d.buffer !== c.buffer) [c, d] = [d, messageBytes(20)];
  assert.equal(c.buffer, d.buffer);
  // They never overlap: writing one leaves the other as it was.
  c.fill(7);
  assert.ok(d.every((v) => v === 0));
  d.fill(9);
  assert.ok(c.every((v) => v === 7));
});

Deno.test("messageBytes() never writes a slab twice: an array kept past many slabs keeps its bytes", () => {
  const kept = messageBytes(64);
  kept.forEach((_, i) => (kept[i] = i + 1));
  const later: Uint8Array[] = [];
  // Three slabs' worth after it, each array written over in full.
  for (let n = 0; n < (3 * SLAB_BYTES) / 100; n++) {
    const a = messageBytes(100);
    assert.ok(a.every((v) => v === 0), "a new array starts zeroed");
    a.fill(0xff);
    later.push(a);
  }
  assert.deepEqual([...kept], Array.from({ length: 64 }, (_, i) => i + 1));
  assert.ok(later.some((a) => a.buffer !== kept.buffer), "later slabs are new buffers");
});

Deno.test("messageBytes() gives a large array a buffer of its own", () => {
  const big = messageBytes(MAX_SLAB_ARRAY + 1);
  assert.equal(big.byteLength, MAX_SLAB_ARRAY + 1);
  assert.equal(big.buffer.byteLength, MAX_SLAB_ARRAY + 1);
  assert.equal(big.byteOffset, 0);
});

Deno.test("snapshots written into slabs decode as written, held while thousands more are written", () => {
  const enc = new MessageEncoder();
  const held: { bytes: Uint8Array; tick: number; body: number[] }[] = [];
  for (let tick = 10; tick < 3010; tick++) {
    const body = Array.from({ length: 20 + (tick % 60) }, (_, i) => (tick * 31 + i) & 0xff);
    const bytes = encodeSnapshot(enc, {
      tick,
      ackTick: tick - 2,
      lateTicks: tick % 3,
      slackTicks: tick % 5,
      baseTick: tick - 3,
      body: new Uint8Array(body),
      epoch: undefined,
    });
    if (tick % 100 === 10) held.push({ bytes, tick, body });
  }
  const dec = new MessageDecoder();
  for (const h of held) {
    const back = decodeServerMessage(dec, h.bytes);
    assert.ok(back.kind === ServerKind.Snapshot);
    assert.equal(back.tick, h.tick);
    assert.deepEqual([...back.body], h.body);
  }
});

Deno.test("ownBytes() copies a view of a slab into a buffer of its own, and leaves a whole buffer be", () => {
  const view = messageBytes(12).fill(6);
  const own = ownBytes(view);
  assert.notEqual(own.buffer, view.buffer);
  assert.equal(own.buffer.byteLength, 12);
  assert.deepEqual([...own], [...view]);
  const whole = new Uint8Array([1, 2, 3]);
  assert.equal(ownBytes(whole), whole);
});
