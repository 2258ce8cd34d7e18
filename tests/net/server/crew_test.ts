/**
 * Results and "again with this crew", in process on a ManualClock: a run's end sends
 * every member the same results (wherever they wait), "again" regroups the crew in
 * one new dungeon the portal does not fill with strangers, "hub" leaves, and an
 * answer with no open offer changes nothing.
 */
import assert from "node:assert/strict";
import { CONTENT, HUB, PLAYER, WARDEN } from "../../../content/mod.ts";
import { TRANSFER_DELAYS } from "../../../content/net_tuning.ts";
import { Instance, type Peer } from "../../../net/server/instance.ts";
import { MessageEncoder } from "../../../net/wire/codec.ts";
import { Choice, EnterReason, Outcome, RunStatusCode } from "../../../net/wire/protocol.ts";
import { Button, quantizeAngle, TELEGRAPH_STYLES, type WorldDef } from "../../../sim/mod.ts";
import { type Control, dist, IDLE, NetHarness, type SimClient, steerTo } from "../_harness.ts";

const toPortal: Control = (_tick, c) => {
  const portal = c.runtime.world?.portals[0];
  const me = c.runtime.selfView();
  return portal && me ? steerTo(me, portal) : IDLE;
};

/** Into the dungeon, then straight at the nearest enemy until something kills us. */
const toPortalThenCharge = (h: NetHarness): Control => (tick, c) => {
  if (c.runtime.world?.kind !== "dungeon") return toPortal(tick, c);
  const me = c.runtime.selfView();
  if (!me) return IDLE;
  const [nearest] = c.runtime.enemies(h.clock.now()).sort((a, b) => dist(a, me) - dist(b, me));
  return nearest ? steerTo(me, nearest) : IDLE;
};

function inDungeon(c: SimClient): boolean {
  return c.runtime.instanceId.startsWith("dungeon-");
}

Deno.test("a wipe sends results to the whole crew, and 'again' regroups it in a new dungeon", () => {
  using h = new NetHarness();
  const charge = toPortalThenCharge(h);
  const [a, b] = ["Ann", "Bo"].map((name) => h.connect(name, { control: charge }));
  h.runUntil(() => inDungeon(a) && inDungeon(b), { maxMs: 5000, what: "both in a dungeon" });
  const first = a.runtime.instanceId;
  assert.equal(b.runtime.instanceId, first);

  h.runUntil(() => a.results.length > 0 && b.results.length > 0, {
    maxMs: 90_000,
    what: "results after the wipe",
  });
  for (const c of [a, b]) {
    assert.equal(c.results.length, 1, "one results screen per run");
    const r = c.results[0].value;
    assert.equal(r.outcome, Outcome.Wiped);
    assert.deepEqual(r.rows.map((row) => row.name).sort(), ["Ann", "Bo"]);
    for (const row of r.rows) {
      assert.equal(row.status, RunStatusCode.dead);
      assert.ok(row.hitsTaken >= PLAYER.maxHp, `${row.name} took ${row.hitsTaken} hits`);
    }
    assert.ok(r.durationTicks > 0);
  }
  // Whoever fell first is back in the hub by now, and still got the offer.
  h.runTicks(TRANSFER_DELAYS.deathReturnTicks + 2);
  assert.deepEqual([a, b].map((c) => c.runtime.instanceId), ["hub", "hub"]);

  for (const c of [a, b]) c.control = () => IDLE;
  a.runtime.choose(Choice.Again);
  h.runUntil(() => a.enters.at(-1)!.value.reason === EnterReason.Retry, { what: "Ann's retry" });
  // A stranger walking into the portal meanwhile gets a dungeon of their own.
  const stranger = h.connect("Cy", { control: toPortal });
  h.runUntil(() => inDungeon(stranger), { maxMs: 5000, what: "the stranger in a dungeon" });
  b.runtime.choose(Choice.Again);
  h.runUntil(() => b.enters.at(-1)!.value.reason === EnterReason.Retry, { what: "Bo's retry" });

  const again = a.runtime.instanceId;
  assert.notEqual(again, first);
  assert.equal(b.runtime.instanceId, again, "the crew is together again");
  assert.notEqual(stranger.runtime.instanceId, again, "the crew's dungeon is the crew's");
  assert.deepEqual(b.enters.at(-1)!.value.roster.map((r) => r.name).sort(), ["Ann", "Bo"]);
  const instance = h.server.instances.get(again)!;
  assert.equal(instance.size, 2);
  assert.equal(instance.world.stage, "waves", "a fresh run");

  // The offer was answered: another "again" is no ticket to a third dungeon.
  a.runtime.choose(Choice.Again);
  h.runTicks(10);
  assert.equal(a.runtime.instanceId, again);
  assert.equal(a.closed, undefined, "an answer without an offer is no offence");
});

