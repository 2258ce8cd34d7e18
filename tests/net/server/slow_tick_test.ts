/**
 * Slow ticks, in process: a tick over SLOW_TICK_MS is logged as `slow_tick` with the
 * instance that took longest (one heavy world, or a stall that fell in it), at most once
 * per SLOW_TICK_LOG_MS with the slow ticks between counted in. The clock is a ManualClock
 * that an instance's step moves on, as if the step had taken that long.
 */
import assert from "node:assert/strict";
import { FOLD } from "../../../content/mod.ts";
import { ManualClock } from "../../../net/server/scheduler.ts";
import { GameServer, SLOW_TICK_LOG_MS, SLOW_TICK_MS } from "../../../net/server/server.ts";
import type { Instance } from "../../../net/server/instance.ts";

/** A manual clock whose time also moves while an instance steps (`took`). */
class SteppingClock extends ManualClock {
  #extra = 0;

  override now(): number {
    return super.now() + this.#extra;
  }

  took(ms: number): void {
    this.#extra += ms;
  }
}

/** Makes `instance`'s every step take `ms` on `clock` (0: as fast as the others). */
function slowDown(instance: Instance, clock: SteppingClock, ms: () => number): void {
  const step = instance.step.bind(instance);
  instance.step = (serverTick?: number) => {
    clock.took(ms());
    return step(serverTick);
  };
}

Deno.test("a slow tick is logged once per window, naming the instance that took the time", () => {
  const clock = new SteppingClock();
  const logs: { event: string; fields: Record<string, unknown> }[] = [];
  const server = new GameServer({ clock, log: (event, fields) => logs.push({ event, fields }) });
  const dungeons = ["dungeon-a", "dungeon-b", "dungeon-c"].map((id) =>
    server.instanceFor(id, FOLD.key)
  );
  const heavy = dungeons[1];
  let heavyMs = 0;
  slowDown(heavy, clock, () => heavyMs);
  slowDown(dungeons[2], clock, () => 1);
  const slowLines = () => logs.filter((l) => l.event === "slow_tick");

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
