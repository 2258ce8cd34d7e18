/** tools/loadtest.ts: a window's stalls from two readings of the loop's histogram and verdicts. */
import assert from "node:assert/strict";
import { stallsBetween, verdictsBetween } from "../../tools/loadtest.ts";

/** Cumulative buckets as /metrics has them, from per-bucket counts. */
function reading(perBucket: number[]) {
  const bounds = ["0.025", "0.033", "0.05", "0.1", "0.25", "1", "+Inf"];
  let total = 0;
  return bounds.map((le, i) => ({ le, count: total += perBucket[i] }));
}

Deno.test("a window's stalls are the difference of two readings, per bucket", () => {
  const before = reading([3, 1, 0, 0, 1, 0, 0]);
  const after = reading([7, 1, 2, 0, 3, 0, 1]);
  assert.deepEqual(stallsBetween(before, after), {
    count: 4 + 0 + 2 + 0 + 2 + 0 + 1,
    worstLateMs: { "25": 4, "33": 0, "50": 2, "100": 0, "250": 2, "1000": 0, more: 1 },
  });
  // A server that has not stalled yet: nothing.
  const quiet = reading([0, 0, 0, 0, 0, 0, 0]);
  assert.deepEqual(stallsBetween(quiet, quiet).count, 0);
});

Deno.test("a window's stalls by verdict are the difference of two readings, per verdict", () => {
  assert.deepEqual(
    verdictsBetween({ worked: 2, preempted: 0, slept: 1 }, { worked: 5, preempted: 1, slept: 1 }),
    { worked: 3, preempted: 1, slept: 0 },
  );
});
