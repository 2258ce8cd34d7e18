/**
 * LinkPath and LinkPipe on a ManualClock: delay and jitter within bounds with order
 * kept, stalls that hold everything then release it at once, scripted cuts, and
 * directions and connections that do not share their randomness.
 */
import assert from "node:assert/strict";
import { LinkPath, LinkPipe, LinkSim, linkSpec, parseLinkSpec } from "../../../net/link/mod.ts";
import { ManualClock } from "../../../net/server/scheduler.ts";

/** Sends one numbered item every `everyMs` for `forMs` and records when each arrives. */
function stream(path: LinkPath, opts: { everyMs: number; forMs: number }) {
  const clock = new ManualClock();
  const arrivals: { n: number; sentMs: number; atMs: number }[] = [];
  const sentAt: number[] = [];
  const pipe = new LinkPipe<number>(path, {
    clock,
    deliver: (n) => arrivals.push({ n, sentMs: sentAt[n], atMs: clock.now() }),
  });
  for (let t = 0, n = 0; t < opts.forMs; t += opts.everyMs, n++) {
    sentAt.push(clock.now());
    pipe.send(n);
    clock.advance(opts.everyMs);
  }
  clock.advance(60_000);
  assert.equal(pipe.inFlight, 0);
  assert.equal(clock.pending, 0, "no timer is left behind");
  return arrivals;
}

Deno.test("a pipe delivers in order, each item delay ± jitter after it was sent (or after the one before)", () => {
  const path = new LinkPath(parseLinkSpec("150±50")!.down, { seed: 3, startMs: 0 });
  const arrivals = stream(path, { everyMs: 1000 / 60, forMs: 10_000 });
  assert.ok(arrivals.length >= 600);
  arrivals.forEach((a, i) => assert.equal(a.n, i, "order kept"));
  const delays = arrivals.map((a) => a.atMs - a.sentMs);
  assert.ok(Math.min(...delays) >= 100, `min ${Math.min(...delays)}`);
  assert.ok(Math.max(...delays) <= 200, `max ${Math.max(...delays)}`);
  const mean = delays.reduce((s, d) => s + d, 0) / delays.length;
  // Keeping order pushes the mean a little above 150 (an early item waits for a late one).
  assert.ok(mean > 150 && mean < 175, `mean ${mean}`);
  const spread = Math.max(...delays) - Math.min(...delays);
  assert.ok(spread > 80, `jitter really spreads arrivals: ${spread} ms`);
});

Deno.test("stalls hold everything for their length, then deliver it at once, about as often as asked", () => {
  const spec = parseLinkSpec("50,stall=250/4000")!;
  const path = new LinkPath(spec.down, { seed: 9, startMs: 0 });
  const arrivals = stream(path, { everyMs: 10, forMs: 60_000 });
  // Gaps between consecutive arrivals: 10 ms normally, ~250 ms across a stall.
  const gaps: number[] = [];
  for (let i = 1; i < arrivals.length; i++) gaps.push(arrivals[i].atMs - arrivals[i - 1].atMs);
  const long = gaps.filter((g) => g > 100);
  console.log(`${path.stats.stalls} stalls, ${long.length} long gaps: ${long.slice(0, 5)}…`);
  // 60 s at one stall per ~4.25 s (gap 2–6 s + 250 ms): 14 ± a few.
  assert.ok(long.length >= 9 && long.length <= 20, `${long.length} stalls in 60 s`);
  for (const g of long) assert.ok(g >= 240 && g <= 260, `a stall gap of ${g} ms`);
  // What the stall held arrives together: many items share the stall's end.
  const burst = Math.max(...countBy(arrivals.map((a) => a.atMs)).values());
  assert.ok(burst >= 20, `${burst} items in one burst`);
});

Deno.test("a cut holds both directions for its length, and nothing is lost", () => {
  const clock = new ManualClock();
  const link = new LinkSim(linkSpec({ delayMs: 20 }), { startMs: 0 });
  const got: { dir: string; n: number; atMs: number }[] = [];
  const up = new LinkPipe<number>(link.up, {
    clock,
    deliver: (n) => got.push({ dir: "up", n, atMs: clock.now() }),
  });
  const down = new LinkPipe<number>(link.down, {
    clock,
    deliver: (n) => got.push({ dir: "down", n, atMs: clock.now() }),
  });
  clock.advance(100);
  link.cut(clock.now(), 3000);
  assert.ok(link.up.downAt(clock.now() + 1) && link.down.downAt(clock.now() + 2999));
  for (let n = 0; n < 30; n++) {
    up.send(n);
    down.send(n);
    clock.advance(100);
  }
  clock.advance(1000);
  assert.equal(got.length, 60, "everything arrives");
  for (const g of got) {
    assert.ok(g.atMs >= 3100, `${g.dir} ${g.n} arrived at ${g.atMs}, inside the cut`);
  }
  assert.ok(!link.up.downAt(clock.now()));
  assert.equal(link.up.stats.cuts, 1);
});

Deno.test("clear() drops what is in flight and leaves no timer", () => {
  const clock = new ManualClock();
  const got: number[] = [];
  const pipe = new LinkPipe<number>(
    new LinkPath(linkSpec({ delayMs: 50 }).up, { seed: 1, startMs: 0 }),
    {
      clock,
      deliver: (n) => got.push(n),
    },
  );
  pipe.send(1);
  pipe.send(2);
  assert.equal(pipe.inFlight, 2);
  pipe.clear();
  assert.equal(clock.pending, 0);
  clock.advance(100);
  assert.deepEqual(got, []);
  pipe.send(3);
  clock.advance(100);
  assert.deepEqual(got, [3], "the pipe still works after a clear");
});

Deno.test("a zero link delivers on the next turn of the clock, in order", () => {
  const clock = new ManualClock();
  const got: number[] = [];
  const pipe = new LinkPipe<number>(new LinkPath(linkSpec({}).up, { seed: 1, startMs: 0 }), {
    clock,
    deliver: (n) => {
      got.push(n);
      if (n === 1) pipe.send(3); // a delivery that sends: still in order, still delivered
    },
  });
  pipe.send(1);
  pipe.send(2);
  assert.deepEqual(got, [], "never synchronously");
  clock.advance(0);
  assert.deepEqual(got, [1, 2, 3]);
});

Deno.test("directions and connections draw their own jitter and stalls", () => {
  const spec = parseLinkSpec("100±50,stall=250/1000")!;
  const a = new LinkSim(spec, { startMs: 0, stream: 1 });
  const b = new LinkSim(spec, { startMs: 0, stream: 2 });
  const sample = (p: LinkPath) => Array.from({ length: 50 }, (_, i) => p.arrivalMs(i * 100));
  const [au, ad, bu] = [sample(a.up), sample(a.down), sample(b.up)];
  assert.notDeepEqual(au, ad, "up and down differ");
  assert.notDeepEqual(au, bu, "two connections differ");
  // And the same seed and stream give the same path: runs are reproducible.
  assert.deepEqual(sample(new LinkSim(spec, { startMs: 0, stream: 1 }).up), au);
});

function countBy(values: readonly number[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const v of values) m.set(v, (m.get(v) ?? 0) + 1);
  return m;
}
