/** SimWorld: one tick at a time, the rules between ships, bullets, enemies and the boss. */
import assert from "node:assert/strict";
import {
  BulletPool,
  Button,
  fastForward,
  hashWorld,
  HitTarget,
  type InputFrame,
  type PlayerState,
  quantizeAngle,
  quantizePos,
  type SimEvent,
  SimWorld,
  spawnVolley,
  stepBullets,
  Team,
  type WorldDef,
} from "../../sim/mod.ts";
import { CHASER, FOLD, HUB, ORB, PLAYER, WARDEN } from "../../content/mod.ts";
import { think, viewOfWorld } from "../../sim/pilot.ts";
import { runDungeon } from "../../tools/demo_run.ts";

const UP = quantizeAngle(-Math.PI / 2);

/** A bare dungeon: no walls, no waves unless given, the player spawns at (640, 700). */
function testWorld(over: Partial<WorldDef> = {}): WorldDef {
  return {
    kind: "dungeon",
    name: "Test Room",
    arena: {
      widthPx: 1280,
      heightPx: 960,
      walls: [],
      spawnPoints: [640, 540, 740, 440].map((x) => ({ x, y: 700 })),
    },
    player: PLAYER,
    waves: [],
    waveDelayTicks: 10_000,
    ...over,
  };
}

/** The same input for every ship in `world`. */
function allPress(
  world: SimWorld,
  input: Partial<Omit<InputFrame, "tick">> = {},
): Map<number, InputFrame> {
  const out = new Map<number, InputFrame>();
  for (const p of world.players.values()) {
    out.set(p.id, { tick: world.tick, moveX: 0, moveY: 0, aim: p.aim, buttons: 0, ...input });
  }
  return out;
}

function ofType<T extends SimEvent["type"]>(
  events: SimEvent[],
  type: T,
): Extract<SimEvent, { type: T }>[] {
  return events.filter((e): e is Extract<SimEvent, { type: T }> => e.type === type);
}

/** Drops `count` motionless enemy bullets right on top of a ship. */
function pileOn(world: SimWorld, p: PlayerState, count: number, uid0 = 1_000_000): void {
  spawnVolley(world.bullets, {
    birthTick: world.tick,
    uid0,
    team: Team.Enemy,
    owner: -1,
    spec: { ...ORB, ttlTicks: 100_000 },
    speedPxPerS: 0,
    xs: Array(count).fill(quantizePos(p.x)),
    ys: Array(count).fill(quantizePos(p.y)),
    angles: Array(count).fill(0),
  });
}

function enemyBulletCount(world: SimWorld): number {
  let n = 0;
  for (let i = 0; i < world.bullets.count; i++) if (world.bullets.team[i] === Team.Enemy) n++;
  return n;
}

Deno.test("30 overlapping enemy bullets in one tick cost exactly one HP and one bullet", () => {
  const world = new SimWorld(testWorld(), { seed: 1 });
  const p = world.addPlayer(1, "a");
  pileOn(world, p, 30);
  const events = world.step(allPress(world));
  assert.equal(p.hp, PLAYER.maxHp - 1);
  assert.equal(enemyBulletCount(world), 29);
  assert.deepEqual(ofType(events, "playerHit"), [{ type: "playerHit", playerId: 1, hp: 4 }]);
  const hits = ofType(events, "bulletHit");
  assert.equal(hits.length, 1);
  assert.equal(hits[0].target, HitTarget.Player);
  assert.equal(hits[0].targetId, 1);
  assert.equal(p.iframeTicks, PLAYER.iframeTicks);
});

Deno.test("every ship under a pile takes one hit a tick, even with no i-frames, and near misses graze", () => {
  // No i-frames: only the one-hit-a-tick rule keeps a pile from costing more than one HP.
  const world = new SimWorld(testWorld({ player: { ...PLAYER, iframeTicks: 0 } }), { seed: 1 });
  const a = world.addPlayer(1, "a");
  const b = world.addPlayer(2, "b");
  pileOn(world, a, 10);
  pileOn(world, b, 10, 2_000_000);
  // One bullet in b's graze band, none near a.
  const edge = PLAYER.radiusPx + ORB.radiusPx + PLAYER.grazeBandPx / 2;
  spawnVolley(world.bullets, {
    birthTick: world.tick,
    uid0: 3_000_000,
    team: Team.Enemy,
    owner: -1,
    spec: { ...ORB, ttlTicks: 100_000 },
    speedPxPerS: 0,
    xs: [quantizePos(b.x + edge)],
    ys: [quantizePos(b.y)],
    angles: [0],
  });
  for (let t = 1; t <= 3; t++) {
    const events = world.step(allPress(world));
    const hits = ofType(events, "playerHit").map((e) => e.playerId).sort();
    assert.deepEqual(hits, [1, 2], `tick ${t}: one hit each`);
    assert.equal(a.hp, PLAYER.maxHp - t);
    assert.equal(b.hp, PLAYER.maxHp - t);
    assert.equal(enemyBulletCount(world), 21 - 2 * t);
  }
  assert.equal(world.stats.get(2)!.grazes, 1, "the near miss counts once");
  assert.equal(world.stats.get(1)!.grazes, 0);
});

