/**
 * net/server/stall_watch.ts: what the loop did before each stall began, told from its
 * thread's CPU, counted by verdict in /metrics (and read back as the load test reads it)
 * and logged as `loop_stall`. The loop runs on a LateTimerClock, whose timer can be made to
 * fire late, with CPU use that moves meanwhile or not.
 */
import assert from "node:assert/strict";
import { GameServer, SLOW_TICK_LOG_MS } from "../../../net/server/server.ts";
import { renderMetrics } from "../../../net/server/metrics.ts";
import type { CpuSample } from "../../../net/server/cpu_usage.ts";
import { stallVerdict } from "../../../net/server/stall_watch.ts";
import { metricFigures } from "../../../tools/loadtest.ts";
import { TICK_MS } from "../../../sim/mod.ts";
import { LateTimerClock } from "./_late_clock.ts";

const NONE: CpuSample = { userMs: 0, systemMs: 0, preemptions: 0, pageFaults: 0 };

Deno.test("a stall's verdict: worked from half the time on, else preempted or slept", () => {
  assert.equal(stallVerdict(40, { ...NONE, userMs: 15, systemMs: 5 }), "worked");
  assert.equal(stallVerdict(40, { ...NONE, userMs: 19.9 }), "slept");
  assert.equal(stallVerdict(40, { ...NONE, userMs: 3, preemptions: 2 }), "preempted");
  assert.equal(stallVerdict(40, { ...NONE, userMs: 3, pageFaults: 9 }), "slept");
  assert.equal(stallVerdict(40, { ...NONE, userMs: 30, preemptions: 1 }), "worked");
});

Deno.test("each stall is counted by what the loop did before it, in /metrics and a loop_stall line", () => {
  const clock = new LateTimerClock();
  let cpu = NONE;
  const logs: { event: string; fields: Record<string, unknown> }[] = [];
  const server = new GameServer({
    clock,
    cpuUsage: () => cpu,
    log: (event, fields) => logs.push({ event, fields }),
  });
  const stallLines = () => logs.filter((l) => l.event === "loop_stall").map((l) => l.fields);
  const verdicts = () => metricFigures(renderMetrics(server)).stallVerdicts;
  server.start();
  clock.advance(1000);
  assert.deepEqual(verdicts(), { worked: 0, preempted: 0, slept: 0 });

  // Busy 40 ms past the timer (writes, reads, a collection): the loop ran.
  clock.late = { ms: 40, meanwhile: () => cpu = { ...cpu, userMs: cpu.userMs + 38 } };
  clock.advance(1000);
  // Off its core: 2 ms of CPU in 40 and a preemption.
  clock.advance(SLOW_TICK_LOG_MS);
  clock.late = {
    ms: 40,
    meanwhile: () => cpu = { ...cpu, userMs: cpu.userMs + 2, preemptions: cpu.preemptions + 1 },
  };
  clock.advance(1000);
  // Neither ran nor lost its core: the timer came 40 ms late (the host).
  clock.advance(SLOW_TICK_LOG_MS);
  clock.late = { ms: 40 };
  clock.advance(1000);

  assert.deepEqual(verdicts(), { worked: 1, preempted: 1, slept: 1 });
  assert.equal(server.scheduler.stats.stalls, 3, "every stall has its verdict");
  const lines = stallLines();
  assert.deepEqual(lines.map((l) => l.verdict), ["worked", "preempted", "slept"]);
  const slept = lines[2];
  assert.equal(slept.userMs, 0);
  assert.equal(slept.preemptions, 0);
  assert.equal(slept.ticksBefore, 0);
  assert.equal(slept.stalls, 1);
  assert.ok((slept.lateMs as number) > TICK_MS && (slept.lateMs as number) <= 40);
  assert.equal(slept.awayMs, Math.round(((slept.timerMs as number) + 40) * 100) / 100);

  // Within SLOW_TICK_LOG_MS of a line, stalls are counted, not logged; the next line says how many.
  clock.late = { ms: 40 };
  clock.advance(1000);
  clock.late = { ms: 40 };
  clock.advance(1000);
  assert.equal(stallLines().length, 3);
  assert.equal(verdicts().slept, 3);
  clock.advance(SLOW_TICK_LOG_MS);
  clock.late = { ms: 40 };
  clock.advance(1000);
  assert.equal(stallLines().length, 4);
  assert.equal(stallLines()[3].stalls, 3, "the two held back and this one");
  server.shutdown("test over");
});