Deno.test("an answer with no run behind it is ignored: no move, no close", () => {
  using h = new NetHarness();
  const c = h.connect("Eve");
  h.runUntil(() => c.runtime.instanceId === "hub", { what: "the hub" });
  c.runtime.choose(Choice.Again);
  c.runtime.choose(Choice.Hub);
  h.runTicks(10);
  assert.equal(c.enters.length, 1);
  assert.equal(c.closed, undefined);
  assert.equal(h.server.instances.size, 1);
});

/** A Peer that keeps what it was sent. */
function peer(playerId: number, name: string): Peer & { sent: Uint8Array[] } {
  const sent: Uint8Array[] = [];
  return {
    playerId,
    name,
    sent,
    sendReliable: (d) => sent.push(d),
    sendLatest: (d) => (sent.push(d), true),
  };
}

function weakWardenRoom(): WorldDef {
  return {
    kind: "dungeon",
    name: "Test Room",
    arena: { widthPx: 1280, heightPx: 960, walls: [], spawnPoints: [{ x: 640, y: 300 }] },
    player: { ...PLAYER, maxHp: 255 }, // the most HP a snapshot carries (u8)
    portals: [],
    waves: [],
    waveDelayTicks: 1,
    boss: { ...WARDEN, baseHp: 40 },
  };
}

Deno.test("a cleared dungeon's results credit each shooter, once, with the run's length", () => {
  const instance = new Instance("dungeon-9", {
    worldId: 1,
    def: weakWardenRoom(),
    seed: 1,
    encoder: new MessageEncoder(),
  });
  instance.join(peer(1, "Ann"), EnterReason.Portal);
  instance.join(peer(2, "Bo"), EnterReason.Portal);
  const up = quantizeAngle(-Math.PI / 2);
  let results = undefined;
  let telegraphs = 0;
  for (let t = 0; t < 3000 && !results; t++) {
    const tick = instance.world.tick;
    for (const id of [1, 2]) {
      // Only Ann shoots.
      const buttons = id === 1 ? Button.Fire : 0;
      instance.offerInput(id, { tick, moveX: 0, moveY: 0, aim: up, buttons });
    }
    instance.step();
    results = instance.takeResults();
    if (instance.world.stage === "boss") telegraphs++;
  }
  assert.ok(results, "the boss fell");
  assert.equal(results.outcome, Outcome.Cleared);
  assert.equal(results.worldId, 1);
  assert.equal(results.durationTicks, instance.world.tick);
  const byName = new Map(results.rows.map((r) => [r.name, r]));
  assert.equal(byName.get("Ann")!.damageDealt, instance.world.boss!.maxHp);
  assert.equal(byName.get("Bo")!.damageDealt, 0);
  for (const r of results.rows) assert.equal(r.status, RunStatusCode.active);
  assert.equal(instance.takeResults(), undefined, "results are taken once");
  for (let t = 0; t < 120; t++) instance.step();
  assert.equal(instance.takeResults(), undefined, "a run ends once");
  assert.ok(telegraphs > 0);
});

