/**
 * The front door's byte audit on its own, chunk by chunk: request heads (split,
 * pipelined, oversized, malformed, with bodies), the address header only the door
 * may write, and after an upgrade every WebSocket frame judged at its header, before
 * a byte of its payload is taken: oversized, length bombs, fragments adding up,
 * unmasked, bad control frames, a ping flood. And the server-side frame tracker.
 */
import assert from "node:assert/strict";
import {
  type AuditStep,
  clientCloseFrame,
  ClientStreamAudit,
  closeFrame,
  ServerFrameTracker,
  type StreamLimits,
} from "../../../net/server/stream_audit.ts";

const LIMITS: StreamLimits = {
  maxHeaderBytes: 1024,
  maxBodyBytes: 64,
  maxMessageBytes: 256,
  controlPerSec: 10,
  controlBurst: 20,
};

const enc = new TextEncoder();
const dec = new TextDecoder();

function audit(): ClientStreamAudit {
  return new ClientStreamAudit({
    peer: "203.0.113.7",
    peerHeader: "X-Warden-Peer",
    limits: LIMITS,
    nowMs: 0,
  });
}

/** Feeds `chunks` one by one; returns every step and the forwarded bytes as text. */
function run(a: ClientStreamAudit, chunks: Uint8Array[], nowMs = 0) {
  const steps: AuditStep[] = [];
  for (const c of chunks) steps.push(...a.feed(c, nowMs));
  const forwarded = steps.flatMap((s) => s.kind === "forward" ? [s.bytes] : []);
  const total = new Uint8Array(forwarded.reduce((n, b) => n + b.byteLength, 0));
  let at = 0;
  for (const b of forwarded) {
    total.set(b, at);
    at += b.byteLength;
  }
  const end = steps.find((s) => s.kind !== "forward");
  return { steps, forwarded: total, end };
}

function bytesOf(text: string): Uint8Array {
  return enc.encode(text);
}

