/**
 * Fault isolation, in process on a ManualClock: an instance that throws (here, a
 * content bug the codec refuses to encode) is closed on its own, its players are
 * evacuated to the hub with a reason, it is logged with its id and counted, and
 * every other instance keeps its tick rate. A loop step that throws costs a tick,
 * never the loop.
 */
import assert from "node:assert/strict";
import { FOLD, HUB, SPINNER } from "../../../content/mod.ts";
import { ManualClock } from "../../../net/server/scheduler.ts";
import { FixedStepScheduler } from "../../../net/server/scheduler.ts";
import { EnterReason } from "../../../net/wire/protocol.ts";
import type { WorldDef } from "../../../sim/mod.ts";
import { type Control, IDLE, NetHarness, type SimClient, toPortal } from "../_harness.ts";

/** A spinner whose ring flies at 120.1 px/s: off the wire's 1/4 px/s grid, so encoding throws. */
const OFF_GRID_SPINNER = {
  ...SPINNER,
  emitters: [{ ...SPINNER.emitters[0], speedPxPerS: 120.1, startDelayTicks: 30 }],
};

/** A dungeon that throws as soon as its one spinner fires (about 0.5 s in). */
const BROKEN: WorldDef = {
  ...FOLD,
  waves: [[{ enemy: OFF_GRID_SPINNER, x: 640, y: 300 }]],
  waveDelayTicks: 1,
};

/** A dungeon where nothing happens, so healthy players stay put. */
const CALM: WorldDef = { ...FOLD, waveDelayTicks: 1_000_000 };

/** A hub with nowhere to put a ship: taking a player throws. */
const BROKEN_HUB: WorldDef = { ...HUB, arena: { ...HUB.arena, spawnPoints: [] } };

interface LogLine {
  readonly event: string;
  readonly fields: Record<string, unknown>;
}

function snapshotsOf(c: SimClient): number {
  return c.transport.sent.filter((s) => s.latest).length;
}

function lastEnter(c: SimClient) {
  return c.enters.at(-1)?.value;
}

Deno.test("a dungeon that throws is closed alone: its player is evacuated to the hub, the others play on", () => {
  const logs: LogLine[] = [];
  using h = new NetHarness({
    limits: { maxPlayersPerDungeon: 1 },
    worldDef: (kind, id) => kind === "hub" ? HUB : id === "dungeon-2" ? BROKEN : CALM,
    log: (event, fields) => logs.push({ event, fields }),
  });
  // Into a dungeon once; back in the hub after an evacuation, stand still.
  const control: Control = (tick, c) =>
    c.enters.some((e) => e.value.reason === EnterReason.Evacuated) ? IDLE : toPortal(tick, c);
  const players = ["Ann", "Bo", "Cy"].map((name) => h.connect(name, { control }));
  h.runUntil(
    () => players.every((c) => c.enters.some((e) => e.value.reason === EnterReason.Portal)),
    {
      maxMs: 5000,
      what: "three players through the portal",
    },
  );
  const victim = players.find((c) => c.enters.some((e) => e.value.instanceId === "dungeon-2"));
  assert.ok(victim, "someone entered dungeon-2");
  const others = players.filter((c) => c !== victim);

  h.runUntil(() => lastEnter(victim)?.reason === EnterReason.Evacuated, {
    maxMs: 3000,
    what: "the victim to be evacuated",
  });
  assert.equal(lastEnter(victim)?.instanceId, "hub");
  assert.equal(victim.runtime.instanceId, "hub");
  assert.equal(victim.closed, undefined, "the victim stays connected");
  assert.equal(h.server.instances.has("dungeon-2"), false, "the broken dungeon is gone");
  assert.equal(h.server.counters.instancesFailed.dungeon, 1);
  assert.equal(h.server.counters.instancesFailed.hub, 0);
  const failed = logs.filter((l) => l.event === "instance_failed");
  assert.equal(failed.length, 1);
  assert.equal(failed[0].fields.instance, "dungeon-2");
  assert.equal(failed[0].fields.during, "step");
  assert.match(String(failed[0].fields.error), /Cannot encode volley speedPxPerS: 120\.1/);

  // Everyone plays on at the full rate: 60 ticks and 20 snapshots a second for each.
  const ticks = h.ticks;
  const before = players.map(snapshotsOf);
  h.pump(2000);
  assert.ok(h.ticks - ticks >= 119 && h.ticks - ticks <= 121, `${h.ticks - ticks} ticks in 2 s`);
  for (const [i, c] of players.entries()) {
    const got = snapshotsOf(c) - before[i];
    assert.ok(got >= 39 && got <= 41, `${c.name} got ${got} snapshots in 2 s`);
    assert.equal(c.closed, undefined);
  }
  for (const c of others) {
    assert.ok(c.runtime.instanceId.startsWith("dungeon-"), `${c.name} is still in a dungeon`);
    assert.ok(h.server.instances.get(c.runtime.instanceId)?.has(c.runtime.playerId));
  }
  assert.equal(h.server.hub.size, 1, "only the victim is in the hub");
  assert.equal(h.server.playerCount, 3);
});

Deno.test("a hub that throws while taking a player is replaced; the player lands in the new one", () => {
  const logs: LogLine[] = [];
  let hubsMade = 0;
  using h = new NetHarness({
    worldDef: (kind) => kind === "hub" ? (hubsMade++ === 0 ? BROKEN_HUB : HUB) : CALM,
    log: (event, fields) => logs.push({ event, fields }),
  });
  const a = h.connect("Ann");
  h.runUntil(() => lastEnter(a) !== undefined, { maxMs: 1000, what: "Ann placed" });
  const b = h.connect("Bo");
  h.runUntil(() => lastEnter(b) !== undefined, { maxMs: 1000, what: "Bo placed" });
  assert.deepEqual(a.enters.map((e) => e.value.reason), [EnterReason.Evacuated]);
  assert.deepEqual(b.enters.map((e) => e.value.reason), [EnterReason.Join]);
  assert.equal(hubsMade, 2, "one replacement hub");
  assert.equal(h.server.counters.instancesFailed.hub, 1);
  const failed = logs.filter((l) => l.event === "instance_failed");
  assert.deepEqual(failed.map((l) => [l.fields.instance, l.fields.during]), [["hub", "join"]]);
  const before = [a, b].map(snapshotsOf);
  h.pump(1000);
  for (const [i, c] of [a, b].entries()) {
    assert.ok(snapshotsOf(c) - before[i] >= 19, `${c.name} gets snapshots in the new hub`);
    assert.equal(c.runtime.world?.kind, "hub");
    assert.equal(c.closed, undefined);
  }
  assert.equal(h.server.hub.size, 2);
});

Deno.test("a loop step that throws costs that tick, never the loop", () => {
  const clock = new ManualClock();
  const errors: unknown[] = [];
  let calls = 0;
  const scheduler = new FixedStepScheduler(clock, {
    step: (tick) => {
      calls++;
      if (tick === 10 || tick === 11) throw new Error(`boom on ${tick}`);
    },
    maxCatchUpTicks: 5,
    onError: (err) => errors.push(err),
  });
  scheduler.start();
  clock.advance(1000);
  scheduler.stop();
  assert.ok(calls >= 59 && calls <= 60, `${calls} steps in 1 s`);
  assert.equal(scheduler.stats.stepErrors, 2);
  assert.deepEqual(errors.map((e) => (e as Error).message), ["boom on 10", "boom on 11"]);
  assert.equal(clock.pending, 0, "stopped cleanly");
});
