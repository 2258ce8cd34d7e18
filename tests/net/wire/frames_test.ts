/**
 * Frames: several messages in one WebSocket frame or QUIC stream write, as a CBOR
 * sequence. Split exactly, whatever the chunking of a stream; malformed, truncated
 * or unbounded input is refused with a CodecError.
 */
import assert from "node:assert/strict";
import {
  CodecError,
  decodeClientMessage,
  encodeClientMessage,
  encodeServerMessage,
  MessageDecoder,
  MessageEncoder,
} from "../../../net/wire/codec.ts";
import {
  isOneMessage,
  MessageStreamReader,
  packFrame,
  splitFrame,
} from "../../../net/wire/frames.ts";
import { ClientKind, ServerKind } from "../../../net/wire/protocol.ts";
import { Rng } from "../../../sim/mod.ts";

const enc = new MessageEncoder();

/** Plain byte arrays: cbor-x may hand back a Buffer, which deepEqual tells from a Uint8Array. */
const plain = (list: readonly Uint8Array[]) => list.map((m) => Array.from(m));

function sampleMessages(): Uint8Array[] {
  return [
    encodeServerMessage(enc, {
      kind: ServerKind.Pong,
      clientTimeMs: 123456,
      tick: 70000,
      heldMs: 0,
    }),
    encodeServerMessage(enc, {
      kind: ServerKind.Events,
      tick: 9,
      volleys: [],
      hits: [],
      events: [{ type: "playerJoined", playerId: 3, name: "Zoë" }],
    }),
    encodeServerMessage(enc, { kind: ServerKind.Reject, code: 4003, reason: "x".repeat(300) }),
    // A large one: an Enter's bytes go past 65,535, into CBOR's 4-byte lengths.
    enc.encodeValue([13, "hub", 0, 1, 0, [], 0, new Uint8Array(83 * 800)]),
  ];
}

Deno.test("packFrame() then splitFrame() gives the messages back, byte for byte", () => {
  const messages = sampleMessages();
  const frame = packFrame(messages);
  assert.equal(frame.byteLength, messages.reduce((a, m) => a + m.byteLength, 0), "0 B overhead");
  assert.deepEqual(plain(splitFrame(frame, { maxMessages: 8 })), plain(messages));
  // One message is its own frame: what an old client or a datagram sends.
  assert.equal(packFrame([messages[0]]), messages[0]);
  assert.deepEqual(plain(splitFrame(messages[0], { maxMessages: 1 })), plain([messages[0]]));
});

Deno.test("isOneMessage() is true for one whole message alone, as splitFrame() would find it", () => {
  const messages = sampleMessages();
  for (const m of messages) {
    assert.equal(isOneMessage(m), true);
    // Cut short, or followed by another: not one message.
    assert.equal(isOneMessage(m.subarray(0, m.byteLength - 1)), false);
    assert.equal(isOneMessage(packFrame([m, messages[0]])), false);
  }
  assert.equal(isOneMessage(new Uint8Array(0)), false);
  assert.throws(() => isOneMessage(new Uint8Array([0xff, 0x01])), /not CBOR/);
});

Deno.test("splitFrame() refuses truncation, bad heads, deep nesting and too many messages", () => {
  const [pong] = sampleMessages();
  const cases: [string, Uint8Array, RegExp][] = [
    ["truncated", pong.subarray(0, pong.byteLength - 1), /end of CBOR data/],
    ["garbage head", new Uint8Array([0xff, 0x01]), /not CBOR/],
    ["reserved info", new Uint8Array([0x1c]), /not CBOR/],
    ["empty", new Uint8Array(0), /empty/],
    ["nested 20 deep", new Uint8Array([...Array(20).fill(0x81), 0x01]), /too deep/],
    ["three pongs", packFrame([pong, pong, pong]), /more than 2 messages/],
  ];
  for (const [what, bytes, pattern] of cases) {
    assert.throws(() => splitFrame(bytes, { maxMessages: 2 }), (err: unknown) => {
      assert.ok(err instanceof CodecError, what);
      assert.match((err as Error).message, pattern, what);
      return true;
    });
  }
  // Tags wrap an item without nesting it: a long run of them is fine.
  const tagged = new Uint8Array([...Array(120).fill([0xd8, 0x1c]).flat(), 0x05]);
  assert.equal(splitFrame(tagged, { maxMessages: 1 }).length, 1);
});

Deno.test("MessageStreamReader finds every message whatever the chunking", () => {
  const all = sampleMessages();
  const rng = new Rng(7);
  for (let trial = 0; trial < 10; trial++) {
    // Byte by byte for the small messages; chunks of up to 9 KB with the big one too.
    const messages = trial === 0 ? all.slice(0, 3) : all;
    const stream = packFrame([...messages, ...messages]);
    const reader = new MessageStreamReader({ maxMessageBytes: 1 << 20 });
    const out: Uint8Array[] = [];
    for (let at = 0; at < stream.byteLength;) {
      const n = trial === 0 ? 1 : 1 + Math.floor(rng.next() * 9000);
      out.push(...reader.push(stream.subarray(at, at + n)));
      at += n;
    }
    assert.equal(reader.pendingBytes, 0);
    assert.deepEqual(plain(out), plain([...messages, ...messages]), `trial ${trial}`);
  }
});

Deno.test("MessageStreamReader refuses a message longer than its bound, complete or not", () => {
  const big = encodeServerMessage(enc, {
    kind: ServerKind.Reject,
    code: 1,
    reason: "y".repeat(500),
  });
  assert.throws(() => new MessageStreamReader({ maxMessageBytes: 256 }).push(big), /exceeds 256/);
  const cut = new MessageStreamReader({ maxMessageBytes: 256 });
  assert.throws(() => cut.push(big.subarray(0, 300)), /exceeds 256/, "an endless prefix");
});

Deno.test("an input message with a ping is one client frame of two messages", () => {
  const dec = new MessageDecoder();
  const frames = [0, 1, 2, 3].map((i) => ({
    tick: 100 + i,
    moveX: 100,
    moveY: i === 3 ? -40 : 0,
    aim: (65530 + 3 * i) % 65536, // turns through 0: the shortest way round
    buttons: i >= 2 ? 1 : 0,
    viewLag: i === 3 ? 2 : 0,
  }));
  const input = encodeClientMessage(enc, { kind: ClientKind.Input, frames });
  const ping = encodeClientMessage(enc, { kind: ClientKind.Ping, clientTimeMs: 5 });
  const parts = splitFrame(packFrame([input, ping]), { maxMessages: 4 });
  assert.deepEqual(parts.map((p) => decodeClientMessage(dec, p)), [
    { kind: ClientKind.Input, frames },
    { kind: ClientKind.Ping, clientTimeMs: 5 },
  ]);
});