Deno.test("a near miss on any side of any ship grazes it, at the edge of the box around the ships too", () => {
  const world = new SimWorld(testWorld(), { seed: 1 });
  const corners = [[200, 200], [1000, 200], [200, 800], [1000, 800]];
  const ships = corners.map(([x, y], i) => Object.assign(world.addPlayer(i + 1, "p"), { x, y }));
  // Just inside the graze band, left, right, above and below each ship: the outer ones sit
  // on the very edge of what the box around the ships lets through. Just outside it, one
  // more ring that grazes nothing.
  const inside = PLAYER.radiusPx + ORB.radiusPx + PLAYER.grazeBandPx - 0.25;
  const outside = PLAYER.radiusPx + ORB.radiusPx + PLAYER.grazeBandPx + 0.25;
  const xs: number[] = [];
  const ys: number[] = [];
  for (const p of ships) {
    for (const d of [inside, outside]) {
      for (const [dx, dy] of [[-d, 0], [d, 0], [0, -d], [0, d]]) {
        xs.push(quantizePos(p.x + dx));
        ys.push(quantizePos(p.y + dy));
      }
    }
  }
  spawnVolley(world.bullets, {
    birthTick: world.tick,
    uid0: 1_000_000,
    team: Team.Enemy,
    owner: -1,
    spec: { ...ORB, ttlTicks: 100_000 },
    speedPxPerS: 0,
    xs,
    ys,
    angles: xs.map(() => 0),
  });
  const events = world.step(allPress(world));
  assert.deepEqual(ofType(events, "playerHit"), []);
  for (const p of ships) assert.equal(world.stats.get(p.id)!.grazes, 4, `ship ${p.id}`);
});

Deno.test("i-frames let a pile of bullets pass for iframeTicks, then the next one lands", () => {
  const world = new SimWorld(testWorld(), { seed: 1 });
  const p = world.addPlayer(1, "a");
  pileOn(world, p, 30);
  world.step(allPress(world));
  for (let t = 1; t < PLAYER.iframeTicks; t++) {
    assert.deepEqual(ofType(world.step(allPress(world)), "playerHit"), [], `tick ${t}`);
  }
  assert.equal(enemyBulletCount(world), 29);
  assert.equal(ofType(world.step(allPress(world)), "playerHit").length, 1);
  assert.equal(p.hp, PLAYER.maxHp - 2);
  assert.equal(enemyBulletCount(world), 28);
});

Deno.test("holding fire for 60 ticks fires exactly 10 shots, one per cooldown", () => {
  const world = new SimWorld(testWorld(), { seed: 1 });
  world.addPlayer(1, "a");
  const births: number[] = [];
  for (let t = 0; t < 60; t++) {
    for (const e of ofType(world.step(allPress(world, { buttons: Button.Fire })), "volley")) {
      assert.equal(e.volley.team, Team.Player);
      assert.equal(e.volley.owner, 1);
      assert.equal(e.volley.angles.length, 1);
      births.push(e.volley.birthTick);
    }
  }
  assert.equal(births.length, 10);
  assert.deepEqual(births, [0, 6, 12, 18, 24, 30, 36, 42, 48, 54]);
});

Deno.test("a shot leaves along the ship's aim from the ship's position", () => {
  const world = new SimWorld(testWorld(), { seed: 1 });
  const p = world.addPlayer(1, "a");
  const aim = quantizeAngle(0.3);
  const [e] = ofType(world.step(allPress(world, { aim, buttons: Button.Fire })), "volley");
  assert.deepEqual(e.volley.angles, [aim]);
  assert.deepEqual(e.volley.xs, [quantizePos(p.x)]);
  assert.deepEqual(e.volley.ys, [quantizePos(p.y)]);
  assert.equal(e.volley.speedPxPerS, PLAYER.shotSpeedPxPerS);
  assert.equal(e.volley.spec, PLAYER.shot);
});

