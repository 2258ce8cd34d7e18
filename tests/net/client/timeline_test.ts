/**
 * One timeline for what can hurt you or be hit by you, end to end: the real server
 * and a ClientRuntime through the link simulator at 150 ± 50 ms each way, on a
 * ManualClock. Own shots appear at the muzzle on the tick their input is sampled and
 * are matched to the server's volleys once each; enemies are drawn on the present
 * tick where the server will have them; a frame that misses its tick is reported
 * and the client's lead grows to cover it.
 */
import assert from "node:assert/strict";
import { Button, quantizeAngle, Team } from "../../../sim/mod.ts";
import { PLAYER } from "../../../content/mod.ts";
import { LATE_INPUT, LEAD_TRIM } from "../../../content/net_tuning.ts";
import { ServerKind, type SnapshotWireMsg } from "../../../net/wire/protocol.ts";
import { dist, IDLE, type LinkOptions, NetHarness, type SimClient, toPortal } from "../_harness.ts";

const FAR: LinkOptions = { spec: "150±50" };
/** Uids of predicted shots count down from the top of the u32 range. */
const PREDICTED_UID_FLOOR = 0x80000000;

function inDungeon(c: SimClient): boolean {
  return c.runtime.world?.kind === "dungeon" && c.runtime.selfSnapshot() !== undefined;
}

/** A client that walks into the dungeon and waits there, standing still. */
function inTheDungeon(h: NetHarness): SimClient {
  const c = h.connect("Pilot", {
    control: (tick, c) => (c.runtime.world?.kind === "dungeon" ? IDLE : toPortal(tick, c)),
  });
  h.runUntil(() => inDungeon(c), { maxMs: 20_000, what: "the dungeon" });
  h.pump(1000);
  return c;
}

/** Own shots in the replica: uid and position. */
function ownShots(c: SimClient): { uid: number; x: number; y: number }[] {
  const pool = c.runtime.replica;
  const out = [];
  for (let i = 0; i < pool.count; i++) {
    if (pool.team[i] === Team.Player && pool.owner[i] === c.runtime.playerId) {
      out.push({ uid: pool.uid[i], x: pool.x[i], y: pool.y[i] });
    }
  }
  return out;
}

Deno.test("at 150 ± 50 ms a shot is at the muzzle on the tick its input is sampled, then matched once", () => {
  using h = new NetHarness({ seed: 3, link: FAR });
  const c = inTheDungeon(h);
  const fired: number[] = [];
  c.control = (tick) => {
    fired.push(tick);
    return { ...IDLE, aim: quantizeAngle(-Math.PI / 2), buttons: Button.Fire };
  };
  // The first pump step that samples Fire predicts the shot: look at once.
  let muzzle = Infinity;
  while (fired.length === 0) {
    h.step();
    const me = c.runtime.selfView()!;
    for (const s of ownShots(c)) muzzle = Math.min(muzzle, dist(s, me));
  }
  assert.ok(ownShots(c).length >= 1, "drawn on the step that sampled the fire input");
  assert.ok(muzzle <= 0.1, `${muzzle} px from the ship`);

  // A second of fire, then a second for the server's word on every shot.
  let closest = Infinity;
  for (let ms = 0; ms < 2000; ms += 2) {
    if (ms === 1000) c.control = () => IDLE;
    h.step();
    const shots = ownShots(c);
    for (let i = 0; i < shots.length; i++) {
      for (let k = i + 1; k < shots.length; k++) {
        closest = Math.min(closest, dist(shots[i], shots[k]));
      }
    }
  }
  const notes = c.ownShots.map((n) => n.value);
  const predicted = notes.filter((n) => n.outcome === "predicted").length;
  const confirmed = notes.filter((n) => n.outcome === "confirmed").length;
  const refused = notes.filter((n) => n.outcome === "refused").length;
  console.log(
    `${predicted} shots predicted, ${confirmed} matched to the server's volleys, ` +
      `${refused} taken back; closest two own shots ${closest.toFixed(1)} px apart`,
  );
  assert.ok(predicted >= 9, `${predicted} shots in a second of fire`);
  assert.equal(confirmed, predicted, "every one fired by the server too");
  assert.equal(refused, 0);
  assert.ok(closest > 10, "never one shot drawn twice");
  assert.ok(ownShots(c).every((s) => s.uid < PREDICTED_UID_FLOOR), "all carry server uids");
});

