/**
 * SnapshotLossMeter: a clean link (every snapshot acknowledged) never asks for second
 * copies; a snapshot the acknowledgements skip asks for them for the hold time after.
 */
import assert from "node:assert/strict";
import { SNAPSHOT_REPEAT } from "../../../content/net_tuning.ts";
import { SnapshotLossMeter } from "../../../net/server/snapshot_loss.ts";

Deno.test("every snapshot acknowledged: never lossy", () => {
  const m = new SnapshotLossMeter();
  for (let i = 0; i < 400; i++) {
    m.sent(i * 3, i * 50);
    m.acked(i * 3); // acknowledged at once (within the settle time is enough)
    assert.equal(m.lossy(i * 50), false, `snapshot ${i}`);
  }
});

Deno.test("a skipped acknowledgement makes the link lossy for the hold time, then clean again", () => {
  const m = new SnapshotLossMeter();
  let t = 0;
  const send = (tick: number, ack: boolean) => {
    m.sent(tick, t);
    if (ack) m.acked(tick);
    t += 50;
  };
  for (let i = 0; i < 20; i++) send(i * 3, i !== 10); // snapshot 10 is lost
  assert.equal(m.lossy(t), true, "judged lost once its acknowledgement is overdue");
  const lostAt = t;
  while (t < lostAt + SNAPSHOT_REPEAT.holdMs - 100) send(t, true);
  assert.equal(m.lossy(t), true, "still within the hold time");
  for (let i = 0; i < 10; i++) send(t, true);
  assert.equal(m.lossy(t), false, "clean once the hold time has passed");
});

Deno.test("snapshots of the world before an Enter are not judged: a transfer is not loss", () => {
  const m = new SnapshotLossMeter();
  let t = 0;
  for (let i = 0; i < 10; i++, t += 50) {
    m.sent(i * 3, t);
    m.acked(i * 3);
  }
  // Two snapshots of the old world leave just before the Enter; the client drops them.
  m.sent(30, t);
  m.sent(33, t += 50);
  m.entered();
  for (let i = 0; i < 20; i++) {
    t += 50;
    m.sent(1000 + i * 3, t);
    m.acked(1000 + i * 3);
    assert.equal(m.lossy(t), false, `snapshot ${i} of the new world`);
  }
});
