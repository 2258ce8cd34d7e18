/**
 * Newest wins on the server's side of a WebSocket: a snapshot is skipped while a frame
 * from an earlier turn of the event loop is still queued on the socket (it could sit
 * behind a stale snapshot), never because of what this very tick, or a tick run in the
 * same turn to catch up, sends; events always go out, and a tick's messages leave as
 * one frame. Through the simulated link (LINK_SIM), a
 * snapshot the link took is delivered, never skipped.
 */
import assert from "node:assert/strict";
import {
  LinkTransport,
  type SocketLike,
  type Transport,
  WebSocketTransport,
} from "../../../net/server/transport.ts";
import { LinkSim, linkSpec } from "../../../net/link/mod.ts";
import { ManualClock } from "../../../net/server/scheduler.ts";
import { WebTransportTransport } from "../../../net/server/webtransport.ts";
import { messageBytes } from "../../../net/wire/mod.ts";

/** A socket whose queue the test sets by hand. */
class FakeSocket implements SocketLike {
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: Uint8Array[] = [];
  send(data: Uint8Array): void {
    this.sent.push(data);
    this.bufferedAmount += data.byteLength;
  }
  close(): void {
    this.readyState = 3;
  }
}

/** The loop's turns, moved on by hand: one wake-up of the loop per `wakes++`. */
const loopTurns = () => ({ wakes: 0 });

Deno.test("sendLatest() skips a snapshot while an earlier turn's frame waits on the socket", () => {
  const ws = new FakeSocket();
  const turns = loopTurns();
  const t = new WebSocketTransport(ws, turns);
  const events = new Uint8Array(300);
  const snap = (n: number) => new Uint8Array(60).fill(n);

  // One tick: its events, then its snapshot; they leave together, as one frame.
  turns.wakes++;
  t.sendReliable(events);
  assert.equal(t.sendLatest(snap(1)), true, "sent behind this tick's events");
  t.flush();
  assert.deepEqual(ws.sent.map((d) => d.byteLength), [360], "one frame for the tick");

  // A turn later the socket has not drained: the next snapshot would queue behind snapshot 1.
  turns.wakes++;
  assert.equal(t.sendLatest(snap(2)), false, "skipped while the last one still waits");
  t.sendReliable(events); // events are never skipped
  t.flush();
  assert.deepEqual(ws.sent.map((d) => d.byteLength), [360, 300]);

  ws.bufferedAmount = 0; // drained
  turns.wakes++;
  assert.equal(t.sendLatest(snap(3)), true);
  t.flush();
  assert.equal(ws.sent.at(-1)![0], 3, "the newest snapshot, not the skipped one");
  t.flush();
  assert.equal(ws.sent.length, 3, "a tick that sends nothing sends no frame");
});

Deno.test("ticks run in one turn to catch up skip no snapshot for each other's frames", () => {
  // After a stall the loop runs the ticks it owes back to back, in one turn of the event
  // loop: the socket cannot write between them, so each tick finds the last one's frame
  // still buffered. The client is keeping up; only bytes from an earlier turn say it is not.
  const ws = new FakeSocket();
  const turns = loopTurns();
  const t = new WebSocketTransport(ws, turns);
  const snap = (n: number) => new Uint8Array(60).fill(n);
  turns.wakes++;
  for (let n = 1; n <= 3; n++) {
    assert.equal(t.sendLatest(snap(n)), true, `tick ${n} of the turn sends its snapshot`);
    t.flush();
  }
  assert.deepEqual(ws.sent.map((d) => d[0]), [1, 2, 3]);

  // The next turn: the socket had its chance and still holds them, so it is backed up.
  turns.wakes++;
  assert.equal(t.sendLatest(snap(4)), false, "skipped behind an earlier turn's bytes");
  t.sendReliable(new Uint8Array(10));
  t.flush();
  assert.equal(t.sendLatest(snap(5)), false, "still skipped later in that turn");

  // Drained between turns: a catch-up turn again sends every tick's snapshot.
  ws.bufferedAmount = 0;
  turns.wakes++;
  for (let n = 6; n <= 7; n++) {
    assert.equal(t.sendLatest(snap(n)), true);
    t.flush();
  }
  assert.deepEqual(ws.sent.map((d) => d[0]), [1, 2, 3, 0, 6, 7]);
});