Deno.test("at 150 ± 50 ms enemies are drawn on the present tick where the server has them", () => {
  using h = new NetHarness({ seed: 5, link: FAR });
  const c = inTheDungeon(h);
  // Weave while the first wave comes on, so chasers have a moving target.
  c.control = (tick) => ({ ...IDLE, moveX: tick % 90 < 45 ? 60 : -60, moveY: 0 });
  const drawn = new Map<number, Map<number, { x: number; y: number; kind: number }>>();
  const errors: number[] = [];
  const instance = () => h.server.instances.get(c.runtime.instanceId);
  for (let ms = 0; ms < 5000; ms += 2) {
    h.step();
    const tick = c.runtime.replicaTick;
    if (!drawn.has(tick)) {
      drawn.set(
        tick,
        new Map(c.runtime.enemies().map((e) => [e.id, { x: e.x, y: e.y, kind: e.kind }])),
      );
    }
    // Once the server has run that tick, compare what was drawn for it.
    const world = instance()?.world;
    if (!world) continue;
    const done = drawn.get(world.tick - 1);
    if (!done || done.size === 0) continue;
    drawn.delete(world.tick - 1);
    const me = world.players.get(c.runtime.playerId)!;
    for (const e of world.enemies) {
      const d = done.get(e.id);
      if (!d || e.def.movement.type !== "chase") continue;
      // A chaser sitting on the ship turns on a sixteenth of a pixel (the snapshot's
      // grid): it is on the ship either way. Judge the chase, not the huddle.
      if (dist(e, me) < e.def.radiusPx + PLAYER.radiusPx + 8) continue;
      errors.push(Math.hypot(d.x - e.x, d.y - e.y));
    }
  }
  errors.sort((a, b) => a - b);
  const p50 = errors[Math.floor(errors.length / 2)];
  const max = errors[errors.length - 1];
  console.log(
    `${errors.length} chaser positions drawn ${c.runtime.stats.leadTicks} ticks ahead of ` +
      `the newest snapshot: median ${p50.toFixed(2)} px, max ${
        max.toFixed(2)
      } px from the server's`,
  );
  assert.ok(errors.length > 100, "chasers were drawn and judged");
  assert.ok(max < 1, `a chaser drawn ${max} px from where the server had it`);
});

/** A pilot connected and standing in the hub for `ms` after its first snapshot. */
function settledPilot(h: NetHarness, ms: number): SimClient {
  const c = h.connect("Pilot");
  h.runUntil(() => c.runtime.selfSnapshot() !== undefined, { what: "a first snapshot" });
  h.pump(ms);
  return c;
}

/** The snapshots a client has received, as they came off the wire. */
function wireSnapshots(c: SimClient): SnapshotWireMsg[] {
  return c.transport.messages()
    .filter((m): m is SnapshotWireMsg => m.kind === ServerKind.Snapshot);
}

Deno.test("a frame that misses its tick is reported in a snapshot, and the lead grows to cover it", () => {
  using h = new NetHarness({ seed: 8, link: { spec: "50" } });
  const c = settledPilot(h, 2000);
  const leadBefore = c.runtime.inputLeadTicks;
  // The upward path stalls for 300 ms: frames reach the server after their ticks ran.
  c.link.sim!.up.cut(h.clock.now(), 300);
  h.pump(1000);
  const reports = wireSnapshots(c).map((m) => m.lateTicks);
  const late = Math.max(...reports);
  h.pump(3000);
  const leadAfter = c.runtime.inputLeadTicks;
  console.log(
    `reported ${late} ticks late; input lead ${leadBefore.toFixed(1)} → ${leadAfter.toFixed(1)}`,
  );
  assert.ok(late >= 10, `the server reported frames ${late} ticks late`);
  const cover = Math.min(late, LATE_INPUT.maxTicks);
  assert.ok(leadAfter >= leadBefore + cover - 0.5, `the lead grew by ${cover} ticks at least`);
});

Deno.test("on a link whose way up is quick and steady, the lead comes down to what its frames need", () => {
  // The round trip (40 + 150 ± 60 ms) says a 13-tick lead; the way up needs under 3.
  using h = new NetHarness({ seed: 3, link: { spec: "up=40±5,down=150±60" } });
  const c = settledPilot(h, 3000);
  const leadBefore = c.runtime.inputLeadTicks;
  // Two windows of slack: the first one's least includes the arrival's settling.
  h.pump(2 * LEAD_TRIM.windowMs + 10_000);
  const leadAfter = c.runtime.inputLeadTicks;
  const snapshots = wireSnapshots(c);
  const slack = snapshots.map((m) => m.slackTicks).filter((s) => s !== undefined);
  const late = Math.max(...snapshots.map((m) => m.lateTicks));
  const tail = slack.slice(-100);
  console.log(
    `input lead ${leadBefore.toFixed(1)} → ${leadAfter.toFixed(1)} ticks; ` +
      `slack reported ${slack.length} times, the last 100 from ${Math.min(...tail)} to ` +
      `${Math.max(...tail)}; most late ${late}`,
  );
  assert.ok(slack.length > 100, "the server reported how early frames came");
  assert.ok(leadAfter < leadBefore - 4, `the lead came down by ${leadBefore - leadAfter}`);
  assert.ok(Math.min(...tail) >= 1, "frames still arrive with time to spare");
  assert.equal(late, 0, "and none missed its tick");
});