Deno.test("a player shot is not integrated on the tick it is born", () => {
  const world = new SimWorld(testWorld(), { seed: 1 });
  world.addPlayer(1, "a");
  const [e] = ofType(world.step(allPress(world, { aim: UP, buttons: Button.Fire })), "volley");
  const slot = world.bullets.slotOf(e.volley.uid0);
  assert.notEqual(slot, -1);
  assert.equal(world.bullets.x[slot], e.volley.xs[0] / 8, "still at the muzzle");
  assert.equal(world.bullets.y[slot], e.volley.ys[0] / 8, "still at the muzzle");
  assert.equal(world.bullets.ttl[slot], PLAYER.shot.ttlTicks);
});

Deno.test("a replica fed only the tick's events holds exactly the world's bullets", () => {
  const world = new SimWorld(FOLD, { seed: 3 });
  for (let id = 1; id <= 3; id++) world.addPlayer(id, `p${id}`);
  const replica = new BulletPool();
  for (let t = 0; t < 1800; t++) {
    const inputs = new Map<number, InputFrame>();
    for (const p of world.players.values()) {
      inputs.set(p.id, think(viewOfWorld(world, p), { tick: world.tick }));
    }
    const events = world.step(inputs);
    // The client's order: integrate what it had, then place what was born, then kill what was hit.
    stepBullets(replica, FOLD.arena);
    for (const e of events) {
      if (e.type !== "volley") continue;
      const from = replica.count;
      spawnVolley(replica, e.volley);
      fastForward(replica, FOLD.arena, { from, ticks: world.tick - 1 - e.volley.birthTick });
    }
    for (const e of events) {
      if (e.type === "bulletHit") {
        const slot = replica.slotOf(e.uid);
        if (slot !== -1) replica.remove(slot);
      }
      if (e.type === "bulletsCleared") replica.clearTeam(e.team);
    }
    const mine = new Map<number, [number, number]>();
    for (let i = 0; i < replica.count; i++) mine.set(replica.uid[i], [replica.x[i], replica.y[i]]);
    const theirs = new Map<number, [number, number]>();
    for (let i = 0; i < world.bullets.count; i++) {
      theirs.set(world.bullets.uid[i], [world.bullets.x[i], world.bullets.y[i]]);
    }
    assert.deepEqual(mine, theirs, `tick ${world.tick - 1}`);
  }
});

Deno.test("a chaser's contact costs one HP, then again only once the i-frames run out", () => {
  const def = testWorld({ waves: [[{ enemy: CHASER, x: 640, y: 560 }]], waveDelayTicks: 0 });
  const world = new SimWorld(def, { seed: 1 });
  const p = world.addPlayer(1, "a");
  const hitTicks: number[] = [];
  for (let t = 0; t < 400; t++) {
    const events = world.step(allPress(world));
    for (const e of ofType(events, "playerHit")) {
      hitTicks.push(world.tick - 1);
      assert.equal(e.hp, p.hp);
    }
    assert.equal(ofType(events, "bulletHit").length, 0, "no bullets involved");
  }
  assert.ok(hitTicks.length >= 2);
  // 140 px at 150 px/s: about a second of running before the first touch.
  assert.ok(hitTicks[0] > 40 && hitTicks[0] < 80, `first touch on tick ${hitTicks[0]}`);
  for (let i = 1; i < hitTicks.length; i++) {
    assert.equal(hitTicks[i] - hitTicks[i - 1], PLAYER.iframeTicks, `gap before hit ${i}`);
  }
  assert.equal(hitTicks.length, PLAYER.maxHp, "the chaser never lets go");
  assert.equal(p.status, "dead");
});

/** A room with the Warden and one gunner standing under it, aiming up, fire held. */
function wardenRoom(shotDamage: number, players = 1) {
  const def = testWorld({
    boss: WARDEN,
    waveDelayTicks: 1,
    // The test is about the boss: the ship must outlast it, and its shots set the pace.
    player: { ...PLAYER, maxHp: 1_000_000, shot: { ...PLAYER.shot, damage: shotDamage } },
  });
  const world = new SimWorld(def, { seed: 1 });
  for (let id = 1; id <= players; id++) world.addPlayer(id, `p${id}`);
  const gunner = world.players.get(1)!;
  gunner.x = WARDEN.x;
  gunner.y = WARDEN.y + 130;
  return { world, gunner };
}

