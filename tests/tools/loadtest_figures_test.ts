/** tools/loadtest.ts: the figures a window compares, read from a real server's /metrics. */
import assert from "node:assert/strict";
import { GameServer } from "../../net/server/server.ts";
import { createApp } from "../../routes/app.ts";
import { metricFigures, perTickMs } from "../../tools/loadtest.ts";
import { DriftingClock } from "../net/_harness.ts";

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
  const meanMs = ((after.tickSumS - before.tickSumS) / 40) * 1000;
  assert.ok(
    Math.abs(parts.hub + parts.dungeons + parts.flush - meanMs) < 0.02,
    `${JSON.stringify(parts)} against a mean of ${meanMs} ms`,
  );
  server.shutdown("test over");
});
