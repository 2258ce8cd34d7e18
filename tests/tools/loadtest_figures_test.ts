/** tools/loadtest.ts: the figures a window compares, read from a real server's /metrics. */
import assert from "node:assert/strict";
import { GameServer } from "../../net/server/server.ts";
import { createApp } from "../../routes/app.ts";
import { metricFigures, perTickMs, spread, staggerBatches } from "../../tools/loadtest.ts";
import { DriftingClock } from "../net/_harness.ts";
import { FOLD, ORB } from "../../content/mod.ts";
import { spawnVolley } from "../../sim/mod.ts";

Deno.test("a window's tick parts come from /metrics as the server counted them", async () => {
  const server = new GameServer({ clock: new DriftingClock(), seed: 3 });
  const app = createApp(server, { clientJs: () => Promise.resolve("") });
  const read = async () => metricFigures(await (await app.request("/metrics")).text());
  const before = await read();
  for (let i = 0; i < 40; i++) server.tick();
  const after = await read();
  const c = server.counters;
  assert.equal(after.tickCount - before.tickCount, 40);
  assert.equal(after.late, 0);
  assert.equal(after.players, 0);
  assert.equal(after.dungeons, 0);
  assert.equal(after.stallBuckets.length, 7);
  // Each part as the server summed it (the exporter writes seconds).
  assert.equal(after.tickPartS.hub, c.tickMsByPart.hub / 1000);
  assert.equal(after.tickPartS.dungeons, c.tickMsByPart.dungeon / 1000);
  assert.equal(after.tickPartS.flush, c.tickMsByPart.flush / 1000);
  const parts = perTickMs(before, after);
  // Only the hub is open: its steps and the flushes after them are the whole tick.
  assert.ok(parts.hub > 0 && parts.flush > 0, JSON.stringify(parts));
  assert.equal(parts.dungeons, 0);
  // The skipped snapshots as the server counted them (here none: no socket is open).
  assert.equal(after.snapshotsSkipped, c.snapshotsSkipped);
  c.snapshotsSkipped += 3;
  assert.equal((await read()).snapshotsSkipped - after.snapshotsSkipped, 3);
  const meanMs = ((after.tickSumS - before.tickSumS) / 40) * 1000;
  assert.ok(
    Math.abs(parts.hub + parts.dungeons + parts.flush - meanMs) < 0.02,
    `${JSON.stringify(parts)} against a mean of ${meanMs} ms`,
  );
  server.shutdown("test over");
});

Deno.test("a window's bullets are those in flight after each tick, summed as the server stepped them", async () => {
  const server = new GameServer({ clock: new DriftingClock(), seed: 3 });
  const app = createApp(server, { clientJs: () => Promise.resolve("") });
  const read = async () => metricFigures(await (await app.request("/metrics")).text());
  const dungeon = server.instanceFor("dungeon-a", FOLD.key);
  const { widthPx, heightPx } = FOLD.arena;
  // A ring of 12 slow orbs from the middle of the arena: all in flight for the window.
  spawnVolley(dungeon.world.bullets, {
    birthTick: dungeon.world.tick,
    uid0: 1,
    team: 2,
    owner: -1,
    spec: ORB,
    speedPxPerS: 60,
    xs: new Array(12).fill(Math.round((widthPx / 2) * 8)),
    ys: new Array(12).fill(Math.round((heightPx / 2) * 8)),
    angles: Array.from({ length: 12 }, (_, k) => Math.floor((k * 65536) / 12)),
  });
  const before = await read();
  let inFlight = 0;
  for (let i = 0; i < 20; i++) {
    server.tick();
    inFlight += dungeon.world.bullets.count;
  }
  const after = await read();
  assert.ok(server.instances.has(dungeon.id), "the dungeon stepped the whole window");
  assert.equal(inFlight, 12 * 20, "nothing hit or left the arena");
  assert.equal(after.bulletTicks - before.bulletTicks, inFlight);
  server.shutdown("test over");
});

Deno.test("a step's dungeons arrive in even batches of whole dungeons, one a second over --stagger", () => {
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  for (const [dungeons, seconds] of [[200, 12], [10, 12], [15, 4], [1, 12], [7, 0], [50, 1]]) {
    const batches = staggerBatches(dungeons, seconds);
    assert.equal(sum(batches), dungeons, `${dungeons} over ${seconds} s: every dungeon`);
    assert.equal(batches.length, Math.max(1, Math.min(seconds, dungeons)), "one batch a second");
    assert.ok(
      Math.max(...batches) - Math.min(...batches) <= 1,
      `${dungeons} over ${seconds} s: as even as whole dungeons allow (${batches})`,
    );
  }
  assert.deepEqual(staggerBatches(200, 0), [200], "no stagger: the step at once");
  assert.deepEqual(spread([31, 12, 40]), { min: 12, max: 40 });
  assert.deepEqual(spread([]), { min: 0, max: 0 });
});
