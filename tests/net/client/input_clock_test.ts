/**
 * The client's clock (InputClock): it leads the server by half the round trip, twice
 * its spread and a margin; frames the server reports late raise the lead by what was
 * missing, a raise that fades slowly; and the clock never moves faster than its slew.
 */
import assert from "node:assert/strict";
import { InputClock } from "../../../net/client/input_clock.ts";
import { INPUT_LEAD_MARGIN_TICKS, LATE_INPUT, LEAD_SLEW } from "../../../content/net_tuning.ts";
import { TICK_MS } from "../../../sim/mod.ts";

/** A clock that has measured a steady 300 ms round trip, in an instance at tick 1000. */
function steady(): InputClock {
  const clock = new InputClock();
  for (let i = 0; i < 10; i++) clock.addRtt(300);
  clock.enter(1000, 0);
  return clock;
}

Deno.test("the lead is half the round trip plus the margin on a steady link", () => {
  const clock = steady();
  const base = 150 / TICK_MS + INPUT_LEAD_MARGIN_TICKS;
  assert.equal(clock.jitterMs, 0);
  assert.ok(Math.abs(clock.wantedLeadTicks(0) - base) < 1e-9);
  assert.ok(Math.abs(clock.targetTick(0) - (1000 + 150 / TICK_MS + base)) < 1e-9);
});

Deno.test("a late report raises the lead by what was missing, and the raise fades slowly", () => {
  const clock = steady();
  const base = clock.wantedLeadTicks(0);
  clock.targetTick(0);
  clock.snapshot(1003, { nowMs: 50, ackTick: 1003, lateTicks: 5, counts: true });
  const raised = clock.wantedLeadTicks(50);
  assert.ok(Math.abs(raised - (base + 5 + LATE_INPUT.marginTicks)) < 1e-6, `${raised}`);
  const later = clock.wantedLeadTicks(50 + 25_000);
  assert.ok(Math.abs(raised - later - 25 * LATE_INPUT.fadeTicksPerSec) < 1e-6, "fades");
  // Reports arriving before the client sent anything do not count.
  const fresh = steady();
  fresh.snapshot(1003, { nowMs: 50, ackTick: -1, lateTicks: 9, counts: false });
  assert.equal(fresh.wantedLeadTicks(50), base);
});

Deno.test("a run of frames still missing counts by its length once the ack catches up", () => {
  const clock = steady();
  const base = clock.wantedLeadTicks(0);
  clock.snapshot(1003, { nowMs: 50, ackTick: 1001, lateTicks: 0, counts: true });
  assert.ok(clock.wantedLeadTicks(50) >= base + 2, "two missing now");
  clock.snapshot(1006, { nowMs: 100, ackTick: 1001, lateTicks: 0, counts: true });
  clock.snapshot(1009, { nowMs: 150, ackTick: 1009, lateTicks: 0, counts: true });
  // Frame 1002 was missing from tick 1002 until after 1006: up to 7 ticks late.
  assert.ok(Math.abs(clock.wantedLeadTicks(150) - (base + 7 + LATE_INPUT.marginTicks)) < 0.01);
});

Deno.test("the client's clock moves at most its slew per second toward a higher lead", () => {
  const clock = steady();
  const t0 = clock.targetTick(0);
  clock.snapshot(1003, { nowMs: 0, ackTick: 1003, lateTicks: 12, counts: true });
  // One second later the server has run 60 ticks; the lead has grown by at most 6.
  const t1 = clock.targetTick(1000);
  const grew = t1 - t0 - 1000 / TICK_MS;
  assert.ok(grew > 0 && grew <= LEAD_SLEW.raisePerSec + 1e-9, `grew by ${grew} ticks in 1 s`);
  const t2 = clock.targetTick(3000);
  assert.ok(t2 - t1 - 2000 / TICK_MS <= 2 * LEAD_SLEW.raisePerSec + 1e-9);
});
