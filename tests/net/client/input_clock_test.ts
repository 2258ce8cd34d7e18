/**
 * The client's clock (InputClock): it leads the server by half the round trip, twice
 * its spread and a margin; frames the server reports late raise the lead by what was
 * missing, a raise that fades slowly; and the clock never moves faster than its slew.
 */
import assert from "node:assert/strict";
import { InputClock } from "../../../net/client/input_clock.ts";
import {
  INPUT_LEAD_MARGIN_TICKS,
  LATE_INPUT,
  LEAD_SLEW,
  LEAD_TRIM,
} from "../../../content/net_tuning.ts";
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

/**
 * Feeds a clock one snapshot every 50 ms over [fromMs, toMs), nothing late, each saying
 * the frames were early by what `slack` answers for the lead applied at the moment.
 */
function feedSlack(
  clock: InputClock,
  opts: { fromMs: number; toMs: number; slack: (lead: number) => number | undefined },
): void {
  for (let now = opts.fromMs; now < opts.toMs; now += 50) {
    clock.targetTick(now);
    const tick = 1000 + Math.floor(now / TICK_MS);
    clock.snapshot(tick, {
      nowMs: now,
      ackTick: tick,
      lateTicks: 0,
      slackTicks: opts.slack(clock.leadTicks),
      counts: true,
      settled: true,
    });
  }
}

Deno.test("a window of slack with nothing late holds the lead to what the frames needed", () => {
  const clock = steady();
  const base = clock.wantedLeadTicks(0);
  // The way up takes 5 ticks however much the round trip says: each frame spares the rest.
  const needed = 5;
  const slack = (lead: number) => Math.max(0, Math.floor(lead - needed));
  feedSlack(clock, { fromMs: 0, toMs: LEAD_TRIM.windowMs - 100, slack });
  assert.equal(clock.capTicks, Infinity, "no cap before a whole window");
  assert.ok(Math.abs(clock.wantedLeadTicks(LEAD_TRIM.windowMs - 100) - base) < 1e-6);
  feedSlack(clock, { fromMs: LEAD_TRIM.windowMs - 100, toMs: LEAD_TRIM.windowMs + 100, slack });
  const capped = clock.wantedLeadTicks(LEAD_TRIM.windowMs + 100);
  // The least slack was floor(lead − 5): the cap keeps LEAD_TRIM.keepTicks over that need.
  assert.ok(capped >= needed + LEAD_TRIM.keepTicks - 1e-6, `capped at ${capped}`);
  assert.ok(capped <= needed + LEAD_TRIM.keepTicks + 1 + 1e-6, `capped at ${capped}`);
  assert.ok(capped < base - 2, `${base} → ${capped}`);
  // The applied lead comes down gently, at most the slew a second.
  const t0 = clock.targetTick(LEAD_TRIM.windowMs + 100);
  const t1 = clock.targetTick(LEAD_TRIM.windowMs + 1100);
  assert.ok(t1 - t0 >= 1000 / TICK_MS - LEAD_SLEW.lowerPerSec - 1e-6, "no faster than the slew");
  // Once there, a second window keeps it there: frames still spare what is kept.
  feedSlack(clock, {
    fromMs: LEAD_TRIM.windowMs + 100,
    toMs: 2 * LEAD_TRIM.windowMs + 200,
    slack,
  });
  const held = clock.wantedLeadTicks(2 * LEAD_TRIM.windowMs + 200);
  assert.ok(Math.abs(clock.leadTicks - held) < 0.5, `applied ${clock.leadTicks}, wanted ${held}`);
  assert.ok(held >= needed + LEAD_TRIM.keepTicks - 1e-6, `held at ${held}`);
});

Deno.test("a report that needs more than the cap raises it at once", () => {
  const clock = steady();
  const slack = (lead: number) => Math.max(0, Math.floor(lead - 5));
  feedSlack(clock, { fromMs: 0, toMs: LEAD_TRIM.windowMs + 100, slack });
  const capped = clock.capTicks;
  assert.ok(Number.isFinite(capped));
  // The way up slows by 3 ticks: a frame arrives with 3 ticks less to spare than kept.
  const now = LEAD_TRIM.windowMs + 150;
  clock.targetTick(now);
  const lead = clock.leadTicks;
  clock.snapshot(1000 + Math.floor(now / TICK_MS), {
    nowMs: now,
    ackTick: 1000 + Math.floor(now / TICK_MS),
    lateTicks: 0,
    slackTicks: 0,
    counts: true,
    settled: true,
  });
  assert.ok(
    Math.abs(clock.capTicks - (lead + LEAD_TRIM.keepTicks)) < 1e-6,
    `cap ${capped} → ${clock.capTicks} for a frame that needed ${lead}`,
  );
});