/** Splits `bytes` into pieces of `size`. */
function pieces(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.byteLength; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

const UPGRADE = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n" +
  "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" +
  "Sec-WebSocket-Version: 13\r\n\r\n";

/** A masked client frame header (RFC 6455 §5.2) for a payload of `length`. */
function frameHeader(
  opts: { opcode: number; length: number | bigint; fin?: boolean; masked?: boolean },
) {
  const fin = opts.fin ?? true;
  const masked = opts.masked ?? true;
  const b0 = (fin ? 0x80 : 0) | opts.opcode;
  const mask = masked ? [1, 2, 3, 4] : [];
  const m = masked ? 0x80 : 0;
  const len = BigInt(opts.length);
  if (len < 126n) return new Uint8Array([b0, m | Number(len), ...mask]);
  if (len < 65536n) {
    return new Uint8Array([b0, m | 126, Number(len >> 8n), Number(len & 255n), ...mask]);
  }
  const eight = Array.from({ length: 8 }, (_, i) => Number((len >> BigInt(56 - 8 * i)) & 255n));
  return new Uint8Array([b0, m | 127, ...eight, ...mask]);
}

function frame(opcode: number, length: number, opts: { fin?: boolean; masked?: boolean } = {}) {
  const h = frameHeader({ opcode, length, ...opts });
  const out = new Uint8Array(h.byteLength + length);
  out.set(h);
  return out;
}

function upgraded(): ClientStreamAudit {
  const a = audit();
  const { end } = run(a, [bytesOf(UPGRADE)]);
  assert.equal(end, undefined);
  assert.equal(a.state, "ws");
  return a;
}

// ---------------------------------------------------------------- heads

Deno.test("a head split into 1-byte pieces is passed on whole, with the door's address header", () => {
  const a = audit();
  const head = "GET / HTTP/1.1\r\nHost: game.example\r\nAccept: */*\r\n\r\n";
  const pieceSteps = pieces(bytesOf(head), 1).map((p) => a.feed(p, 0));
  assert.ok(pieceSteps.slice(0, -1).every((s) => s.length === 0), "nothing before the blank line");
  assert.ok(a.midHead === false);
  const last = pieceSteps.at(-1)!;
  assert.equal(last.length, 1);
  assert.equal(last[0].kind, "forward");
  const text = dec.decode((last[0] as { bytes: Uint8Array }).bytes);
  assert.equal(
    text,
    "GET / HTTP/1.1\r\nHost: game.example\r\nAccept: */*\r\nx-warden-peer: 203.0.113.7\r\n\r\n",
  );
  assert.equal(a.requests, 1);
});

Deno.test("a client's own address header is dropped: only the door says where a client is", () => {
  const a = audit();
  const { forwarded } = run(a, [
    bytesOf(
      "GET / HTTP/1.1\r\nX-Warden-Peer: 10.0.0.1\r\nx-warden-PEER: 1.2.3.4\r\nHost: h\r\n\r\n",
    ),
  ]);
  const text = dec.decode(forwarded);
  assert.doesNotMatch(text, /10\.0\.0\.1|1\.2\.3\.4/);
  assert.match(text, /\r\nx-warden-peer: 203\.0\.113\.7\r\n\r\n$/);
});

Deno.test("midHead is true from a head's first byte until its blank line (the header timer's span)", () => {
  const a = audit();
  assert.equal(a.midHead, false);
  a.feed(bytesOf("GET / HT"), 0);
  assert.equal(a.midHead, true);
  a.feed(bytesOf("TP/1.1\r\nHost: h\r\n\r\n"), 0);
  assert.equal(a.midHead, false);
});

Deno.test("two pipelined requests in one chunk are passed on as two heads", () => {
  const a = audit();
  const { forwarded, end } = run(a, [
    bytesOf("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n"),
  ]);
  assert.equal(end, undefined);
  assert.equal(a.requests, 2);
  assert.equal(dec.decode(forwarded).match(/x-warden-peer/g)?.length, 2);
});

Deno.test("a head over maxHeaderBytes is refused 431, in one chunk or trickled, without growing", () => {
  for (const size of [LIMITS.maxHeaderBytes * 100, 7]) {
    const a = audit();
    const big = bytesOf("GET / HTTP/1.1\r\nX: " + "a".repeat(LIMITS.maxHeaderBytes * 100));
    const { end, forwarded } = run(a, pieces(big, size));
    assert.deepEqual(end, { kind: "refuse", status: 431, reason: "request head too large" });
    assert.equal(forwarded.byteLength, 0);
  }
});

Deno.test("malformed heads, chunked bodies and big bodies are refused with their status", () => {
  const cases: [head: string, status: number][] = [
    ["PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400],
    ["get / HTTP/1.1\r\nHost: h\r\n\r\n", 400],
    ["GET / HTTP/1.1\r\nBad Header: x\r\n\r\n", 400],
    ["GET / HTTP/1.1\r\n folded: x\r\n\r\n", 400],
    ["GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400],
    ["POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501],
    ["POST / HTTP/1.1\r\nContent-Length: 65\r\n\r\n", 413],
    ["POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400],
    ["POST / HTTP/1.1\r\nContent-Length: 1e3\r\n\r\n", 400],
  ];
  for (const [head, status] of cases) {
    const { end, forwarded } = run(audit(), [bytesOf(head)]);
    assert.equal(end?.kind, "refuse", JSON.stringify(head));
    assert.equal((end as { status: number }).status, status, JSON.stringify(head));
    assert.equal(forwarded.byteLength, 0);
  }
});

Deno.test("a small body passes through, and the next head after it is read as a head", () => {
  const a = audit();
  const { forwarded, end } = run(a, [
    bytesOf("POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123"),
    bytesOf("456789GET / HTTP/1.1\r\nHost: h\r\n\r\n"),
  ]);
  assert.equal(end, undefined);
  assert.equal(a.requests, 2);
  assert.match(dec.decode(forwarded), /\r\n\r\n0123456789GET \/ HTTP\/1\.1\r\n/);
});

// ---------------------------------------------------------------- frames

Deno.test("after an upgrade, frames up to the cap pass through as they came", () => {
  const a = upgraded();
  const chunks = [frame(2, 256), frame(2, 5), frame(9, 10), frame(10, 0), frame(2, 126)];
  for (const c of chunks) {
    const steps = a.feed(c, 0);
    assert.deepEqual(steps, [{ kind: "forward", bytes: c }]);
  }
});

Deno.test("a message over the cap is closed 4004 at its header, before its payload is taken", () => {
  for (const length of [257, 65_535, 64 * 1024 * 1024]) {
    const a = upgraded();
    const good = frame(2, 10);
    const header = frameHeader({ opcode: 2, length });
    const { end, forwarded } = run(a, [good, header]);
    assert.deepEqual(end, {
      kind: "close",
      code: 4004,
      reason: `message of ${length} bytes exceeds 256`,
    });
    assert.deepEqual(forwarded, good, "only the frame before it went on");
  }
});

Deno.test("a 64-bit length bomb is closed 4004 from its 14-byte header alone", () => {
  const a = upgraded();
  const { end } = run(a, [frameHeader({ opcode: 2, length: 2n ** 63n - 1n })]);
  assert.equal(end?.kind, "close");
  assert.equal((end as { code: number }).code, 4004);
  assert.match((end as { reason: string }).reason, /exceeds 256/);
});

Deno.test("fragments of one message add up: the 17th piece of 16 bytes takes it past 256", () => {
  const a = upgraded();
  const parts = [frame(2, 16, { fin: false })];
  for (let i = 0; i < 30; i++) parts.push(frame(0, 16, { fin: false }));
  parts.push(frame(0, 16));
  const { end, forwarded } = run(a, parts);
  assert.deepEqual(end, { kind: "close", code: 4004, reason: "message of 272 bytes exceeds 256" });
  // Each piece is a 6-byte masked header and 16 bytes of payload.
  assert.equal(forwarded.byteLength, 16 * (6 + 16), "16 pieces went on, no more");
});

Deno.test("a frame header split across chunks is judged once whole", () => {
  const a = upgraded();
  const header = frameHeader({ opcode: 2, length: 1000 });
  const first = a.feed(header.subarray(0, 1), 0);
  assert.deepEqual(first, [{ kind: "forward", bytes: header.subarray(0, 1) }]);
  const rest = a.feed(header.subarray(1), 0);
  assert.equal(rest.at(-1)?.kind, "close");
});

Deno.test("protocol breaches close 1002: unmasked, reserved bits, unknown opcode, bad control frames", () => {
  const cases: [what: string, bytes: Uint8Array][] = [
    ["unmasked", frame(2, 4, { masked: false })],
    ["reserved bit", Uint8Array.from([0xc2, 0x80, 1, 2, 3, 4])],
    ["opcode 3", frame(3, 1)],
    ["opcode 11", frame(11, 1)],
    ["a 126-byte ping", frame(9, 126)],
    ["a fragmented ping", frame(9, 1, { fin: false })],
    ["continuation first", frame(0, 4)],
  ];
  for (const [what, bytes] of cases) {
    const { end } = run(upgraded(), [bytes]);
    assert.equal(end?.kind, "close", what);
    assert.equal((end as { code: number }).code, 1002, what);
  }
  const { end } = run(upgraded(), [frame(2, 4, { fin: false }), frame(2, 4)]);
  assert.deepEqual(end, { kind: "close", code: 1002, reason: "new message inside a message" });
});

Deno.test("control frames get a budget: a ping flood closes 4003 after the burst", () => {
  const a = upgraded();
  for (let i = 0; i < LIMITS.controlBurst; i++) {
    assert.equal(a.feed(frame(9, 0), 0)[0].kind, "forward");
  }
  assert.deepEqual(a.feed(frame(9, 0), 0).at(-1), {
    kind: "close",
    code: 4003,
    reason: "sending too fast",
  });
  // At the sustained rate, pings go on forever.
  const b = upgraded();
  for (let i = 0; i < 200; i++) {
    assert.equal(b.feed(frame(9, 0), i * (1000 / LIMITS.controlPerSec))[0].kind, "forward");
  }
});

// ---------------------------------------------------------------- server side

Deno.test("the server-side tracker knows where a frame ends, across chunks", () => {
  const t = new ServerFrameTracker();
  assert.equal(t.atBoundary, true);
  // An unmasked 300-byte binary frame: header 4 bytes, then payload.
  const big = new Uint8Array([0x82, 126, 1, 44, ...new Uint8Array(300)]);
  t.feed(big.subarray(0, 100));
  assert.equal(t.atBoundary, false);
  const next = new Uint8Array([...big.subarray(100), 0x82, 2, 9, 9]);
  assert.equal(t.untilBoundary(next), 204, "the rest of the frame, and no more");
  assert.equal(t.atBoundary, true);
  t.feed(new Uint8Array([0x82, 2, 9, 9]));
  assert.equal(t.atBoundary, true);
  assert.equal(t.untilBoundary(new Uint8Array([1, 2, 3])), 0);
});

Deno.test("closeFrame() is an unmasked close with the code and the reason", () => {
  assert.deepEqual(
    closeFrame(4004, "big"),
    new Uint8Array([0x88, 5, 0x0f, 0xa4, 0x62, 0x69, 0x67]),
  );
  assert.equal(closeFrame(1000, "é".repeat(200)).byteLength, 4 + 123);
});

Deno.test("clientCloseFrame() is a masked close with the code and reason, as the door tells the server", () => {
  assert.deepEqual(
    clientCloseFrame(4004, "big"),
    new Uint8Array([0x88, 0x80 | 5, 0, 0, 0, 0, 0x0f, 0xa4, 0x62, 0x69, 0x67]),
  );
  // A frame a client may send: the door's own audit passes it whole.
  const bytes = clientCloseFrame(1002, "client frames must be masked");
  assert.deepEqual(upgraded().feed(bytes, 0), [{ kind: "forward", bytes }]);
});

Deno.test("once the server has closed, data frames are dropped and control frames still pass", () => {
  const a = upgraded();
  const before = frame(2, 10);
  assert.deepEqual(a.feed(before, 0), [{ kind: "forward", bytes: before }]);
  a.serverClosed();
  const data = frame(2, 20);
  const close = frame(8, 2);
  const more = frame(2, 5);
  const ping = frame(9, 1);
  // Interleaved in one chunk, a data frame split across the next.
  const chunk = new Uint8Array([...data, ...close, ...more.subarray(0, 3)]);
  const { forwarded } = run(a, [chunk, new Uint8Array([...more.subarray(3), ...ping])]);
  assert.deepEqual(forwarded, new Uint8Array([...close, ...ping]));
});

Deno.test("after the server's close, empty and full data frames are dropped at every split", () => {
  const empty = frame(2, 0);
  const data = frame(1, 7);
  const close = frame(8, 2);
  const ping = frame(9, 0);
  const stream = new Uint8Array([...empty, ...ping, ...data, ...empty, ...close, ...empty]);
  for (const size of [stream.length, 1, 2, 3, 5]) {
    const a = upgraded();
    a.serverClosed();
    const { forwarded } = run(a, pieces(stream, size));
    assert.deepEqual(forwarded, new Uint8Array([...ping, ...close]), `pieces of ${size}`);
  }
});

Deno.test("the server-side tracker notices the server's close frame", () => {
  const t = new ServerFrameTracker();
  t.feed(new Uint8Array([0x82, 1, 7]));
  assert.equal(t.sawClose, false);
  t.feed(closeFrame(4009, "server restarting"));
  assert.equal(t.sawClose, true);
});
