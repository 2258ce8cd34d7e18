/**
 * Slow ticks, in process: a tick over SLOW_TICK_MS is logged as `slow_tick` with the
 * instance that took longest (one heavy world, or a stall that fell in it), at most once
 * per SLOW_TICK_LOG_MS with the slow ticks between counted in, and what the process's CPU
 * did meanwhile. The clock is a ManualClock that an instance's step moves on, as if the
 * step had taken that long: working (the CPU's user time moves with it) or stalled (it
 * does not, and the kernel counts a preemption).
 */
import assert from "node:assert/strict";
import { FOLD } from "../../../content/mod.ts";
import { ManualClock } from "../../../net/server/scheduler.ts";
import { GameServer, SLOW_TICK_LOG_MS, SLOW_TICK_MS } from "../../../net/server/server.ts";
import type { Instance } from "../../../net/server/instance.ts";
import type { CpuSample } from "../../../net/server/cpu_usage.ts";

/**
 * A manual clock whose time also moves while an instance steps, with the process's CPU
 * use beside it: `took` is time spent working, `stalled` time spent off the core.
 */
class SteppingClock extends ManualClock {
  #extra = 0;
  cpu: CpuSample = { userMs: 0, systemMs: 0, preemptions: 0, pageFaults: 0 };

  override now(): number {
    return super.now() + this.#extra;
  }

  took(ms: number): void {
    this.#extra += ms;
    this.cpu = { ...this.cpu, userMs: this.cpu.userMs + ms };
  }

  stalled(ms: number): void {
    this.#extra += ms;
    if (ms > 0) this.cpu = { ...this.cpu, preemptions: this.cpu.preemptions + 1 };
  }
}

/** Runs `before` ahead of each of `instance`'s steps. */
function beforeStep(instance: Instance, before: () => void): void {
  const step = instance.step.bind(instance);
  instance.step = (serverTick?: number) => {
    before();
    return step(serverTick);
  };
}

/** Makes `instance`'s every step take `ms` of work on `clock` (0: as fast as the others). */
function slowDown(instance: Instance, clock: SteppingClock, ms: () => number): void {
  beforeStep(instance, () => clock.took(ms()));
}

/**
 * A server on a SteppingClock, with its `slow_tick` lines kept; the CPU it reads is the
 * clock's, or the process's own with `realCpu`.
 */
function watchedServer(opts: { realCpu?: boolean } = {}) {
  const clock = new SteppingClock();
  const logs: { event: string; fields: Record<string, unknown> }[] = [];
  const server = new GameServer({
    clock,
    cpuUsage: opts.realCpu ? undefined : () => clock.cpu,
    log: (event, fields) => logs.push({ event, fields }),
  });
  const slowLines = () => logs.filter((l) => l.event === "slow_tick");
  return { clock, server, slowLines };
}

Deno.test("a slow tick is logged once per window, naming the instance that took the time", () => {
  const { clock, server, slowLines } = watchedServer();
  const dungeons = ["dungeon-a", "dungeon-b", "dungeon-c"].map((id) =>
    server.instanceFor(id, FOLD.key)
  );
  const heavy = dungeons[1];
  let heavyMs = 0;
  slowDown(heavy, clock, () => heavyMs);
  slowDown(dungeons[2], clock, () => 1);

  // Within the budget: nothing said.
  for (let i = 0; i < 5; i++) server.tick();
  assert.equal(slowLines().length, 0);

  // One world takes 12 ms a tick: the first slow tick is logged, naming it.
  heavyMs = 12;
  server.tick();
  assert.equal(slowLines().length, 1);
  const first = slowLines()[0].fields;
  assert.equal(first.slowest, heavy.id);
  assert.equal(first.slowestKind, "dungeon");
  assert.equal(first.slowestMs, 12);
  assert.ok((first.ms as number) > SLOW_TICK_MS);
  assert.equal(first.ms, 13, "the heavy world's 12 ms and the other one's 1");
  assert.equal(first.instances, server.instances.size);
  assert.equal(first.instanceMeanMs, Math.round((13 / server.instances.size) * 100) / 100);
  assert.equal(first.flushMs, 0);
  assert.equal(first.slowTicks, 1);
  // The loop worked the whole time: the CPU spent is the tick's length, nothing taken away.
  assert.equal(first.userMs, 13);
  assert.equal(first.systemMs, 0);
  assert.equal(first.preemptions, 0);
  assert.equal(first.pageFaults, 0);

  // More slow ticks inside the window are counted, not logged.
  for (let i = 0; i < 4; i++) server.tick();
  assert.equal(slowLines().length, 1);

  // Past the window, the next slow one is logged with the ones held back.
  clock.advance(SLOW_TICK_LOG_MS);
  server.tick();
  assert.equal(slowLines().length, 2);
  assert.equal(slowLines()[1].fields.slowTicks, 5);
  assert.equal(slowLines()[1].fields.slowest, heavy.id);

  // Back within the budget (the 1 ms world is no slow tick): quiet again.
  heavyMs = 0;
  clock.advance(SLOW_TICK_LOG_MS);
  for (let i = 0; i < 5; i++) server.tick();
  assert.equal(slowLines().length, 2);
  server.shutdown("test over");
});

Deno.test("a slow tick that lost its core says so: CPU short of its length, a preemption", () => {
  const { clock, server, slowLines } = watchedServer();
  const dungeon = server.instanceFor("dungeon-a", FOLD.key);
  beforeStep(dungeon, () => {
    clock.took(1);
    clock.stalled(11);
  });
  server.tick();
  const line = slowLines()[0]?.fields;
  assert.ok(line, "the slow tick is logged");
  assert.equal(line.ms, 12);
  assert.equal(line.slowest, dungeon.id);
  assert.equal(line.userMs, 1, "1 ms of the 12 was work");
  assert.equal(line.preemptions, 1);
  server.shutdown("test over");
});

Deno.test("by default a slow tick's CPU is the process's own, read from the kernel", () => {
  const { clock, server, slowLines } = watchedServer({ realCpu: true });
  const dungeon = server.instanceFor("dungeon-a", FOLD.key);
  // Really busy for 12 ms of wall time (the manual clock says so too).
  beforeStep(dungeon, () => {
    const until = performance.now() + 12;
    while (performance.now() < until) { /* work */ }
    clock.took(12);
  });
  server.tick();
  const line = slowLines()[0]?.fields;
  assert.ok(line, "the slow tick is logged");
  const cpuMs = (line.userMs as number) + (line.systemMs as number);
  // A loaded machine may give the loop less than all of its 12 ms, never none of it.
  assert.ok(cpuMs >= 1 && cpuMs < 1000, `${cpuMs} ms of CPU in a 12 ms busy tick`);
  assert.ok(Number.isInteger(line.preemptions) && (line.preemptions as number) >= 0);
  assert.ok(Number.isInteger(line.pageFaults) && (line.pageFaults as number) >= 0);
  server.shutdown("test over");
});