Deno.test("a late frame under a cap lifts it, and the next cap keeps a tick more", () => {
  const clock = steady();
  const base = clock.wantedLeadTicks(0);
  const slack = (lead: number) => Math.max(0, Math.floor(lead - 5));
  feedSlack(clock, { fromMs: 0, toMs: LEAD_TRIM.windowMs + 100, slack });
  const firstCap = clock.capTicks;
  // Let the applied lead reach the cap, then a frame is a tick late.
  feedSlack(clock, { fromMs: LEAD_TRIM.windowMs + 100, toMs: LEAD_TRIM.windowMs + 6000, slack });
  const now = LEAD_TRIM.windowMs + 6000;
  clock.snapshot(1000 + Math.floor(now / TICK_MS), {
    nowMs: now,
    ackTick: 1000 + Math.floor(now / TICK_MS),
    lateTicks: 1,
    counts: true,
    settled: true,
  });
  assert.equal(clock.capTicks, Infinity, "the cap is gone");
  // A tick short under a cap several below the estimate: lifting the cap covers it, and
  // no raise is asked on top of the round trip's estimate.
  assert.ok(Math.abs(clock.wantedLeadTicks(now) - base) < 1e-6, `${clock.wantedLeadTicks(now)}`);
  // The late frame was the link's: no window runs while its raise lasts (none here: the
  // estimate covered it), so the next window caps again, a tick higher for the same need.
  feedSlack(clock, { fromMs: now, toMs: now + LEAD_TRIM.windowMs + 100, slack });
  assert.ok(
    Math.abs(clock.capTicks - (firstCap + 1)) <= 1 + 1e-6 && clock.capTicks > firstCap - 1e-6,
    `${firstCap} → ${clock.capTicks}`,
  );
});

Deno.test("a raise for frames named while the clock settled may be taken back; the link's may not", () => {
  const settle = (settled: boolean) => {
    const clock = steady();
    clock.targetTick(0);
    clock.snapshot(1003, { nowMs: 50, ackTick: 1003, lateTicks: 5, counts: true, settled });
    const raised = clock.wantedLeadTicks(50);
    feedSlack(clock, {
      fromMs: 50,
      toMs: LEAD_TRIM.windowMs + 200,
      slack: (lead) => Math.max(0, Math.floor(lead - 5)),
    });
    return { raised, after: clock.wantedLeadTicks(LEAD_TRIM.windowMs + 200) };
  };
  const base = steady().wantedLeadTicks(0);
  const settling = settle(false);
  const link = settle(true);
  assert.ok(Math.abs(settling.raised - (base + 5 + LATE_INPUT.marginTicks)) < 1e-6);
  assert.ok(Math.abs(link.raised - settling.raised) < 1e-6, "both raise the lead at once");
  assert.ok(settling.after < base - 2, `settling: ${settling.raised} → ${settling.after}`);
  assert.ok(
    link.after >=
      link.raised - LATE_INPUT.fadeTicksPerSec * ((LEAD_TRIM.windowMs + 150) / 1000) - 1e-6,
    `link: ${link.raised} → ${link.after}, only the fade`,
  );
});

Deno.test("a window in which no frame arrived caps nothing", () => {
  const clock = steady();
  const base = clock.wantedLeadTicks(0);
  // Snapshots keep coming, but the client sent nothing (none made it, none was late).
  feedSlack(clock, { fromMs: 0, toMs: 2 * LEAD_TRIM.windowMs + 100, slack: () => undefined });
  assert.equal(clock.capTicks, Infinity);
  assert.ok(Math.abs(clock.wantedLeadTicks(2 * LEAD_TRIM.windowMs + 100) - base) < 1e-6);
});