interface BossHit {
  readonly tick: number;
  readonly phase: number;
  readonly hpBefore: number;
  readonly hpAfter: number;
  readonly damage: number;
}

/** Fights until the boss dies; every boss hit, every phase change and every boss volley tick. */
function fightWarden(world: SimWorld, limit = 5000) {
  const hits: BossHit[] = [];
  const phases: { tick: number; phase: number; hp: number }[] = [];
  const volleyTicks: number[] = [];
  let defeatedTick = -1;
  for (let t = 0; t < limit && defeatedTick < 0; t++) {
    const tick = world.tick;
    const phase = world.boss?.phase ?? -1;
    const hpBefore = world.boss?.hp ?? NaN;
    const events = world.step(allPress(world, { aim: UP, buttons: Button.Fire }));
    for (const e of events) {
      if (e.type === "bulletHit" && e.target === HitTarget.Boss) {
        hits.push({ tick, phase, hpBefore, hpAfter: world.boss!.hp, damage: e.damage });
      }
      if (e.type === "bossPhase") phases.push({ tick, phase: e.phase, hp: world.boss!.hp });
      if (e.type === "volley" && e.volley.team === Team.Enemy) volleyTicks.push(tick);
      if (e.type === "bossDefeated") defeatedTick = tick;
    }
  }
  return { hits, phases, volleyTicks, defeatedTick };
}

Deno.test("the Warden changes phase at exactly 75, 50 and 25 % of its HP", () => {
  const { world } = wardenRoom(10);
  const { phases, defeatedTick } = fightWarden(world);
  assert.ok(defeatedTick > 0, "the boss died");
  assert.deepEqual(phases.map((p) => p.phase), [0, 1, 2, 3]);
  assert.deepEqual(phases.map((p) => p.hp), [400, 300, 200, 100]);
  assert.equal(world.stage, "cleared");
  assert.equal(world.boss!.hp, 0);
});

Deno.test("the Warden takes 0.9× damage in phase 3 and 1.25× in phase 4", () => {
  const { world } = wardenRoom(10);
  const { hits } = fightWarden(world);
  const dealtByPhase = new Map<number, Set<number>>();
  for (const h of hits) {
    if (h.damage === 0) continue; // folded
    const floor = (WARDEN.phases[h.phase + 1]?.fromHpFrac ?? 0) * 400;
    const raw = 10 * WARDEN.phases[h.phase].damageTakenMult;
    // The event reports what the hit took: the full amount, or what was left above the line.
    assert.equal(h.damage, Math.min(raw, h.hpBefore - floor), `hit on tick ${h.tick}`);
    assert.equal(h.hpAfter, h.hpBefore - h.damage, `hit on tick ${h.tick}`);
    if (h.damage < raw) continue; // clamped at the phase line
    if (!dealtByPhase.has(h.phase)) dealtByPhase.set(h.phase, new Set());
    dealtByPhase.get(h.phase)!.add(h.damage);
  }
  assert.deepEqual([...dealtByPhase.get(0)!], [10]);
  assert.deepEqual([...dealtByPhase.get(1)!], [10]);
  assert.deepEqual([...dealtByPhase.get(2)!], [9]);
  assert.deepEqual([...dealtByPhase.get(3)!], [12.5]);
  // 10 + 10 + 12 (the 12th is clamped to the 25 % line) + 8 hits.
  const counts = [0, 1, 2, 3].map((ph) =>
    hits.filter((h) => h.phase === ph && h.damage > 0).length
  );
  assert.deepEqual(counts, [10, 10, 12, 8]);
});

Deno.test("the Warden folds between phases: it neither fires nor takes damage", () => {
  const { world } = wardenRoom(10);
  const { hits, phases, volleyTicks } = fightWarden(world);
  for (const change of phases.slice(1)) {
    const quiet = volleyTicks.filter((t) => t > change.tick && t <= change.tick + WARDEN.foldTicks);
    assert.deepEqual(quiet, [], `boss fired during the fold after tick ${change.tick}`);
    const during = hits.filter((h) =>
      h.tick > change.tick && h.tick < change.tick + WARDEN.foldTicks
    );
    assert.ok(during.length > 0, "shots kept landing during the fold");
    for (const h of during) {
      assert.equal(h.damage, 0);
      assert.equal(h.hpAfter, h.hpBefore);
    }
    assert.ok(
      volleyTicks.some((t) =>
        t > change.tick + WARDEN.foldTicks && t < change.tick + 2 * WARDEN.foldTicks
      ),
      "the new phase opens fire after the fold",
    );
  }
  const inFold = (tick: number) =>
    phases.some((c) => c.phase > 0 && tick > c.tick && tick < c.tick + WARDEN.foldTicks);
  for (const h of hits) if (h.damage === 0) assert.ok(inFold(h.tick), `free hit on ${h.tick}`);
});

