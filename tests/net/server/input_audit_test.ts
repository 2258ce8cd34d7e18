/**
 * The input audit as the server applies it: real Input messages through the codec
 * into a Connection, each drop rule read back from server.counters.inputVerdicts,
 * and a silent client's coasting observed on its ship in the hub world.
 */
import assert from "node:assert/strict";
import { INPUT_LIMITS } from "../../../content/net_tuning.ts";
import { PLAYER } from "../../../content/mod.ts";
import { ServerKind } from "../../../net/wire/protocol.ts";
import type { InputVerdict, PlayerState } from "../../../sim/mod.ts";
import { TICK_S } from "../../../sim/mod.ts";
import { frame, NetHarness, RawClient } from "../_harness.ts";

const STEP_PX = PLAYER.speedPxPerS * TICK_S;

/** A server on a ManualClock with one player in the hub, fed message by message. */
function setup(h: NetHarness): { p: RawClient; ship: PlayerState } {
  const p = new RawClient(h.server, "10.0.0.1");
  p.hello("Auditor");
  const ship = h.server.hub.world.players.get(p.playerId);
  assert.ok(ship, "the player is in the hub");
  return { p, ship };
}

/** The tick the hub is about to run: frames for it are on time. */
function due(h: NetHarness): number {
  return h.server.hub.world.tick;
}

/** How the verdict counters moved since `before`, leaving out the ones that didn't. */
function verdictsSince(
  h: NetHarness,
  before: Record<InputVerdict, number>,
): Partial<Record<InputVerdict, number>> {
  const out: Partial<Record<InputVerdict, number>> = {};
  for (const [k, v] of Object.entries(h.server.counters.inputVerdicts)) {
    const d = v - before[k as InputVerdict];
    if (d !== 0) out[k as InputVerdict] = d;
  }
  return out;
}

function snapshot(h: NetHarness): Record<InputVerdict, number> {
  return { ...h.server.counters.inputVerdicts };
}

Deno.test("the server drops a frame that replays an applied tick, or a copy of a queued one", () => {
  using h = new NetHarness();
  const { p, ship } = setup(h);
  const x0 = ship.x;
  const t = due(h);
  const before = snapshot(h);

  p.input([frame(t, { moveX: 100 })]);
  h.runTicks(1);
  p.input([frame(t, { moveX: -100 })]); // tick t was applied: a replay
  p.input([frame(t + 1), frame(t + 2)]);
  p.input([frame(t + 2, { moveX: -100 })]); // t + 2 is still queued: a replay too
  h.runTicks(2);

  assert.deepEqual(verdictsSince(h, before), { queued: 3, replay: 2 });
  assert.equal(ship.x, x0 + STEP_PX, "only the first copy of each tick moved the ship");
  assert.equal(p.transport.closedWith, undefined, "a replay is dropped, not punished");
});

Deno.test("the server drops frames for ticks it has already run as stale", () => {
  using h = new NetHarness();
  const { p, ship } = setup(h);
  h.runTicks(5);
  const [x0, y0] = [ship.x, ship.y];
  const now = due(h);
  const before = snapshot(h);

  p.input([frame(now - 3, { moveX: 100 }), frame(now - 2), frame(now - 1)]);
  // A late message whose newest frame is on time: only the old copies are stale.
  p.input([frame(now - 2), frame(now - 1), frame(now, { moveY: -100 })]);
  h.runTicks(1);

  assert.deepEqual(verdictsSince(h, before), { stale: 5, queued: 1 });
  assert.equal(ship.x, x0, "no stale frame moved the ship");
  assert.equal(ship.y, y0 - STEP_PX, "the on-time frame did");
  assert.equal(p.transport.closedWith, undefined);
});

Deno.test("the server drops frames claiming ticks beyond maxLeadTicks as future", () => {
  using h = new NetHarness();
  const { p, ship } = setup(h);
  const x0 = ship.x;
  const now = due(h);
  const before = snapshot(h);

  p.input([frame(now + INPUT_LIMITS.maxLeadTicks)]);
  p.input([frame(now + INPUT_LIMITS.maxLeadTicks + 1, { moveX: 100 })]);
  p.input([frame(now + 1_000_000, { moveX: 100 })]);
  h.runTicks(INPUT_LIMITS.maxLeadTicks + 3);

  assert.deepEqual(verdictsSince(h, before), { queued: 1, future: 2 });
  assert.equal(ship.x, x0, "no frame from the future was ever applied");
  assert.equal(p.transport.closedWith, undefined);
});

Deno.test("the server drops frames past maxQueued as a flood", () => {
  using h = new NetHarness();
  const { p, ship } = setup(h);
  const x0 = ship.x;
  const now = due(h);
  const before = snapshot(h);
  // maxQueued + 3 frames, 3 per message, all within the lead limit: 3 too many.
  const { maxQueued, maxLeadTicks, coastTicks } = INPUT_LIMITS;
  assert.ok(maxQueued % 3 === 0 && maxQueued + 2 <= maxLeadTicks);
  for (let k = 0; k < maxQueued / 3 + 1; k++) {
    const t = now + 3 * k;
    p.input([0, 1, 2].map((i) => frame(t + i, { moveX: 100 })));
  }
  assert.deepEqual(verdictsSince(h, before), { queued: maxQueued, flood: 3 });

  // The queued frames still play out one per tick; the flooded ones never do.
  h.runTicks(maxQueued + coastTicks + 10);
  assert.equal(ship.x, x0 + STEP_PX * (maxQueued + coastTicks));
  assert.equal(p.transport.closedWith, undefined);
});

Deno.test("a silent client coasts on its last input for coastTicks ticks, then stops", () => {
  using h = new NetHarness();
  const { p, ship } = setup(h);
  const x0 = ship.x;
  const walked = 10;
  for (let i = 0; i < walked; i++) {
    p.input([frame(due(h), { moveX: 100 })]);
    h.runTicks(1);
  }
  assert.equal(ship.x, x0 + walked * STEP_PX);

  // Silence. Record how far the ship goes on each tick that follows.
  const steps: number[] = [];
  for (let i = 0; i < INPUT_LIMITS.coastTicks + 20; i++) {
    const x = ship.x;
    h.runTicks(1);
    steps.push(ship.x - x);
  }
  const coasted = steps.filter((d) => d > 0).length;
  assert.equal(coasted, INPUT_LIMITS.coastTicks, `coasted ${coasted} ticks`);
  assert.ok(
    steps.slice(0, coasted).every((d) => Math.abs(d - STEP_PX) < 1e-9),
    "it coasts at the last input's speed",
  );
  assert.ok(steps.slice(coasted).every((d) => d === 0), "then it stands still");

  // Snapshots keep echoing the last input that really came.
  const snaps = p.transport.messages().filter((m) => m.kind === ServerKind.Snapshot);
  const last = snaps[snaps.length - 1];
  assert.ok(last?.kind === ServerKind.Snapshot);
  assert.equal(last.ackTick, due(h) - steps.length - 1);
});
