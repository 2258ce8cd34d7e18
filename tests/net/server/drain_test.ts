/**
 * Drain before a restart, in process on a ManualClock: from drain() on, a run in
 * progress plays on to its end while new players, portal entries and "again" are
 * refused; everyone is told with a Notice; /healthz says 503; a dropped player may
 * still resume into its run. main.ts waits for runsInProgress to reach 0 (the e2e
 * shutdown test runs the real process).
 */
import assert from "node:assert/strict";
import { WARDEN } from "../../../content/mod.ts";
import { health, renderMetrics } from "../../../net/server/metrics.ts";
import {
  Choice,
  CloseCode,
  EnterReason,
  NoticeCode,
  Outcome,
  ServerKind,
} from "../../../net/wire/protocol.ts";
import { Button, quantizeAngle, type WorldDef } from "../../../sim/mod.ts";
import { type Control, IDLE, NetHarness, type SimClient, toPortal } from "../_harness.ts";

/** Dungeons that open on a weak Warden, with their spawn points right under it. */
function weakBoss(kind: "hub" | "dungeon", _id: string, world: WorldDef): WorldDef {
  if (kind === "hub") return world;
  const { x } = world.arena.spawnPoints[0];
  return {
    ...world,
    arena: { ...world.arena, spawnPoints: [{ x: world.arena.widthPx / 2, y: 300 }, { x, y: 300 }] },
    player: { ...world.player, maxHp: 255 },
    waves: [],
    waveDelayTicks: 1,
    boss: { ...WARDEN, baseHp: 30 },
  };
}

const UP = quantizeAngle(-Math.PI / 2);
const fireUp: Control = () => ({ moveX: 0, moveY: 0, aim: UP, buttons: Button.Fire });

function notices(c: SimClient, code: NoticeCode) {
  return c.transport.messages().filter((m) => m.kind === ServerKind.Notice && m.code === code);
}

/** A harness and one player in a boss fight, not firing (yet). */
function inBossFight() {
  const h = new NetHarness({ worldDef: weakBoss });
  const fighter = h.connect("Ann", { control: toPortal });
  h.runUntil(() => fighter.runtime.world?.kind === "dungeon" && fighter.runtime.boss() !== null, {
    maxMs: 8000,
    what: "Ann in a boss fight",
  });
  fighter.control = () => IDLE;
  return { h, fighter };
}

Deno.test("draining: the run in progress plays on to its end; new players, portals and 'again' are refused", () => {
  const { h, fighter } = inBossFight();
  using _h = h;
  const idler = h.connect("Bo");
  h.runUntil(() => idler.runtime.instanceId === "hub", { what: "Bo in the hub" });
  const dungeon = fighter.runtime.instanceId;
  assert.equal(h.server.runsInProgress, 1);
  assert.equal(health(h.server).ok, true);

  h.server.drain();
  h.pump(100);
  assert.equal(h.server.draining, true);
  for (const c of [fighter, idler]) {
    const [n] = notices(c, NoticeCode.Draining);
    assert.ok(n?.kind === ServerKind.Notice, `${c.name} was told`);
    assert.match(n.text, /restarts soon: runs in progress play on/);
  }
  const h0 = health(h.server);
  assert.deepEqual([h0.ok, h0.draining, h0.runsInProgress], [false, true, 1], "503 while draining");
  assert.match(renderMetrics(h.server), /^bh_draining(\{[^}]*\})? 1$/m);
  assert.match(renderMetrics(h.server), /^bh_runs_in_progress(\{[^}]*\})? 1$/m);

  // A new player is refused with the restart's code and a reason to read.
  const late = h.connect("Cy");
  h.pump(200);
  assert.equal(late.closed?.code, CloseCode.ServerRestarting);
  assert.match(late.closed!.reason, /no new games here now/);
  assert.equal(h.server.counters.refusals.draining, 1);
  assert.equal(h.server.playerCount, 2, "Ann and Bo play on");

  // The hub's portal does not open: Bo stays in the hub, told why; no dungeon is made.
  const created = h.server.counters.instancesCreated;
  idler.control = toPortal;
  h.runUntil(() => h.server.counters.portalRefusals > 0, { maxMs: 5000, what: "Bo at the portal" });
  idler.control = () => IDLE;
  h.pump(200);
  assert.equal(idler.runtime.instanceId, "hub");
  const refused = idler.events.find((e) => e.value.event.type === "portalRefused");
  assert.ok(refused, "Bo heard why the portal did not open");
  assert.equal(h.server.counters.instancesCreated, created, "no new dungeon");

  // The fight goes on to the boss's fall; then no run is in progress.
  fighter.control = fireUp;
  h.runUntil(() => fighter.results.length > 0, { maxMs: 20_000, what: "the Warden's fall" });
  assert.equal(fighter.results[0].value.outcome, Outcome.Cleared);
  assert.equal(fighter.runtime.instanceId, dungeon, "on the results screen, in its dungeon");
  assert.equal(h.server.runsInProgress, 0, "main.ts may restart now");

  // "Again" would start a run: it is "back to the hub" while draining.
  fighter.control = () => IDLE;
  fighter.runtime.choose(Choice.Again);
  h.runUntil(() => fighter.runtime.instanceId === "hub", { maxMs: 1000, what: "back in the hub" });
  assert.equal(fighter.enters.at(-1)!.value.reason, EnterReason.Return);
  assert.equal(h.server.counters.instancesCreated, created, "still no new dungeon");
  assert.deepEqual([...h.server.instances.values()].map((i) => i.kind), ["hub"]);
});

Deno.test("draining: a player whose link drops mid-run still resumes into it, and is told again", () => {
  const { h, fighter } = inBossFight();
  using _h = h;
  const dungeon = fighter.runtime.instanceId;
  h.server.drain();
  h.pump(100);
  fighter.link.kill();
  fighter.conn.closed("1006", "socket error");
  h.pump(1000);
  assert.equal(h.server.runsInProgress, 1, "a run whose only player is away is still on");
  h.reconnect(fighter);
  h.runUntil(() => fighter.enters.at(-1)?.value.reason === EnterReason.Resume, {
    maxMs: 1000,
    what: "the resume",
  });
  assert.equal(fighter.runtime.instanceId, dungeon);
  assert.equal(h.server.counters.resumes, 1);
  assert.equal(notices(fighter, NoticeCode.Draining).length, 1, "the new connection was told");
});

Deno.test("draining with nobody in a run: nothing to wait for", () => {
  using h = new NetHarness();
  const c = h.connect("Dee");
  h.runUntil(() => c.runtime.instanceId === "hub", { what: "the hub" });
  h.server.drain();
  assert.equal(h.server.runsInProgress, 0);
  h.server.drain(); // a second signal's drain() changes nothing
  h.pump(100);
  assert.equal(notices(c, NoticeCode.Draining).length, 1, "told once");
});