Deno.test("a single huge hit never skips a boss phase", () => {
  const { world } = wardenRoom(255);
  const { hits, phases, defeatedTick } = fightWarden(world);
  const landed = hits.filter((h) => h.damage > 0);
  assert.deepEqual(landed.map((h) => h.hpAfter), [300, 200, 100, 0]);
  assert.deepEqual(landed.map((h) => h.phase), [0, 1, 2, 3]);
  assert.deepEqual(phases.map((p) => p.phase), [0, 1, 2, 3]);
  assert.equal(defeatedTick, landed[3].tick);
});

Deno.test("the Warden's defeat clears enemy bullets and the stage", () => {
  const { world } = wardenRoom(255);
  let cleared: SimEvent[] = [];
  for (let t = 0; t < 5000 && world.stage !== "cleared"; t++) {
    const events = world.step(allPress(world, { aim: UP, buttons: Button.Fire }));
    if (ofType(events, "bossDefeated").length > 0) cleared = events;
  }
  assert.deepEqual(ofType(cleared, "bulletsCleared"), [{
    type: "bulletsCleared",
    team: Team.Enemy,
  }]);
  assert.equal(enemyBulletCount(world), 0);
  // A dead boss stays quiet.
  for (let t = 0; t < 300; t++) {
    const events = world.step(allPress(world, { aim: UP, buttons: Button.Fire }));
    assert.equal(ofType(events, "volley").filter((e) => e.volley.team === Team.Enemy).length, 0);
    assert.equal(ofType(events, "bulletHit").filter((e) => e.target === HitTarget.Boss).length, 0);
  }
});

/** A bullet of `team` at (x, y), motionless and long-lived, with uid `uid`. */
function placeBullet(world: SimWorld, opts: { team: number; x: number; y: number; uid: number }) {
  spawnVolley(world.bullets, {
    birthTick: world.tick,
    uid0: opts.uid,
    team: opts.team,
    owner: opts.team === Team.Player ? 1 : -1,
    spec: { ...(opts.team === Team.Player ? PLAYER.shot : ORB), ttlTicks: 100_000 },
    speedPxPerS: 0,
    xs: [quantizePos(opts.x)],
    ys: [quantizePos(opts.y)],
    angles: [0],
  });
}

function uidsOf(world: SimWorld, team: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < world.bullets.count; i++) {
    if (world.bullets.team[i] === team) out.push(world.bullets.uid[i]);
  }
  return out.sort((a, b) => a - b);
}

/**
 * A one-player room in its boss fight, the Warden in its last phase at 1 HP, no bullet
 * in the air, the gunner out of every line of fire (it holds its own fire too).
 */
function wardenAtOneHp(): SimWorld {
  const { world, gunner } = wardenRoom(1);
  while (world.stage !== "boss") world.step(allPress(world));
  const boss = world.boss!;
  boss.phase = WARDEN.phases.length - 1;
  boss.foldTicks = 0;
  boss.hp = 1;
  gunner.x = 100;
  world.bullets.clearTeam(Team.Enemy);
  world.bullets.clearTeam(Team.Player);
  return world;
}

Deno.test("on the tick the Warden dies, the killing shot alone is removed and other shots fly on", () => {
  const world = wardenAtOneHp();
  // Enemy bullets below and above the killing shot: the clear reshuffles the slots under it.
  placeBullet(world, { team: Team.Enemy, x: 300, y: 600, uid: 10 });
  placeBullet(world, { team: Team.Player, x: 1000, y: 800, uid: 11 });
  placeBullet(world, { team: Team.Player, x: 200, y: 800, uid: 12 });
  placeBullet(world, { team: Team.Player, x: WARDEN.x, y: WARDEN.y, uid: 13 });
  placeBullet(world, { team: Team.Enemy, x: 900, y: 600, uid: 14 });
  placeBullet(world, { team: Team.Enemy, x: 500, y: 600, uid: 15 });

  const events = world.step(allPress(world));
  const kill = ofType(events, "bulletHit").filter((e) => e.target === HitTarget.Boss);
  assert.deepEqual(kill.map((e) => e.uid), [13], "the shot on the boss struck it");
  assert.equal(ofType(events, "bossDefeated").length, 1);
  assert.deepEqual(uidsOf(world, Team.Player), [11, 12], "the other two shots fly on");
  assert.deepEqual(uidsOf(world, Team.Enemy), [], "every enemy bullet was cleared");
});

