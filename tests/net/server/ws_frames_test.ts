/**
 * The door's own RFC 6455 codec (net/server/ws_frames.ts): the handshake answer
 * (the RFC's own example), client frames unmasked and joined however the bytes are
 * split, control frames between fragments, and server frames at each length form.
 */
import assert from "node:assert/strict";
import {
  ClientMessageReader,
  handshakeAccept,
  OutBuffer,
  serverFrame,
  WsOp,
} from "../../../net/server/ws_frames.ts";
import { packFrame } from "../../../net/wire/frames.ts";

/** A masked client frame, as a browser sends it. */
function clientFrame(opcode: number, payload: Uint8Array, fin = true): Uint8Array {
  const mask = Uint8Array.of(0x37, 0xfa, 0x21, 0x3d);
  const n = payload.byteLength;
  const lenBytes = n < 126 ? [n] : n < 0x10000 ? [126, n >> 8, n & 0xff] : [
    127,
    0,
    0,
    0,
    0,
    (n >>> 24) & 0xff,
    (n >>> 16) & 0xff,
    (n >>> 8) & 0xff,
    n & 0xff,
  ];
  const head = [(fin ? 0x80 : 0) | opcode, 0x80 | lenBytes[0], ...lenBytes.slice(1), ...mask];
  const out = new Uint8Array(head.length + n);
  out.set(head);
  for (let i = 0; i < n; i++) out[head.length + i] = payload[i] ^ mask[i & 3];
  return out;
}

const concat = (...parts: Uint8Array[]) => packFrame(parts);

const bytes = (n: number, seed: number) =>
  Uint8Array.from({ length: n }, (_, i) => (i * seed) & 0xff);

Deno.test("the handshake answer is the RFC 6455 example's; a bad upgrade throws", () => {
  const ok = new Headers({
    connection: "keep-alive, Upgrade",
    upgrade: "websocket",
    "sec-websocket-version": "13",
    "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
  });
  assert.equal(handshakeAccept(ok), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  for (
    const [name, value] of [
      ["sec-websocket-version", "8"],
      ["sec-websocket-key", "short"],
      ["upgrade", "h2c"],
      ["connection", "keep-alive"],
    ]
  ) {
    const bad = new Headers(ok);
    bad.set(name, value);
    assert.throws(() => handshakeAccept(bad), TypeError, name);
  }
});

Deno.test("client frames become the same messages however the bytes are split", () => {
  const big = bytes(70_000, 7);
  const stream = concat(
    clientFrame(WsOp.Binary, bytes(5, 3)),
    clientFrame(WsOp.Text, new TextEncoder().encode("héllo")),
    clientFrame(WsOp.Binary, bytes(300, 5), false),
    clientFrame(WsOp.Ping, Uint8Array.of(1, 2)),
    clientFrame(WsOp.Continuation, bytes(200, 9), false),
    clientFrame(WsOp.Continuation, bytes(0, 1)),
    clientFrame(WsOp.Binary, big),
    clientFrame(WsOp.Pong, new Uint8Array(0)),
    clientFrame(WsOp.Close, concat(Uint8Array.of(0x0f, 0xa1), new TextEncoder().encode("bye"))),
  );
  const expected = [
    { kind: "binary", data: bytes(5, 3) },
    { kind: "text", data: new TextEncoder().encode("héllo") },
    { kind: "ping", data: Uint8Array.of(1, 2) },
    { kind: "binary", data: concat(bytes(300, 5), bytes(200, 9)) },
    { kind: "binary", data: big },
    { kind: "pong" },
    { kind: "close", code: 4001, reason: "bye" },
  ];
  for (const chunk of [stream.byteLength, 1, 2, 3, 7, 125, 4096]) {
    const reader = new ClientMessageReader();
    const got = [];
    for (let at = 0; at < stream.byteLength; at += chunk) {
      got.push(...reader.feed(stream.subarray(at, at + chunk)));
    }
    assert.deepEqual(got, expected, `split every ${chunk} bytes`);
  }
});

Deno.test("a close without a code reads as 1005", () => {
  const reader = new ClientMessageReader();
  assert.deepEqual(reader.feed(clientFrame(WsOp.Close, new Uint8Array(0))), [
    { kind: "close", code: 1005, reason: "" },
  ]);
});

Deno.test("server frames use the shortest length form and carry the payload unmasked", () => {
  for (const [n, head] of [[0, 2], [125, 2], [126, 4], [65535, 4], [65536, 10]]) {
    const payload = bytes(n, 11);
    const frame = serverFrame(WsOp.Binary, [payload]);
    assert.equal(frame.byteLength, head + n, `${n} bytes`);
    assert.equal(frame[0], 0x82);
    assert.equal(frame[1] & 0x80, 0, "unmasked");
    const len7 = frame[1] & 0x7f;
    const length = len7 < 126
      ? len7
      : len7 === 126
      ? (frame[2] << 8) | frame[3]
      : frame[6] * 2 ** 24 + (frame[7] << 16) + (frame[8] << 8) + frame[9];
    assert.equal(length, n);
    assert.deepEqual(frame.subarray(head), payload);
  }
});

Deno.test("an output buffer holds the same frames back to back, however far it must grow", () => {
  const out = new OutBuffer(16);
  const sizes = [3, 0, 200, 70_000, 9];
  const expected: Uint8Array[] = [];
  for (const [k, n] of sizes.entries()) {
    // A frame of two parts reads as one message of them joined.
    const a = bytes(n >> 1, k + 3);
    const b = bytes(n - (n >> 1), k + 5);
    // A part past `count` is not read.
    out.frame(WsOp.Binary, [a, b, bytes(4, 1)], 2);
    expected.push(serverFrame(WsOp.Binary, [a, b]));
  }
  out.raw(Uint8Array.of(0x88, 0));
  expected.push(Uint8Array.of(0x88, 0));
  assert.deepEqual(out.view(), concat(...expected));
  // Emptied for the next write: what follows starts at its first byte.
  out.clear();
  assert.equal(out.length, 0);
  out.frame(WsOp.Pong, [bytes(5, 7)], 1);
  assert.deepEqual(out.view(), serverFrame(WsOp.Pong, [bytes(5, 7)]));
});
