/** tools/step_parts.ts and the probe it rides on: each part of a step, timed where it runs. */
import assert from "node:assert/strict";
import { lapCostUs, StepParts } from "../../tools/step_parts.ts";
import { runScenario } from "../../tools/server_bench.ts";
import { Instance, INSTANCE_STEP_PARTS } from "../../net/server/instance.ts";
import { MessageEncoder } from "../../net/wire/codec.ts";
import { FOLD, worldByKey } from "../../content/mod.ts";
import { SimWorld, WORLD_STEP_PARTS } from "../../sim/mod.ts";

/** Every part of an instance's step, in the order the probe hears them. */
const STEP_ORDER = [
  "between",
  "inputs",
  ...WORLD_STEP_PARTS,
  "events",
  "flush",
  "snapshots",
];

Deno.test("a dungeon's step tells its probe every part once, in the order they run", () => {
  const heard: string[] = [];
  const instance = new Instance("dungeon-1", {
    worldId: worldByKey(FOLD.key).id,
    def: FOLD,
    seed: 5,
    encoder: new MessageEncoder(),
    probe: { lap: (part) => heard.push(part) },
  });
  instance.step(0);
  assert.deepEqual(heard, STEP_ORDER);
  // The instance's own parts are the ones it declares, around the world's.
  assert.deepEqual(STEP_ORDER.filter((p) => !(WORLD_STEP_PARTS as readonly string[]).includes(p)), [
    ...INSTANCE_STEP_PARTS,
  ]);
  instance.step(1);
  assert.equal(heard.length, 2 * STEP_ORDER.length);
});

Deno.test("a world with no probe steps as one with a probe does", () => {
  const a = new SimWorld(FOLD, { seed: 9 });
  const b = new SimWorld(FOLD, { seed: 9, probe: { lap: () => {} } });
  for (const w of [a, b]) w.addPlayer(1, "p");
  for (let t = 0; t < 400; t++) {
    const input = new Map([[1, { tick: t, moveX: 30, moveY: -20, aim: t % 256, buttons: 1 }]]);
    assert.deepEqual(b.step(input), a.step(input));
  }
  assert.equal(b.bullets.count, a.bullets.count);
  assert.ok(a.bullets.count > 0, "the ship fired");
});

Deno.test("the parts count dungeons' time only, and what ran since the last lap", () => {
  let now = 0;
  const parts = new StepParts(() => now);
  const hub = parts.probeFor("hub");
  const dungeon = parts.probeFor("dungeon");
  const tick = () => {
    parts.start();
    now += 5; // the hub's step: its laps move the clock on, nothing is counted
    hub.lap("between");
    hub.lap("snapshots");
    now += 1; // the loop between instances
    dungeon.lap("between");
    now += 2;
    dungeon.lap("inputs");
    now += 7;
    dungeon.lap("bullets");
    now += 100; // after the last instance: the flush, nobody's part
  };
  parts.counting = false;
  tick(); // a warm-up: watched, not counted
  parts.counting = true;
  tick();
  tick();
  assert.equal(parts.steps, 2);
  assert.deepEqual(parts.perStepUs(), { between: 1000, inputs: 2000, bullets: 7000 });
});

Deno.test("server-bench --parts gives every part of a dungeon's step and a lap's cost", () => {
  const r = runScenario({ crowd: 0, dungeons: 2, ticks: 60, parts: true });
  assert.equal(r.dungeons, 2);
  const parts = r.partsUsPerDungeonStep;
  assert.ok(parts, "parts reported");
  assert.deepEqual(Object.keys(parts), STEP_ORDER);
  for (const [part, us] of Object.entries(parts)) assert.ok(us > 0, `${part}: ${us} µs`);
  // Timed inside the ticks, the dungeons' parts add up to less than the ticks took (the
  // hub's step, the inputs read before it and the frames after it are no part's).
  const partsMsPerTick = Object.values(parts).reduce((a, b) => a + b, 0) * r.dungeons / 1000;
  assert.ok(
    partsMsPerTick < r.wallMsPerTick.mean,
    `parts ${partsMsPerTick} ms a tick, the tick ${r.wallMsPerTick.mean} ms`,
  );
  assert.ok(r.lapUs !== undefined && r.lapUs > 0, `a lap: ${r.lapUs} µs`);
  // Without --parts, no probe: the result says nothing of parts.
  const plain = runScenario({ crowd: 0, dungeons: 1, ticks: 10 });
  assert.equal(plain.partsUsPerDungeonStep, undefined);
});

Deno.test("a lap's cost is measured, not assumed", () => {
  let now = 0;
  // A clock that moves 0.5 ms a read: a lap reads it once (and the span's end, once more).
  const us = lapCostUs(() => (now += 0.5), 1000);
  assert.ok(Math.abs(us - 500) <= 1, `${us} µs a lap`);
});
