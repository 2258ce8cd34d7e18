/**
 * The door socket's writing, on a connection that writes as little as it likes: frames
 * leave in the order they were sent, whole, however the writes are cut; what is sent
 * during a write goes in the next one; a failed write ends the connection. (Real
 * sockets, closes and the stall cut-off: tests/e2e/door_socket_test.ts.)
 */
import assert from "node:assert/strict";
import { DoorSocket, type SocketWire } from "../../../net/server/door_socket.ts";
import { closeFrame } from "../../../net/server/stream_audit.ts";
import {
  handshakeAccept,
  serverFrame,
  switchingProtocols,
  WsOp,
} from "../../../net/server/ws_frames.ts";

const HEADERS = new Headers({
  connection: "Upgrade",
  upgrade: "websocket",
  "sec-websocket-version": "13",
  "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
});

/** A connection whose every write takes at most `maxBytes`, answered on a later task. */
function slowWire(maxBytes: number, opts: { failAt?: number } = {}) {
  const written: number[] = [];
  const calls: number[] = [];
  let ended = 0;
  const conn = {
    write(chunk: Uint8Array): Promise<number> {
      calls.push(chunk.byteLength);
      if (opts.failAt !== undefined && calls.length === opts.failAt) {
        return Promise.reject(new Error("broken pipe"));
      }
      const n = Math.min(maxBytes, chunk.byteLength);
      // Copied now: the bytes must not change while the write is in progress.
      written.push(...chunk.subarray(0, n));
      return new Promise((resolve) => setTimeout(() => resolve(n), 0));
    },
  } as unknown as Deno.Conn;
  const wire: SocketWire = {
    conn,
    closeWrite: () => Promise.resolve(),
    end: () => void ended++,
  };
  return { wire, written, calls, ended: () => ended };
}

/** Resolves once `done()` holds (polled on timers: the writes answer on timers too). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 0));
  assert.ok(done(), "the writes did not finish");
}

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

Deno.test("frames leave whole and in order, however small each write is", async () => {
  const { wire, written, calls } = slowWire(7);
  const socket = new DoorSocket({ headers: HEADERS, wire });
  socket.accept();
  const sent = [bytes(30, 1), bytes(3, 2), bytes(200, 3)];
  socket.send(sent[0]);
  // Only the first `count` parts are the message: a transport's queue keeps spare slots.
  socket.sendParts([sent[1], sent[2], bytes(9, 4)], 2);
  const expected = [
    ...switchingProtocols(handshakeAccept(HEADERS)),
    ...serverFrame(WsOp.Binary, [sent[0]]),
    ...serverFrame(WsOp.Binary, [sent[1], sent[2]]),
  ];
  // Sent while the first write is in progress: they go out after it, in a later write.
  await new Promise((r) => setTimeout(r, 0));
  const during = bytes(40, 4);
  socket.send(during);
  expected.push(...serverFrame(WsOp.Binary, [during]));
  await until(() => written.length === expected.length && socket.bufferedAmount === 0);
  assert.deepEqual(written, expected);
  assert.ok(calls.length > expected.length / 7, "each write took at most 7 bytes");
  assert.equal(socket.writePending, false);
});

Deno.test("a socket that writes on the spot gets each frame so, the rest of a cut one by write()", async () => {
  // writeNow takes up to `now` bytes (undefined: refuses), write() at most 7 a call.
  for (const now of [Infinity, 5, undefined]) {
    const { wire, written, calls } = slowWire(7);
    const nowCalls: number[] = [];
    const conn = wire.conn as { writeNow?: (b: Uint8Array, length: number) => number | undefined };
    conn.writeNow = (b, length) => {
      nowCalls.push(length);
      if (now === undefined) return undefined;
      const n = Math.min(now, length);
      written.push(...b.subarray(0, n));
      return n;
    };
    const socket = new DoorSocket({ headers: HEADERS, wire });
    socket.accept();
    const sent = [bytes(30, 1), bytes(3, 2)];
    socket.send(sent[0]);
    const expected = [
      ...switchingProtocols(handshakeAccept(HEADERS)),
      ...serverFrame(WsOp.Binary, [sent[0]]),
    ];
    await until(() => written.length === expected.length && socket.bufferedAmount === 0);
    socket.send(sent[1]);
    expected.push(...serverFrame(WsOp.Binary, [sent[1]]));
    await until(() => written.length === expected.length && socket.bufferedAmount === 0);
    assert.deepEqual(written, expected, `writeNow takes ${now}`);
    assert.equal(nowCalls.length, 2, "one try on the spot per write");
    if (now === Infinity) assert.equal(calls.length, 0, "no write() at all");
    else assert.ok(calls.length > 0, "write() carried the rest");
    assert.equal(socket.writePending, false);
  }
});

Deno.test("a failed write ends the connection, once, and nothing more is written", async () => {
  const { wire, calls, ended } = slowWire(4, { failAt: 2 });
  const socket = new DoorSocket({ headers: HEADERS, wire });
  socket.accept();
  socket.send(bytes(50, 1));
  await until(() => ended() > 0);
  const writes = calls.length;
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(ended(), 1);
  assert.equal(calls.length, writes, "no write after the failure");
  assert.equal(socket.writePending, false);
});

Deno.test("a close waits for the writes before it, then ends the connection when answered", async () => {
  const { wire, written, ended } = slowWire(5);
  const socket = new DoorSocket({ headers: HEADERS, wire });
  socket.accept();
  const heard: string[] = [];
  socket.listen({ message: () => {}, closed: (code, reason) => heard.push(`${code} ${reason}`) });
  socket.send(bytes(20, 9));
  socket.close(4001, "bye");
  // The client answers the close: a masked close frame with the same code.
  const mask = [1, 2, 3, 4];
  const payload = [0x0f, 0xa1];
  socket.receive(Uint8Array.of(0x88, 0x80 | 2, ...mask, ...payload.map((b, i) => b ^ mask[i])));
  await until(() => ended() > 0);
  // Everything queued before the close left first, the close frame last.
  assert.deepEqual(written, [
    ...switchingProtocols(handshakeAccept(HEADERS)),
    ...serverFrame(WsOp.Binary, [bytes(20, 9)]),
    ...closeFrame(4001, "bye"),
  ]);
  socket.gone();
  assert.deepEqual(heard, ["4001 bye"]);
});
