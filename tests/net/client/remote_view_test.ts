/**
 * Other players' ships (RemoteView): interpolated a little in the past with a delay
 * that follows the measured jitter, extrapolated for at most 250 ms across a stall,
 * and blended back without a jump when fresh snapshots arrive after one.
 */
import assert from "node:assert/strict";
import { RemoteView, sample } from "../../../net/client/remote_view.ts";
import type { SnapshotMsg } from "../../../net/wire/protocol.ts";
import { REMOTE_VIEW, TICKS_PER_SNAPSHOT } from "../../../content/net_tuning.ts";
import { Rng, TICK_MS } from "../../../sim/mod.ts";

const FRAME_MS = 1000 / 60;

/** A snapshot with the local ship (id 1) and a remote one (id 2) at (x, y). */
function snap(tick: number, at: { x: number; y: number }): SnapshotMsg {
  const ship = (id: number, x: number, y: number) => ({
    id,
    x,
    y,
    aim: 0,
    hp: 5,
    flags: 1,
    escape: 0,
  });
  return {
    kind: 14,
    tick,
    ackTick: tick,
    lateTicks: 0,
    stage: 1,
    wave: 0,
    players: [ship(1, 0, 0), ship(2, at.x, at.y)],
    enemies: [],
    boss: null,
  };
}

/** Where the remote ship is on `tick`: right at 4 px a tick, then (from tick 300) down. */
function path(tick: number): { x: number; y: number } {
  return tick < 300 ? { x: 100 + 4 * tick, y: 500 } : { x: 1300, y: 500 + 4 * (tick - 300) };
}

Deno.test("sample() extrapolates past the newest snapshot for at most 250 ms, then holds", () => {
  const snaps = [snap(90, path(90)), snap(93, path(93))];
  const ahead = sample(snaps, { id: 2, tick: 93 + 6 })!;
  assert.deepEqual(ahead, path(99));
  const far = sample(snaps, { id: 2, tick: 93 + 60 })!;
  assert.deepEqual(far, path(93 + REMOTE_VIEW.maxExtrapolateTicks));
  assert.deepEqual(sample(snaps, { id: 2, tick: 91 }), path(91), "between two: interpolated");
});

/**
 * Plays a ship's snapshots through a link (one-way delay ± jitter, order kept, and
 * optional stalls) and draws it at 60 frames/s: the largest step between two frames.
 */
function play(opts: { jitterMs: number; stalls: boolean; seed: number }) {
  const rng = new Rng(opts.seed);
  const view = new RemoteView();
  const arrivals: { atMs: number; msg: SnapshotMsg }[] = [];
  let last = 0;
  for (let tick = 0; tick < 600; tick += TICKS_PER_SNAPSHOT) {
    let at = tick * TICK_MS + 150 + rng.range(-opts.jitterMs, opts.jitterMs);
    // A 250 ms stall around the turn at tick 300 (5 s): nothing arrives during it.
    if (opts.stalls && at >= 4950 && at < 5200) at = 5200;
    last = Math.max(last, at);
    arrivals.push({ atMs: last, msg: snap(tick, path(tick)) });
  }
  const snaps: SnapshotMsg[] = [];
  let maxStep = 0;
  let prev: { x: number; y: number } | undefined;
  for (let now = 0; now < 600 * TICK_MS; now += FRAME_MS) {
    while (arrivals.length > 0 && arrivals[0].atMs <= now) {
      const a = arrivals.shift()!;
      snaps.push(a.msg);
      view.arrived(a.msg.tick, a.atMs);
    }
    const [ship] = view.ships(snaps, { nowMs: now, selfId: 1 });
    if (!ship) continue;
    if (prev) maxStep = Math.max(maxStep, Math.hypot(ship.x - prev.x, ship.y - prev.y));
    prev = ship;
  }
  return { maxStep, delayTicks: view.delayTicks };
}

Deno.test("a remote ship turning during a stall blends back without a jump", () => {
  for (const seed of [1, 2, 3]) {
    const { maxStep } = play({ jitterMs: 50, stalls: true, seed });
    console.log(`seed ${seed}: largest step ${maxStep.toFixed(1)} px (the ship moves 4 px a tick)`);
    assert.ok(maxStep <= 16, `seed ${seed}: a step of ${maxStep} px`);
  }
});

Deno.test("the interpolation delay follows the measured jitter", () => {
  const calm = play({ jitterMs: 0, stalls: false, seed: 1 });
  const jittery = play({ jitterMs: 50, stalls: false, seed: 1 });
  console.log(
    `delay: ${calm.delayTicks.toFixed(1)} ticks without jitter, ` +
      `${jittery.delayTicks.toFixed(1)} at ±50 ms`,
  );
  assert.ok(Math.abs(calm.delayTicks - REMOTE_VIEW.minDelayTicks) < 1e-6);
  assert.ok(jittery.delayTicks > calm.delayTicks + 2, "more jitter, more delay");
  assert.ok(calm.maxStep <= 4.01 && jittery.maxStep <= 8, "smooth either way");
});

Deno.test("lastShown() is where a ship was drawn on a recent frame, and nothing once that is stale", () => {
  const view = new RemoteView();
  const snaps = [snap(90, path(90)), snap(93, path(93))];
  view.arrived(90, 90 * TICK_MS);
  view.arrived(93, 93 * TICK_MS);
  const nowMs = 96 * TICK_MS;
  assert.equal(view.lastShown(2, nowMs), undefined, "not drawn yet");
  const drawn = view.ships(snaps, { nowMs, selfId: 1 }).find((s) => s.id === 2)!;
  const shown = view.lastShown(2, nowMs + FRAME_MS);
  assert.deepEqual(shown && [shown.x, shown.y], [drawn.x, drawn.y], "a frame later: that place");
  assert.equal(view.lastShown(1, nowMs), undefined, "the local ship is never drawn here");
  const stale = nowMs + REMOTE_VIEW.shownFreshMs + 1;
  assert.equal(view.lastShown(2, stale), undefined, "not drawn for a while: nowhere");
});