Deno.test("every shot touching the Warden on its death tick dies on it, whatever its slot", () => {
  const world = wardenAtOneHp();
  // Slots are walked from the top: 22 kills, 20 and 21 come after it in the walk.
  for (const uid of [20, 21, 22]) {
    placeBullet(world, { team: Team.Player, x: WARDEN.x + uid - 21, y: WARDEN.y, uid });
  }
  placeBullet(world, { team: Team.Player, x: 1000, y: 800, uid: 23 });
  const events = world.step(allPress(world));
  const onBoss = ofType(events, "bulletHit").filter((e) => e.target === HitTarget.Boss);
  assert.deepEqual(onBoss.map((e) => [e.uid, e.damage]), [[22, 1], [21, 0], [20, 0]]);
  assert.equal(ofType(events, "bossDefeated").length, 1, "it falls once");
  assert.deepEqual(uidsOf(world, Team.Player), [23]);
});

Deno.test("an away ship holds still, is not hit or aimed at, stays in the run, and comes back with i-frames", () => {
  const world = new SimWorld(testWorld(), { seed: 1 });
  const away = world.addPlayer(1, "away");
  const here = world.addPlayer(2, "here");
  here.x = 100;
  world.setAway(1, true);
  pileOn(world, away, 10);
  const { x, y } = away;
  for (let t = 0; t < 120; t++) {
    world.step(allPress(world, { moveX: 100, buttons: Button.Fire }));
  }
  assert.equal(away.hp, PLAYER.maxHp, "the pile passed through it");
  assert.deepEqual([away.x, away.y], [x, y], "it held still");
  assert.equal(world.nearestPlayer(away.x, away.y)?.id, 2, "enemies aim at the other ship");
  assert.equal(world.countActive(), 2, "still in the run: a wipe needs it gone");
  const shots = world.bullets.count - enemyBulletCount(world);
  assert.ok(shots > 0, "the other ship fired");
  for (let i = 0; i < world.bullets.count; i++) {
    if (world.bullets.team[i] === Team.Player) assert.equal(world.bullets.owner[i], 2);
  }
  world.setAway(1, false);
  assert.equal(away.iframeTicks, PLAYER.iframeTicks, "a moment to see where it is");
  world.step(allPress(world, { moveX: 100 }));
  assert.ok(away.x > x, "it moves again");
  // Coming back after a short park gives no more i-frames than the park lasted.
  world.setAway(2, true);
  here.iframeTicks = 0;
  world.setAway(2, false, { iframeTicks: 7 });
  assert.equal(here.iframeTicks, 7);
});

Deno.test("boss HP is 400 × (1 + 0.75 × (players − 1))", () => {
  for (const [players, expected] of [[1, 400], [2, 700], [3, 1000], [4, 1300]]) {
    const world = new SimWorld(testWorld({ boss: WARDEN, waveDelayTicks: 5 }), { seed: 1 });
    for (let id = 1; id <= players; id++) world.addPlayer(id, `p${id}`);
    const spawned: SimEvent[] = [];
    for (let t = 0; t < 10; t++) {
      spawned.push(...ofType(world.step(allPress(world)), "bossSpawned"));
    }
    assert.deepEqual(spawned, [{ type: "bossSpawned", bossId: WARDEN.id, maxHp: expected }]);
    assert.equal(world.boss!.maxHp, expected);
    assert.equal(world.boss!.hp, expected);
  }
});

Deno.test("boss HP counts only the ships still active when it appears", () => {
  const def = testWorld({ boss: WARDEN, waveDelayTicks: PLAYER.escapeTicks + 10 });
  const world = new SimWorld(def, { seed: 1 });
  for (let id = 1; id <= 3; id++) world.addPlayer(id, `p${id}`);
  let maxHp = 0;
  for (let t = 0; t < PLAYER.escapeTicks + 20; t++) {
    const inputs = allPress(world);
    inputs.set(3, { ...inputs.get(3)!, buttons: Button.Escape });
    for (const e of ofType(world.step(inputs), "bossSpawned")) maxHp = e.maxHp;
  }
  assert.equal(world.players.get(3)!.status, "escaped");
  assert.equal(maxHp, 700);
});

