/** tools/pool_bench.ts: its figures come from the pools it says it ran. */
import assert from "node:assert/strict";
import { measurePools } from "../../tools/pool_bench.ts";

Deno.test("the pool bench steps pools kept near their target and times a pool's making", () => {
  const figures = measurePools({ pools: 20, live: 40, ticks: 60, clearMb: 1 });
  assert.equal(figures.pools, 20);
  assert.equal(figures.ticks, 60);
  // Volleys of 6–15 top each pool up towards 40: the mean sits a volley or so either side.
  assert.ok(figures.liveMean >= 25 && figures.liveMean <= 60, `live mean ${figures.liveMean}`);
  assert.ok(figures.constructUs > 0, `a pool made in ${figures.constructUs} µs`);
  assert.ok(figures.stepNsPerBullet > 0, `${figures.stepNsPerBullet} ns a bullet`);
});
