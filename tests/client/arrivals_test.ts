/** Your own crew catching up with you is no "joined" news; strangers are. */
import assert from "node:assert/strict";
import { Arrivals } from "../../client/arrivals.ts";

Deno.test("Arrivals: the crew that came with you is no news, a stranger is", () => {
  const arrivals = new Arrivals();
  arrivals.entered(["Ann", "Bo"], { nowMs: 1000, windowMs: 5000 });
  assert.equal(arrivals.isNews("Ann", 1200), false);
  assert.equal(arrivals.isNews("Cy", 1300), true);
  assert.equal(arrivals.isNews("Bo", 1400), false);
  // Each companion once: Ann leaving and coming back is news.
  assert.equal(arrivals.isNews("Ann", 2000), true);
});

Deno.test("Arrivals: a companion who comes much later is news again", () => {
  const arrivals = new Arrivals();
  arrivals.entered(["Ann"], { nowMs: 1000, windowMs: 5000 });
  assert.equal(arrivals.isNews("Ann", 6000), true);
});

Deno.test("Arrivals: the next Enter forgets the last crew", () => {
  const arrivals = new Arrivals();
  arrivals.entered(["Ann"], { nowMs: 0, windowMs: 5000 });
  arrivals.entered(["Bo"], { nowMs: 100, windowMs: 5000 });
  assert.equal(arrivals.isNews("Ann", 200), true);
  assert.equal(arrivals.isNews("Bo", 200), false);
});