/** A socket that takes a tick's messages as parts (as the front door's sockets do). */
class PartsSocket extends FakeSocket {
  readonly frames: number[][] = [];
  sendParts(parts: readonly Uint8Array[], count: number): void {
    // What the socket reads of the parts: the first `count`, each message's first byte.
    this.frames.push(parts.slice(0, count).map((p) => p[0]));
  }
}

Deno.test("each tick's frame holds that tick's messages only, however many the last one had", () => {
  const ws = new PartsSocket();
  const t = new WebSocketTransport(ws, loopTurns());
  const msg = (n: number) => new Uint8Array(10).fill(n);
  for (const n of [1, 2, 3]) t.sendReliable(msg(n));
  assert.equal(t.bufferedBytes, 30);
  t.flush();
  t.sendReliable(msg(4));
  assert.equal(t.bufferedBytes, 10, "the last tick's bytes are not counted again");
  t.flush();
  t.flush();
  for (const n of [5, 6]) t.sendReliable(msg(n));
  assert.equal(t.sendLatest(msg(7)), true);
  t.flush();
  assert.deepEqual(ws.frames, [[1, 2, 3], [4], [5, 6, 7]]);
});

Deno.test("sendLatest() sends nothing on a socket that is not open", () => {
  const ws = new FakeSocket();
  ws.readyState = 2;
  assert.equal(new WebSocketTransport(ws, loopTurns()).sendLatest(new Uint8Array(8)), false);
  assert.equal(ws.sent.length, 0);
});

Deno.test("through a simulated link, snapshots a stall bunched up all reach the socket", () => {
  // LINK_SIM: the instance counts a snapshot as sent when the link takes it, and bases the
  // next delta on it. Three ticks' frames wait out an outage and arrive in one instant,
  // while the socket is still busy with the first: none may be skipped then.
  const clock = new ManualClock();
  const link = new LinkSim(linkSpec({ delayMs: 40 }), { startMs: 0 });
  const ws = new FakeSocket();
  const t = new LinkTransport(new WebSocketTransport(ws, loopTurns()), {
    path: link.down,
    clock,
  });
  link.cut(0, 300);
  for (let n = 1; n <= 3; n++) {
    assert.equal(t.sendLatest(new Uint8Array(60).fill(n)), true, "taken, as a socket takes it");
    t.flush();
    clock.advance(50);
  }
  assert.equal(ws.sent.length, 0, "nothing through the outage");
  clock.advance(200);
  assert.deepEqual(ws.sent.map((d) => d[0]), [1, 2, 3], "every snapshot, in order");
  assert.equal(t.bufferedBytes, ws.bufferedAmount, "nothing left on the path");
});

Deno.test("through a simulated link, a datagram transport's snapshots stay datagrams", () => {
  // Over datagrams a snapshot may be lost and deltas go against acknowledged ones, so the
  // link hands it on as a datagram, as it came.
  const calls: string[] = [];
  const inner: Transport = {
    kind: "webtransport",
    datagrams: true,
    bufferedBytes: 0,
    sendReliable: () => calls.push("reliable"),
    sendLatest: () => (calls.push("latest"), true),
    flush: () => calls.push("flush"),
    close: () => {},
  };
  const clock = new ManualClock();
  const link = new LinkSim(linkSpec({ delayMs: 40 }), { startMs: 0 });
  const t = new LinkTransport(inner, { path: link.down, clock });
  t.sendReliable(new Uint8Array(4));
  t.sendLatest(new Uint8Array(8));
  t.flush();
  clock.advance(40);
  assert.deepEqual(calls, ["reliable", "latest", "flush"]);
});

/** True when `bytes` is a whole buffer of its own, not a view into a larger one. */
const ownsItsBuffer = (bytes: Uint8Array) =>
  bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;

