/**
 * SnapshotLossMeter: a clean link (every snapshot acknowledged) never asks for second
 * copies; a snapshot the client says it lacks asks for them for the hold time after;
 * late acknowledgements (a stalled client), the old world's snapshots after an Enter and
 * snapshots the transport skipped are not loss.
 */
import assert from "node:assert/strict";
import { SNAPSHOT_REPEAT, TICKS_PER_SNAPSHOT } from "../../../content/net_tuning.ts";
import { SnapshotLossMeter } from "../../../net/server/snapshot_loss.ts";
import { NetHarness } from "../_harness.ts";

const T = TICKS_PER_SNAPSHOT;

/** The held-bits mask a client sends: which of the 8 snapshots before `newest` it holds. */
function mask(newest: number, holds: (tick: number) => boolean): number {
  let m = 0;
  for (let k = 0; k < 8; k++) if (holds(newest - T * (k + 1))) m |= 1 << k;
  return m;
}

Deno.test("every snapshot acknowledged: never lossy", () => {
  const m = new SnapshotLossMeter();
  for (let i = 0; i < 400; i++) {
    m.sent(i * T, i * 50);
    m.sent(i * T, i * 50 + 17); // a second copy is the same snapshot
    m.acked(i * T, mask(i * T, (t) => t >= 0), i * 50 + 20);
    assert.equal(m.lossy(i * 50 + 20), false, `snapshot ${i}`);
  }
});

Deno.test("a snapshot the client lacks makes the link lossy for the hold time, then clean", () => {
  const m = new SnapshotLossMeter();
  let t = 0;
  const lost = 10 * T;
  const step = (tick: number) => {
    m.sent(tick, t);
    if (tick !== lost) m.acked(tick, mask(tick, (x) => x >= 0 && x !== lost), t + 20);
    t += 50;
  };
  for (let i = 0; i < 13; i++) step(i * T);
  assert.equal(m.lossy(t), true, "judged lost once two later snapshots came without it");
  const lostAt = t;
  let tick = 12 * T;
  while (t < lostAt + SNAPSHOT_REPEAT.holdMs - 200) step(tick += T);
  assert.equal(m.lossy(t), true, "still within the hold time");
  for (let i = 0; i < 10; i++) step(tick += T);
  assert.equal(m.lossy(t), false, "clean once the hold time has passed");
});

Deno.test("a snapshot overtaken by one newer is not judged until a second newer arrives", () => {
  const m = new SnapshotLossMeter();
  m.sent(0, 0);
  m.sent(T, 50);
  m.acked(T, 0, 60); // T arrived first; 0 is still on its way
  assert.equal(m.lossy(60), false);
  m.sent(2 * T, 100);
  m.acked(2 * T, mask(2 * T, () => true), 110); // and then it came
  assert.equal(m.lossy(110), false);
});

Deno.test("acknowledgements that come late from a stalled client are not loss", () => {
  const m = new SnapshotLossMeter();
  // 30 snapshots (1.5 s) go out while the client's loop is frozen; then it catches up,
  // holding all of them, and acknowledges the newest with the 8 before it.
  for (let i = 0; i < 30; i++) m.sent(i * T, i * 50);
  m.acked(29 * T, mask(29 * T, () => true), 1600);
  assert.equal(m.lossy(1600), false, "the older ones are beyond the mask: unjudged");
});

Deno.test("snapshots of the world before an Enter are not judged: a transfer is not loss", () => {
  const m = new SnapshotLossMeter();
  let t = 0;
  for (let i = 0; i < 10; i++, t += 50) {
    m.sent(i * T, t);
    m.acked(i * T, mask(i * T, (x) => x >= 0), t);
  }
  // Two snapshots of the old world leave just before the Enter; the client drops them.
  m.sent(30, t);
  m.sent(33, t += 50);
  m.entered();
  for (let i = 0; i < 20; i++) {
    t += 50;
    const tick = 1000 + i * T;
    m.sent(tick, t);
    m.acked(tick, mask(tick, (x) => x >= 1000), t);
    assert.equal(m.lossy(t), false, `snapshot ${i} of the new world`);
  }
});

Deno.test("a snapshot the transport skipped (its datagram queue backed up) is not the link's loss", () => {
  using h = new NetHarness();
  const c = h.connect("Backed", { link: { spec: "10", inputLoss: 0, snapshotDatagrams: true } });
  const copies: number[] = [];
  Object.assign(c.transport, { setLatestCopies: (n: 1 | 2) => copies.push(n) });
  h.runUntil(() => c.runtime.latest() !== undefined);
  h.pump(1000);
  c.transport.acceptLatest = false; // QUIC's datagram queue is full: snapshots are skipped
  h.pump(300);
  c.transport.acceptLatest = true;
  copies.length = 0;
  h.pump(2000);
  assert.ok(copies.length >= 30, `${copies.length} snapshots asked how many copies`);
  assert.ok(copies.every((n) => n === 1), "one copy each: nothing was lost on the link");
});

Deno.test("after an Enter, the new world's first snapshots that overtook it are not loss", () => {
  const m = new SnapshotLossMeter();
  m.entered();
  // Ticks 300 and 303 went out with the Enter and arrived before it: dropped as another
  // world's. An input datagram still acknowledging the old world (tick 297) comes first.
  m.sent(300, 0);
  m.sent(303, 50);
  m.acked(297, 0xff, 55);
  m.sent(306, 100);
  m.acked(306, 0, 110); // the first of the new world the client holds
  for (let i = 3; i < 12; i++) {
    m.sent(300 + i * T, i * 50);
    m.acked(300 + i * T, mask(300 + i * T, (x) => x >= 306), i * 50 + 10);
  }
  assert.equal(m.lossy(600), false);
  // From then on a lack is loss again.
  m.sent(340, 650);
  m.sent(343, 700);
  m.sent(346, 750);
  m.acked(346, mask(346, (x) => x !== 340 && x >= 306), 760);
  assert.equal(m.lossy(760), true);
});
