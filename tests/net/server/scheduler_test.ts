/** net/server/scheduler.ts: late ticks, and the stalls they come in. */
import assert from "node:assert/strict";
import {
  FixedStepScheduler,
  ManualClock,
  STALL_MS_BUCKETS,
  type StallStart,
} from "../../../net/server/scheduler.ts";
import { TICK_MS } from "../../../sim/mod.ts";
import { LateTimerClock } from "./_late_clock.ts";

/** Runs 20 s of a loop whose step takes `stallMs[tick]` ms on the ticks named there. */
function run(stallMs: Record<number, number>) {
  const clock = new ManualClock();
  const scheduler = new FixedStepScheduler(clock, {
    // A step that takes time: the clock moves on while it runs (no timer is armed then).
    step: (tick) => {
      if (stallMs[tick]) clock.advance(stallMs[tick]);
    },
    maxCatchUpTicks: 5,
  });
  scheduler.start();
  clock.advance(20_000);
  scheduler.stop();
  return scheduler.stats;
}

Deno.test("a loop that keeps time has no late tick and no stall", () => {
  const stats = run({});
  assert.ok(stats.ticks >= 1199 && stats.ticks <= 1200, `${stats.ticks} ticks in 20 s`);
  assert.equal(stats.ticksLate, 0);
  assert.equal(stats.stalls, 0);
  assert.deepEqual(stats.stallBuckets, [0, 0, 0, 0, 0, 0, 0]);
});

Deno.test("late ticks are counted once each, and each run of them as one stall by its worst", () => {
  // A wake starts its tick up to 1 ms early, so each stall's worst tick starts its length,
  // less a tick, less up to 1 ms, late.
  // 45 ms: the next tick starts ~28 ms late, the one after on time (one late tick).
  // 80 ms: three late ticks (~62, 45 and 28 ms), caught up in the same wake.
  // 400 ms: four late ticks caught up (five ticks a wake at most, the stalled one first),
  // the rest dropped.
  const stats = run({ 100: 45, 300: 80, 600: 400 });
  assert.equal(stats.stalls, 3);
  assert.equal(stats.ticksLate, 1 + 3 + 4);
  assert.ok(stats.ticksDropped > 0, `${stats.ticksDropped} dropped after the 400 ms stop`);
  const bucketOf = (ms: number) => {
    const i = STALL_MS_BUCKETS.findIndex((b) => ms <= b);
    return i < 0 ? STALL_MS_BUCKETS.length : i;
  };
  const expected = [0, 0, 0, 0, 0, 0, 0];
  for (const worst of [45 - TICK_MS, 80 - TICK_MS, 400 - TICK_MS]) expected[bucketOf(worst)]++;
  assert.deepEqual(expected, [0, 1, 0, 1, 0, 1, 0], "≤33, ≤100 and ≤1000 ms");
  assert.deepEqual(stats.stallBuckets, expected);
  const sum = 45 + 80 + 400 - 3 * TICK_MS;
  assert.ok(
    stats.stallMsSum <= sum && stats.stallMsSum >= sum - 3,
    `${stats.stallMsSum} ms, expected ${sum} less up to 3`,
  );
});

Deno.test("a watch hears each stall once, where it began: a late wake-up or a long tick before it", () => {
  const clock = new LateTimerClock();
  const asleep: number[] = [];
  const stalls: StallStart[] = [];
  let slowTick = -1;
  const scheduler = new FixedStepScheduler(clock, {
    step: (tick) => {
      if (tick === slowTick) clock.advance(45);
    },
    maxCatchUpTicks: 5,
    watch: { asleep: (ms) => asleep.push(ms), stalled: (s) => stalls.push(s) },
  });
  scheduler.start();
  clock.advance(1000);
  assert.equal(stalls.length, 0, "on time: no stall");
  assert.equal(
    asleep.length,
    scheduler.stats.wakes + 1,
    "a sample at every wake-up's end and the start",
  );
  for (const ms of asleep) assert.ok(ms >= 0 && ms <= TICK_MS + 1e-9, `a timer of ${ms} ms`);

  // The loop's timer fires 40 ms late: the stall begins at the wake-up, after ~16 ms of
  // timer and 40 of oversleeping; the wake-up before ran no time on this clock.
  clock.late = { ms: 40 };
  clock.advance(1000);
  assert.equal(stalls.length, 1);
  const [woke] = stalls;
  assert.equal(woke.ticksBefore, 0);
  assert.ok(woke.lateMs > TICK_MS && woke.lateMs <= 40, `${woke.lateMs} ms late`);
  assert.ok(Math.abs(woke.awayMs - (woke.timerMs + 40)) < 1e-9, JSON.stringify(woke));
  assert.equal(woke.previousMs, 0);
  assert.equal(scheduler.stats.stalls, 1);

  // A tick takes 45 ms: the stall begins inside that wake-up, at the tick after it.
  slowTick = scheduler.stats.ticks + 10;
  clock.advance(1000);
  assert.equal(stalls.length, 2);
  const [, inWake] = stalls;
  assert.equal(inWake.ticksBefore, 1, "the slow tick ran first in that wake-up");
  assert.ok(inWake.awayMs >= 45 && inWake.awayMs < 45 + TICK_MS, JSON.stringify(inWake));
  assert.equal(scheduler.stats.stalls, 2);
  scheduler.stop();
});