Deno.test("escape completes after exactly escapeTicks held ticks", () => {
  assert.equal(PLAYER.escapeTicks, 180);
  const world = new SimWorld(testWorld(), { seed: 1 });
  const p = world.addPlayer(1, "a");
  const escape = () => world.step(allPress(world, { buttons: Button.Escape }));
  assert.deepEqual(ofType(escape(), "escapeStarted"), [{ type: "escapeStarted", playerId: 1 }]);
  for (let t = 2; t < 180; t++) {
    const events = escape();
    assert.equal(events.length, 0, `tick ${t}: ${JSON.stringify(events)}`);
  }
  assert.equal(p.escapeTicks, 179);
  assert.equal(p.status, "active");
  assert.deepEqual(escape(), [{ type: "escapeCompleted", playerId: 1 }]);
  assert.equal(p.status, "escaped");
  // An escaped ship is out of the game: it neither moves nor escapes again.
  const at = { x: p.x, y: p.y };
  assert.deepEqual(world.step(allPress(world, { moveX: 100, buttons: Button.Escape })), []);
  assert.deepEqual({ x: p.x, y: p.y }, at);
});

Deno.test("a channelling ship holds its fire", () => {
  const world = new SimWorld(testWorld(), { seed: 1 });
  world.addPlayer(1, "a");
  for (let t = 0; t < 60; t++) {
    const events = world.step(allPress(world, { buttons: Button.Escape | Button.Fire }));
    assert.equal(ofType(events, "volley").length, 0);
  }
});

Deno.test("damage cancels an escape and the channel starts over", () => {
  const world = new SimWorld(testWorld(), { seed: 1 });
  const p = world.addPlayer(1, "a");
  const escape = () => world.step(allPress(world, { buttons: Button.Escape }));
  for (let t = 0; t < 100; t++) escape();
  pileOn(world, p, 1);
  const events = escape();
  assert.deepEqual(ofType(events, "escapeCancelled"), [{
    type: "escapeCancelled",
    playerId: 1,
    reason: "damage",
  }]);
  assert.equal(p.escapeTicks, 0);
  assert.equal(ofType(escape(), "escapeStarted").length, 1);
  for (let t = 2; t < 180; t++) assert.equal(ofType(escape(), "escapeCompleted").length, 0);
  assert.equal(ofType(escape(), "escapeCompleted").length, 1);
});

Deno.test("releasing the button cancels an escape and the channel starts over", () => {
  const world = new SimWorld(testWorld(), { seed: 1 });
  const p = world.addPlayer(1, "a");
  for (let t = 0; t < 170; t++) world.step(allPress(world, { buttons: Button.Escape }));
  const released = world.step(allPress(world));
  assert.deepEqual(released, [{ type: "escapeCancelled", playerId: 1, reason: "released" }]);
  assert.equal(p.escapeTicks, 0);
  for (let t = 0; t < 179; t++) world.step(allPress(world, { buttons: Button.Escape }));
  assert.equal(p.status, "active");
  world.step(allPress(world, { buttons: Button.Escape }));
  assert.equal(p.status, "escaped");
});

Deno.test("the hit that takes the last HP emits playerDied and the ship stops for good", () => {
  const world = new SimWorld(testWorld(), { seed: 1 });
  const p = world.addPlayer(1, "a");
  pileOn(world, p, 30);
  const all: SimEvent[] = [];
  // Five hits one i-frame window apart; the channel started before the last is cut by death.
  for (let t = 0; t <= 4 * PLAYER.iframeTicks; t++) {
    const buttons = t >= 4 * PLAYER.iframeTicks - 20 ? Button.Escape : 0;
    all.push(...world.step(allPress(world, { buttons })));
  }
  assert.equal(p.hp, 0);
  assert.equal(p.status, "dead");
  assert.deepEqual(ofType(all, "playerHit").map((e) => e.hp), [4, 3, 2, 1, 0]);
  assert.deepEqual(ofType(all, "playerDied"), [{ type: "playerDied", playerId: 1 }]);
  assert.deepEqual(ofType(all, "escapeCancelled"), [{
    type: "escapeCancelled",
    playerId: 1,
    reason: "died",
  }]);
  const at = { x: p.x, y: p.y };
  for (let t = 0; t < 120; t++) {
    const events = world.step(allPress(world, { moveX: 100, buttons: Button.Fire }));
    assert.deepEqual(events, [], "a dead ship is neither hit nor heard");
  }
  assert.deepEqual({ x: p.x, y: p.y }, at);
});

