/** tools/host_probe.ts: where the loads leave the caches, and what the probe reports. */
import assert from "node:assert/strict";
import { cacheMbOf, probeHost } from "../../tools/host_probe.ts";

const SIZES = [0.5, 1, 2, 4, 8, 16, 32, 64];

Deno.test("the cache is the largest set whose loads take under half what memory's do", () => {
  // A host that leaves 4 MB: loads jump from ~20 ns to ~100 past it.
  assert.equal(cacheMbOf(SIZES, [10, 15, 19, 24, 95, 120, 140, 150]), 4);
  // One that leaves 8 MB, its 8 MB loads partly in the cache.
  assert.equal(cacheMbOf(SIZES, [10, 16, 18, 23, 40, 112, 126, 146]), 8);
  // A set past the jump that happens to come back under the line does not count.
  assert.equal(cacheMbOf(SIZES, [10, 16, 90, 30, 100, 120, 140, 150]), 1);
  // Nothing fits, or nothing was measured.
  assert.equal(cacheMbOf(SIZES, [80, 90, 100, 110, 120, 130, 140, 150]), 0);
  assert.equal(cacheMbOf([], []), 0);
});

Deno.test("the probe times the compute chain and a chase through every size it was given", () => {
  const probe = probeHost({ rounds: 1, sizesMb: [0.25, 0.5, 1], ops: 100_000 });
  // A multiply-add waits for the one before: a cycle or so once compiled, a hundred or two
  // in the interpreter (a run this short may not be compiled), far from ms or ps.
  assert.ok(
    probe.computeNsPerOp > 0.05 && probe.computeNsPerOp < 1_000,
    `${probe.computeNsPerOp} ns`,
  );
  assert.deepEqual(probe.sizesMb, [0.25, 0.5, 1]);
  assert.equal(probe.nsPerLoad.length, 3);
  for (const ns of probe.nsPerLoad) {
    // A load takes somewhere between a cycle and a trip to memory with a page walk.
    assert.ok(ns > 0.1 && ns < 2_000, `${ns} ns a load`);
  }
  assert.equal(probe.cacheMb, cacheMbOf(probe.sizesMb, probe.nsPerLoad));
  // An array, a view, a clock read: each between a few ns and tens of µs, never nothing.
  for (const [what, ns] of Object.entries(probe.runtimeNs)) {
    assert.ok(ns > 1 && ns < 50_000, `${what}: ${ns} ns`);
  }
});