Deno.test("telegraphs reach clients as events with their source, aim, lead and tick", () => {
  using h = new NetHarness();
  const charge = toPortalThenCharge(h);
  const c = h.connect("Gus", { control: charge });
  h.runUntil(() => c.events.some((e) => e.value.event.type === "telegraph"), {
    maxMs: 30_000,
    what: "a telegraph",
  });
  const t = c.events.find((e) => e.value.event.type === "telegraph")!.value.event;
  assert.equal(t.type, "telegraph");
  if (t.type !== "telegraph") return;
  assert.equal(t.source, "enemy");
  assert.ok(t.sourceId > 0);
  assert.equal(t.emitter, 0);
  assert.ok(TELEGRAPH_STYLES.includes(t.style));
  assert.ok(t.aim >= 0 && t.aim < 65536);
  assert.ok(t.leadTicks > 0);
  assert.ok(t.tick > 0);
});

Deno.test("'again' after a run in the second dungeon makes that dungeon again, not the first", () => {
  // The second portal's world; until the first results, its boss at 1 HP in its last
  // phase after a 2 s wait (no waves): a run that ships firing upwards from the spawn
  // point end soon. The crew's next run is the world as shipped.
  const second = HUB.portals[1].to;
  const weak = { on: true };
  using h = new NetHarness({
    worldDef: (kind, _id, world) => {
      if (kind !== "dungeon" || !world.boss || !weak.on) return world;
      const phases = world.boss.phases;
      const spawn = world.arena.spawnPoints[0];
      return {
        ...world,
        arena: { ...world.arena, spawnPoints: [spawn] },
        player: { ...world.player, maxHp: 255 }, // nobody dies before the boss does
        waves: [],
        waveDelayTicks: 120,
        boss: {
          ...world.boss,
          x: spawn.x,
          y: spawn.y - 200,
          baseHp: 1,
          phases: [phases[phases.length - 1]],
        },
      };
    },
  });
  // Into the second portal, then fire straight up at the boss from the spawn point.
  const toSecond: Control = (_tick, c) => {
    const me = c.runtime.selfView();
    if (!me) return IDLE;
    if (c.runtime.world?.kind === "hub") return steerTo(me, c.runtime.world.portals[1]);
    return { ...IDLE, aim: quantizeAngle(-Math.PI / 2), buttons: Button.Fire };
  };
  const [a, b] = ["Ann", "Bo"].map((name) => h.connect(name, { control: toSecond }));
  h.runUntil(() => a.results.length > 0 && b.results.length > 0, {
    maxMs: 60_000,
    what: "results of the second dungeon's run",
  });
  weak.on = false;
  const first = a.enters.find((e) => e.value.reason === EnterReason.Portal)!.value;
  assert.equal(
    b.enters.find((e) => e.value.reason === EnterReason.Portal)?.value.instanceId,
    first.instanceId,
    "one crew",
  );
  assert.equal(CONTENT.worlds[first.worldId].key, second, "the run was in the second dungeon");
  assert.equal(a.results[0].value.worldId, first.worldId);
  assert.equal(a.results[0].value.outcome, Outcome.Cleared);
  for (const c of [a, b]) c.control = () => IDLE;
  a.runtime.choose(Choice.Again);
  b.runtime.choose(Choice.Again);
  h.runUntil(
    () => [a, b].every((c) => c.enters.at(-1)!.value.reason === EnterReason.Retry),
    { what: "both back in a run" },
  );
  const again = a.enters.at(-1)!.value;
  assert.equal(CONTENT.worlds[again.worldId].key, second, "the same world again");
  assert.equal(b.enters.at(-1)!.value.instanceId, again.instanceId, "together");
  assert.notEqual(again.instanceId, first.instanceId, "a fresh run");
  assert.equal(h.server.instances.get(again.instanceId)?.worldKey, second);
});
