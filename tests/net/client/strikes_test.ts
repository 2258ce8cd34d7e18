/**
 * Hits felt as they are seen: the ledger of strikes (a player shot vanishing on an enemy
 * as drawn) that the server's hits claim, unit by unit, then end to end with the real
 * server and a ClientRuntime fighting through the link simulator at 150 ± 50 ms: the
 * hits the server lands were nearly all felt when the shot vanished, a lead and a trip
 * before the server's word arrived, and the enemies they killed were gone by then.
 */
import assert from "node:assert/strict";
import { StrikeLedger } from "../../../net/client/strikes.ts";
import { CONTENT } from "../../../content/mod.ts";
import { STRIKE_CLAIM_MS } from "../../../content/net_tuning.ts";
import { HitTarget } from "../../../sim/mod.ts";
import { think } from "../../../sim/pilot.ts";
import { IDLE, NetHarness, type SimClient, toPortal } from "../_harness.ts";

Deno.test("a hit claims the oldest strike on its enemy within the window, and only one", () => {
  const ledger = new StrikeLedger({ claimMs: 1000 });
  ledger.struck(3, { atMs: 100, damage: 1 });
  ledger.struck(3, { atMs: 150, damage: 1 });
  ledger.struck(4, { atMs: 160, damage: 1 });
  assert.equal(ledger.claim(3, 600), 100, "the oldest strike on enemy 3");
  assert.equal(ledger.claim(3, 650), 150, "then the next");
  assert.equal(ledger.claim(3, 700), undefined, "no third: that hit was not felt");
  assert.equal(ledger.claim(5, 700), undefined, "nothing struck enemy 5");
  assert.equal(ledger.claim(4, 1100), 160, "940 ms on: still within the window");
  assert.equal(ledger.unclaimedTotal, 0);
});

Deno.test("a strike no hit claims in time is counted unclaimed; one on an enemy that died, overkill", () => {
  const ledger = new StrikeLedger({ claimMs: 1000 });
  ledger.struck(3, { atMs: 100, damage: 1 });
  ledger.struck(3, { atMs: 900, damage: 1 });
  ledger.struck(7, { atMs: 950, damage: 1 });
  assert.equal(ledger.claim(3, 1200), 900, "the strike at 100 is too old to be this hit's");
  assert.equal(ledger.unclaimedTotal, 1);
  ledger.killed(7);
  assert.equal(ledger.overkillTotal, 1, "enemy 7 died of earlier hits: the strike came after");
  assert.equal(ledger.claim(7, 1300), undefined);
  ledger.struck(8, { atMs: 2000, damage: 1 });
  ledger.expire(3500);
  assert.equal(ledger.unclaimedTotal, 2, "expired with no hit");
  ledger.struck(9, { atMs: 4000, damage: 1 });
  ledger.clear();
  assert.equal(ledger.unclaimedTotal, 3, "a new instance: its strikes are nobody's");
  assert.equal(ledger.claim(9, 4100), undefined);
});

Deno.test("the damage of the strikes still waiting says what is left of an enemy", () => {
  const ledger = new StrikeLedger({ claimMs: 1000 });
  assert.ok(ledger.empty);
  ledger.struck(3, { atMs: 100, damage: 1 });
  ledger.struck(3, { atMs: 120, damage: 2 });
  assert.equal(ledger.pendingDamage(3), 3);
  assert.equal(ledger.pendingDamage(4), 0);
  ledger.claim(3, 400);
  assert.equal(ledger.pendingDamage(3), 2, "the claimed one is in the next snapshot's HP");
  ledger.expire(1500);
  assert.equal(ledger.pendingDamage(3), 0, "expired unclaimed: the enemy was not hurt");
  assert.ok(ledger.empty);
});

