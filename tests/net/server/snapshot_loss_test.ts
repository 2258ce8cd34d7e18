/**
 * SnapshotLossMeter: a clean link (every snapshot acknowledged) never asks for second
 * copies; a snapshot the client says it lacks asks for them for the hold time after;
 * late acknowledgements (a stalled client) and the old world's snapshots after an Enter
 * are not loss.
 */
import assert from "node:assert/strict";
import { SNAPSHOT_REPEAT, TICKS_PER_SNAPSHOT } from "../../../content/net_tuning.ts";
import { SnapshotLossMeter } from "../../../net/server/snapshot_loss.ts";

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