Deno.test("walking into the hub portal emits portalEntered once", () => {
  const world = new SimWorld(HUB, { seed: 1 });
  const p = world.addPlayer(1, "a");
  world.addPlayer(2, "b"); // stays behind
  const entered: SimEvent[] = [];
  for (let t = 0; t < 600; t++) {
    const dx = HUB.portals[0].x - p.x;
    const dy = HUB.portals[0].y - p.y;
    const d = Math.hypot(dx, dy) || 1;
    const inputs = new Map<number, InputFrame>([[1, {
      tick: world.tick,
      moveX: Math.round((dx / d) * 100),
      moveY: Math.round((dy / d) * 100),
      aim: 0,
      buttons: Button.Fire,
    }]]);
    entered.push(...world.step(inputs));
  }
  assert.deepEqual(
    entered,
    [{ type: "portalEntered", playerId: 1, portal: 0 }],
    "no shots in the hub",
  );
  assert.equal(p.status, "portal");
  const [portal] = HUB.portals;
  assert.ok(Math.hypot(p.x - portal.x, p.y - portal.y) <= portal.radiusPx);
  assert.equal(world.players.get(2)!.status, "active");
});

Deno.test("four scripted pilots clear the whole dungeon and defeat the Warden", () => {
  const summary = runDungeon(FOLD, { players: 4, seed: 1, maxTicks: 60 * 300 });
  assert.equal(summary.bossDefeated, true);
  assert.ok(summary.ticks < 60 * 300);
  assert.equal(summary.events.waveStarted, FOLD.waves.length);
  const trash = FOLD.waves.reduce((n, w) => n + w.length, 0);
  assert.equal(summary.events.enemySpawned, trash);
  assert.equal(summary.events.enemyKilled, trash);
  assert.equal(summary.events.bossSpawned, 1);
  assert.equal(summary.events.bossPhase, WARDEN.phases.length);
  assert.equal(summary.events.bossDefeated, 1);
  assert.ok(summary.deaths < 4);
});

/**
 * Steps worlds in lockstep on the inputs the first world's pilots choose; returns
 * each world's hash once a second.
 */
function lockstep(worlds: SimWorld[], ticks: number): number[][] {
  for (const w of worlds) for (let id = 1; id <= 4; id++) w.addPlayer(id, `p${id}`);
  const [lead] = worlds;
  const hashes: number[][] = worlds.map(() => []);
  for (let t = 1; t <= ticks; t++) {
    const inputs = new Map<number, InputFrame>();
    for (const p of lead.players.values()) {
      inputs.set(p.id, think(viewOfWorld(lead, p), { tick: lead.tick }));
    }
    for (const w of worlds) w.step(inputs);
    if (t % 60 === 0) worlds.forEach((w, i) => hashes[i].push(hashWorld(w)));
  }
  return hashes;
}

Deno.test("the same seed and inputs give the same world hash after 3,600 ticks", () => {
  const a = new SimWorld(FOLD, { seed: 1 });
  const b = new SimWorld(FOLD, { seed: 1 });
  const [ha, hb] = lockstep([a, b], 3600);
  assert.equal(a.tick, 3600);
  assert.equal(hashWorld(a), hashWorld(b));
  assert.deepEqual(ha, hb, "and at every second on the way");
  assert.ok(new Set(ha).size > 50, "the hash follows the game");
});

Deno.test("a different seed with the same inputs gives a different world hash", () => {
  const a = new SimWorld(FOLD, { seed: 1 });
  const c = new SimWorld(FOLD, { seed: 2 });
  lockstep([a, c], 3600);
  assert.notEqual(hashWorld(a), hashWorld(c));
});

Deno.test("acceptsPlayers: the hub always; a dungeon during its waves, never once its boss is up", () => {
  assert.equal(new SimWorld(HUB, { seed: 1 }).acceptsPlayers, true);
  const world = new SimWorld(testWorld({ boss: WARDEN, waveDelayTicks: 3 }), { seed: 1 });
  world.addPlayer(1, "Ada");
  const seen: [string, boolean][] = [];
  for (let t = 0; t < 6; t++) {
    seen.push([world.stage, world.acceptsPlayers]);
    world.step(new Map());
  }
  seen.push([world.stage, world.acceptsPlayers]);
  assert.deepEqual(seen, [
    ["waves", true],
    ["waves", true],
    ["waves", true],
    ["waves", true],
    ["boss", false],
    ["boss", false],
    ["boss", false],
  ]);
});