Deno.test("at 150 ± 50 ms the hits a player lands are felt, and its kills seen, as the shots vanish, not when the server's word comes", () => {
  using h = new NetHarness({ seed: 2, link: { spec: "150±50" } });
  const inDungeon = (c: SimClient) =>
    c.runtime.world?.kind === "dungeon" && c.runtime.selfSnapshot() !== undefined;
  // The shared pilot brain, seeing only what the runtime draws: it fights the waves.
  const fight = (tick: number, c: SimClient) => {
    const rt = c.runtime;
    const self = rt.selfView();
    if (!inDungeon(c) || !rt.world || !self) return toPortal(tick, c);
    const now = h.clock.now();
    const targets = rt.enemies(now).map((e) => ({
      x: e.x,
      y: e.y,
      r: CONTENT.enemies[e.kind].radiusPx,
    }));
    const f = think({ self, arena: rt.world.arena, targets, bullets: rt.replica }, {
      tick,
      rangePx: 120,
    });
    return { ...IDLE, moveX: f.moveX, moveY: f.moveY, aim: f.aim, buttons: f.buttons };
  };
  const me = h.connect("Striker", { control: fight });
  h.runUntil(() => inDungeon(me), { maxMs: 30_000, what: "the dungeon" });
  // When each enemy was last drawn, frame by frame.
  const lastDrawnMs = new Map<number, number>();
  for (let ms = 0; ms < 30_000; ms += 16) {
    h.pump(16);
    for (const e of me.runtime.enemies(h.clock.now())) lastDrawnMs.set(e.id, h.clock.now());
  }
  const rt = me.runtime;
  const onEnemies = me.hits.filter((r) => r.value.hit.target === HitTarget.Enemy);
  const felt = onEnemies.filter((r) => r.value.info.feltAtMs !== undefined);
  // How long each felt hit was felt before the server's word reached the client.
  const early = felt.map((r) => r.atMs - r.value.info.feltAtMs!).sort((a, b) => a - b);
  const medianEarlyMs = early[early.length >> 1];
  console.log(
    `${onEnemies.length} hits on enemies, ${felt.length} felt as the shot vanished, a median ` +
      `${medianEarlyMs?.toFixed(0)} ms before the server's word; ${rt.strikesTotal} strikes, ` +
      `${rt.strikesUnclaimedTotal} unclaimed, ${rt.strikesOverkillTotal} on enemies already dead`,
  );
  assert.ok(onEnemies.length >= 40, `${onEnemies.length} hits in 30 s of fighting`);
  assert.ok(felt.length >= 0.8 * onEnemies.length, `${felt.length} of ${onEnemies.length} felt`);
  // A lead (~10 ticks here) and a trip down (~150 ms) at the least: the wait saved.
  assert.ok(medianEarlyMs >= 250, `felt a median ${medianEarlyMs} ms before the server said so`);
  assert.ok(early[0] >= 0 && early[early.length - 1] <= STRIKE_CLAIM_MS, "no hit felt after it");
  // An enemy the player's shots kill dies on their screen as the killing shot vanishes,
  // not when the server's word comes: no shot is wasted on it in between.
  const kills = me.events.filter((r) => r.value.event.type === "enemyKilled");
  const goneBefore = kills.map((r) => {
    const e = r.value.event as { enemyId: number };
    return r.atMs - (lastDrawnMs.get(e.enemyId) ?? r.atMs);
  }).sort((a, b) => a - b);
  const medianGoneMs = goneBefore[goneBefore.length >> 1];
  console.log(
    `${kills.length} kills: gone from the screen a median ${
      medianGoneMs.toFixed(0)
    } ms before the word`,
  );
  assert.ok(kills.length >= 5, `${kills.length} kills`);
  assert.ok(medianGoneMs >= 250, `gone ${medianGoneMs} ms before the server's word`);
  assert.ok(
    rt.strikesOverkillTotal <= 0.05 * rt.strikesTotal,
    `${rt.strikesOverkillTotal} of ${rt.strikesTotal} strikes on enemies already dead`,
  );
  // A strike the server never agreed with on a living enemy is a flash that lied: rare.
  assert.ok(
    rt.strikesUnclaimedTotal <= 0.05 * rt.strikesTotal,
    `${rt.strikesUnclaimedTotal} of ${rt.strikesTotal} strikes unclaimed`,
  );
});