Deno.test("a frame handed to a socket that may queue it is a buffer of its own, not a view of a message slab", () => {
  const ws = new FakeSocket();
  const t = new WebSocketTransport(ws, loopTurns());
  // One message alone (the frame is that message), then two joined.
  const alone = messageBytes(40).fill(1);
  t.sendReliable(alone);
  t.flush();
  ws.bufferedAmount = 0; // the first frame left
  t.sendReliable(messageBytes(30).fill(2));
  assert.equal(t.sendLatest(messageBytes(20).fill(3)), true);
  t.flush();
  assert.equal(ws.sent.length, 2);
  for (const frame of ws.sent) assert.ok(ownsItsBuffer(frame), `${frame.byteLength} B in a slab`);
  assert.deepEqual([...ws.sent[0]], [...alone]);
  assert.deepEqual([...ws.sent[1]], [...new Array(30).fill(2), ...new Array(20).fill(3)]);
});

Deno.test("WebTransport's stream frames and datagrams are buffers of their own, not views of a slab", async () => {
  const written: { stream: Uint8Array[]; datagrams: Uint8Array[] } = { stream: [], datagrams: [] };
  const writer = (into: Uint8Array[]) =>
    new WritableStream<Uint8Array>({ write: (chunk) => void into.push(chunk) }).getWriter();
  const t = new WebTransportTransport({} as never, {
    stream: writer(written.stream),
    datagrams: writer(written.datagrams),
    maxDatagramBytes: 1200,
    turns: loopTurns(),
  });
  t.setLatestCopies(2);
  t.sendReliable(messageBytes(30).fill(4));
  assert.equal(t.sendLatest(messageBytes(20).fill(5)), true);
  t.flush();
  t.flush(); // the datagram's second copy
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(written.stream.length, 1);
  assert.equal(written.datagrams.length, 2);
  for (const chunk of [...written.stream, ...written.datagrams]) {
    assert.ok(ownsItsBuffer(chunk), `${chunk.byteLength} B in a slab`);
  }
  assert.deepEqual([...written.stream[0]], new Array(30).fill(4));
  assert.deepEqual([...written.datagrams[1]], new Array(20).fill(5));
});

Deno.test("over WebTransport, ticks run in one turn send every snapshot; a backlog from an earlier turn skips", async () => {
  // A writer whose sink takes each write only when the test says (a congestion window
  // that stays shut until then), holding one datagram as the runtime's writers do.
  const held: (() => void)[] = [];
  const taken = { stream: 0, datagrams: 0 };
  const writer = (which: keyof typeof taken) =>
    new WritableStream<Uint8Array>({
      write: () => new Promise<void>((resolve) => held.push(() => (taken[which]++, resolve()))),
    }).getWriter();
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
  const release = async () => {
    // Each write reaches the sink once the one before it is taken: release until none is held.
    await settle();
    while (held.length > 0) {
      held.splice(0).forEach((take) => take());
      await settle();
    }
  };
  const turns = loopTurns();
  const t = new WebTransportTransport({} as never, {
    stream: writer("stream"),
    datagrams: writer("datagrams"),
    maxDatagramBytes: 100,
    turns,
  });
  const tick = (bytes: number) => {
    const sent = t.sendLatest(new Uint8Array(bytes));
    t.flush();
    return sent;
  };
  await settle(); // the writers have started, as a session's have long before its first snapshot

  for (const [what, bytes] of [["datagram", 40], ["stream", 400]] as const) {
    turns.wakes++;
    assert.deepEqual([tick(bytes), tick(bytes), tick(bytes)], [true, true, true], `${what}s`);
    // The loop turned and nothing was taken: the window is shut, the client is behind.
    turns.wakes++;
    assert.equal(tick(bytes), false, `a ${what} skipped behind an earlier turn's`);
    await release();
    turns.wakes++;
    assert.equal(tick(bytes), true, `the ${what}s taken, the next goes`);
    await release();
  }
  assert.deepEqual(taken, { stream: 4, datagrams: 4 });
});
