/**
 * What each side puts on the wire per tick, through the real runtime, server and
 * codec on a ManualClock: one frame per snapshot interval from the server (events,
 * snapshot and pong together), input in batches without redundancy over the ordered
 * channel (the ping riding along), and ×3 redundant datagrams otherwise.
 */
import assert from "node:assert/strict";
import { INPUT_SENDING, SNAPSHOT_HZ } from "../../../content/net_tuning.ts";
import { MessageDecoder } from "../../../net/wire/codec.ts";
import { decodeClientMessage } from "../../../net/wire/codec.ts";
import { splitFrame } from "../../../net/wire/frames.ts";
import { ClientKind, type ClientMessage } from "../../../net/wire/protocol.ts";
import { NetHarness } from "../_harness.ts";

/** Every frame a client sends, decoded, captured on its way into the server. */
function tap(h: NetHarness, name: string, opts: { datagrams: boolean }) {
  const c = h.connect(name, {
    link: { spec: "40", ...(opts.datagrams ? { inputLoss: 0 } : {}) },
    control: (tick) => ({
      moveX: tick % 50 < 25 ? 100 : -100,
      moveY: 0,
      aim: tick * 7,
      buttons: 1,
    }),
  });
  const frames: ClientMessage[][] = [];
  const dec = new MessageDecoder();
  const receive = c.conn.receive.bind(c.conn);
  const receiveDatagram = c.conn.receiveDatagram.bind(c.conn);
  const record = (data: Uint8Array) =>
    frames.push(splitFrame(data, { maxMessages: 8 }).map((m) => decodeClientMessage(dec, m)));
  c.conn.receive = (data) => {
    if (data instanceof Uint8Array) record(data);
    receive(data);
  };
  c.conn.receiveDatagram = (data) => {
    record(data);
    receiveDatagram(data);
  };
  return { c, frames };
}

Deno.test("over the ordered channel input goes in batches of 4 ticks, no tick twice", () => {
  using h = new NetHarness();
  const { c, frames } = tap(h, "Stream", { datagrams: false });
  h.runUntil(() => c.runtime.latest() !== undefined);
  // The ping answering the Welcome goes at once, alone: there is no input yet.
  h.pump(200);
  const first = frames.length;
  h.pump(3000);
  const played = frames.slice(first);
  const inputs = played.flat().filter((m) => m.kind === ClientKind.Input);
  const ticks = inputs.flatMap((m) =>
    m.kind === ClientKind.Input ? m.frames.map((f) => f.tick) : []
  );
  assert.equal(new Set(ticks).size, ticks.length, "no redundancy");
  for (let i = 1; i < ticks.length; i++) assert.equal(ticks[i], ticks[i - 1] + 1, "no gap");
  const batch = INPUT_SENDING.reliable.batchTicks;
  assert.ok(inputs.every((m) => m.kind === ClientKind.Input && m.frames.length === batch));
  const perSec = played.length / 3;
  assert.ok(perSec >= 60 / batch - 1 && perSec <= 60 / batch + 1, `${perSec} frames/s`);
  // Pings ride in an input frame, never in one of their own.
  const pings = played.filter((f) => f.some((m) => m.kind === ClientKind.Ping));
  assert.ok(pings.length >= 2, `${pings.length} pings in 3 s`);
  assert.deepEqual(
    pings.map((f) => f.map((m) => m.kind)),
    pings.map(() => [ClientKind.Ping, ClientKind.Input]),
    "folded into input frames",
  );
});

Deno.test("over datagrams every tick travels in three datagrams, each acknowledging a snapshot", () => {
  using h = new NetHarness();
  const { c, frames } = tap(h, "Datagrams", { datagrams: true });
  h.runUntil(() => c.runtime.latest() !== undefined);
  const first = frames.length;
  h.pump(3000);
  const inputs = frames.slice(first).flat().filter((m) => m.kind === ClientKind.Input);
  const copies = new Map<number, number>();
  for (const m of inputs) {
    if (m.kind !== ClientKind.Input) continue;
    assert.ok(m.snapshotAck !== undefined && m.snapshotAck > 0, "a snapshot ack");
    for (const f of m.frames) copies.set(f.tick, (copies.get(f.tick) ?? 0) + 1);
  }
  const { batchTicks, redundancy } = INPUT_SENDING.datagram;
  const perSec = inputs.length / 3;
  assert.ok(Math.abs(perSec - 60 / batchTicks) <= 1, `${perSec} datagrams/s`);
  const ticks = [...copies.keys()].sort((a, b) => a - b);
  // The first two batches and the last two have fewer copies; every other tick has all.
  const middle = ticks.slice(2 * batchTicks, -2 * batchTicks);
  assert.ok(middle.length > 100);
  assert.ok(middle.every((t) => copies.get(t) === redundancy), "each tick sent 3 times");
  assert.ok(c.conn.snapshotAck > 0, "the server keeps the newest ack");
});

Deno.test("the server sends one frame per snapshot interval: events, snapshot and pong together", () => {
  using h = new NetHarness();
  const a = h.connect("A", { control: (t) => ({ moveX: 0, moveY: 0, aim: t, buttons: 0 }) });
  const b = h.connect("B");
  h.runUntil(() => a.runtime.latest() !== undefined && b.runtime.latest() !== undefined);
  const before = a.transport.frames;
  const sentBefore = a.transport.sent.length;
  h.pump(3000);
  const frames = a.transport.frames - before;
  const messages = a.transport.sent.length - sentBefore;
  assert.ok(frames <= 3 * SNAPSHOT_HZ + 1, `${frames} frames in 3 s`);
  assert.ok(messages > frames, `${messages} messages shared ${frames} frames`);
});
