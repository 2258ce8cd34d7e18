/** The genre's basics in the simulation: focus, graze, phase clears, telegraphs and run stats. */
import assert from "node:assert/strict";
import {
  type BossDef,
  Button,
  type EnemyDef,
  type InputFrame,
  movePlayer,
  quantizeAngle,
  quantizePos,
  type SimEvent,
  SimWorld,
  spawnVolley,
  Team,
  TICK_S,
  type WorldDef,
} from "../../sim/mod.ts";
import { AIM_LINE, NEEDLE, ORB, PLAYER, RING_FLASH, WARDEN } from "../../content/mod.ts";

const OPEN = { widthPx: 1280, heightPx: 960, walls: [], spawnPoints: [{ x: 640, y: 700 }] };

function room(over: Partial<WorldDef> = {}): WorldDef {
  return {
    kind: "dungeon",
    name: "Test Room",
    arena: OPEN,
    player: PLAYER,
    waves: [],
    waveDelayTicks: 10_000,
    ...over,
  };
}

function input(
  world: SimWorld,
  id: number,
  over: Partial<InputFrame> = {},
): Map<number, InputFrame> {
  const p = world.players.get(id)!;
  return new Map([[id, { tick: world.tick, moveX: 0, moveY: 0, aim: p.aim, buttons: 0, ...over }]]);
}

function ofType<T extends SimEvent["type"]>(events: SimEvent[], type: T) {
  return events.filter((e): e is Extract<SimEvent, { type: T }> => e.type === type);
}

/** An enemy bullet at (x, y) heading along `rad`, born now. */
function enemyBullet(world: SimWorld, at: { x: number; y: number; rad: number; uid: number }) {
  spawnVolley(world.bullets, {
    birthTick: world.tick,
    uid0: at.uid,
    team: Team.Enemy,
    owner: -1,
    spec: ORB,
    speedPxPerS: 240,
    xs: [quantizePos(at.x)],
    ys: [quantizePos(at.y)],
    angles: [quantizeAngle(at.rad)],
  });
}

Deno.test("Focus moves the ship at focusSpeedPxPerS, in prediction and on the server alike", () => {
  const pos = { x: 640, y: 480 };
  movePlayer(pos, { moveX: 100, moveY: 0, buttons: Button.Focus }, { arena: OPEN, tuning: PLAYER });
  assert.ok(Math.abs(pos.x - 640 - PLAYER.focusSpeedPxPerS * TICK_S) < 1e-9);
  assert.ok(PLAYER.focusSpeedPxPerS < PLAYER.speedPxPerS / 2);

  const world = new SimWorld(room(), { seed: 1 });
  const p = world.addPlayer(1, "a");
  const x0 = p.x;
  for (let i = 0; i < 60; i++) world.step(input(world, 1, { moveX: 100, buttons: Button.Focus }));
  assert.ok(Math.abs(p.x - x0 - PLAYER.focusSpeedPxPerS) < 1e-6, `moved ${p.x - x0} px in 1 s`);
  const x1 = p.x;
  for (let i = 0; i < 60; i++) world.step(input(world, 1, { moveX: 100 }));
  assert.ok(Math.abs(p.x - x1 - PLAYER.speedPxPerS) < 1e-6, "full speed again once released");
});

Deno.test("a bullet passing inside the graze band counts once; one passing wide counts never", () => {
  const world = new SimWorld(room(), { seed: 1 });
  const p = world.addPlayer(1, "a");
  const reach = PLAYER.radiusPx + ORB.radiusPx;
  // One flies by just outside the hitbox (inside the band), one well outside the band.
  enemyBullet(world, { x: p.x - 200, y: p.y - reach - 4, rad: 0, uid: 100 });
  enemyBullet(world, { x: p.x - 200, y: p.y + reach + PLAYER.grazeBandPx + 6, rad: 0, uid: 101 });
  const grazes: Extract<SimEvent, { type: "graze" }>[] = [];
  for (let i = 0; i < 120; i++) grazes.push(...ofType(world.step(input(world, 1)), "graze"));
  assert.deepEqual(grazes.map((g) => [g.playerId, g.total]), [[1, 1]]);
  assert.equal(world.stats.get(1)!.grazes, 1);
  assert.equal(p.hp, PLAYER.maxHp, "a graze is not a hit");
});

Deno.test("a bullet that hits is a hit, not a graze, and a ship in i-frames grazes nothing", () => {
  const world = new SimWorld(room(), { seed: 1 });
  const p = world.addPlayer(1, "a");
  enemyBullet(world, { x: p.x - 200, y: p.y, rad: 0, uid: 100 });
  const events: SimEvent[] = [];
  for (let i = 0; i < 80; i++) events.push(...world.step(input(world, 1)));
  assert.equal(ofType(events, "playerHit").length, 1);
  // Grazed on its way in (it passed through the band), then hit: the hit is what counts.
  assert.ok(world.stats.get(1)!.hitsTaken === 1);
  const before = world.stats.get(1)!.grazes;
  p.iframeTicks = 200;
  const reach = PLAYER.radiusPx + ORB.radiusPx;
  enemyBullet(world, { x: p.x - 200, y: p.y - reach - 4, rad: 0, uid: 200 });
  for (let i = 0; i < 80; i++) world.step(input(world, 1));
  assert.equal(world.stats.get(1)!.grazes, before);
});

Deno.test("every boss phase change clears the enemy bullets, on the tick of the change", () => {
  const def = room({
    boss: WARDEN,
    waveDelayTicks: 1,
    player: { ...PLAYER, maxHp: 1_000_000, shot: { ...PLAYER.shot, damage: 10 } },
  });
  const world = new SimWorld(def, { seed: 3 });
  const p = world.addPlayer(1, "a");
  p.x = WARDEN.x;
  p.y = WARDEN.y + 130;
  const aimUp = quantizeAngle(-Math.PI / 2);
  const changes: number[] = [];
  for (let t = 0; t < 6000 && world.stage !== "cleared"; t++) {
    const events = world.step(input(world, 1, { aim: aimUp, buttons: Button.Fire }));
    const phase = ofType(events, "bossPhase").find((e) => e.phase > 0);
    if (!phase) continue;
    changes.push(phase.phase);
    assert.deepEqual(ofType(events, "bulletsCleared").map((e) => e.team), [Team.Enemy]);
    for (let i = 0; i < world.bullets.count; i++) {
      assert.notEqual(world.bullets.team[i], Team.Enemy, "an enemy bullet survived the clear");
    }
  }
  assert.deepEqual(changes, [1, 2, 3]);
  assert.equal(world.stage, "cleared");
  assert.equal(world.stats.get(1)!.damageDealt, world.boss!.maxHp, "every HP is credited");
});

Deno.test("an aimed spread warns leadTicks ahead along a locked aim, then fires along it", () => {
  const sniper: EnemyDef = {
    id: 1,
    name: "Sniper",
    hp: 1000,
    radiusPx: 15,
    contactDamage: 0,
    movement: { type: "stationary" },
    emitters: [{
      type: "aimedSpread",
      count: 1,
      spreadRad: 0,
      speedPxPerS: 200,
      periodTicks: 90,
      startDelayTicks: 60,
      telegraph: AIM_LINE,
      bullet: NEEDLE,
    }],
  };
  const world = new SimWorld(room(), { seed: 1 });
  const p = world.addPlayer(1, "a");
  p.x = 640;
  p.y = 700;
  const e = world.spawnEnemy(sniper, 640, 300);
  let warning: Extract<SimEvent, { type: "telegraph" }> | undefined;
  let warnedAt = -1;
  let shot: { tick: number; angle: number } | undefined;
  for (let t = 0; t < 200 && !shot; t++) {
    const tick = world.tick;
    // After the warning the ship runs right: the shot must still go where the line showed.
    const events = world.step(input(world, 1, { moveX: warning ? 100 : 0 }));
    const w = ofType(events, "telegraph")[0];
    if (w) [warning, warnedAt] = [w, tick];
    const v = ofType(events, "volley").find((v) => v.volley.team === Team.Enemy);
    if (v) shot = { tick, angle: v.volley.angles[0] };
  }
  assert.ok(warning && shot);
  assert.equal(warning.source, "enemy");
  assert.equal(warning.sourceId, e.id);
  assert.equal(warning.style, "line");
  assert.equal(warning.leadTicks, AIM_LINE.leadTicks);
  assert.equal(shot.tick - warnedAt, AIM_LINE.leadTicks);
  assert.ok(Math.abs(warning.aimRad - Math.PI / 2) < 1e-9, "aimed straight down at the ship");
  assert.equal(shot.angle, quantizeAngle(warning.aimRad), "fired along the warned line");
});

Deno.test("a ring warns with a flash on the emitter; an emitter without telegraph never warns", () => {
  const boss: BossDef = {
    ...WARDEN,
    phases: [{
      name: "Only",
      fromHpFrac: 1,
      damageTakenMult: 1,
      emitters: [
        {
          type: "ring",
          count: 8,
          speedPxPerS: 100,
          periodTicks: 60,
          telegraph: RING_FLASH,
          bullet: ORB,
        },
        { type: "ring", count: 4, speedPxPerS: 100, periodTicks: 45, bullet: ORB },
      ],
    }],
  };
  const world = new SimWorld(room({ boss, waveDelayTicks: 1 }), { seed: 1 });
  world.addPlayer(1, "a");
  const warnings: Extract<SimEvent, { type: "telegraph" }>[] = [];
  for (let t = 0; t < 200; t++) warnings.push(...ofType(world.step(input(world, 1)), "telegraph"));
  assert.ok(warnings.length >= 3);
  for (const w of warnings) {
    assert.equal(w.source, "boss");
    assert.equal(w.emitter, 0);
    assert.equal(w.style, "flash");
  }
});

Deno.test("run stats survive leaving the world: damage, hits, grazes and how it ended", () => {
  const world = new SimWorld(room(), { seed: 1 });
  const p = world.addPlayer(1, "a");
  const dummy: EnemyDef = {
    id: 0,
    name: "Dummy",
    hp: 5,
    radiusPx: 16,
    contactDamage: 0,
    movement: { type: "stationary" },
    emitters: [],
  };
  world.spawnEnemy(dummy, p.x, p.y - 200);
  const up = quantizeAngle(-Math.PI / 2);
  for (let i = 0; i < 120; i++) world.step(input(world, 1, { aim: up, buttons: Button.Fire }));
  assert.equal(world.enemies.length, 0);
  // Five HP killed by 1-damage shots: 5 dealt, never more than the enemy had.
  assert.equal(world.stats.get(1)!.damageDealt, 5);
  world.removePlayer(1);
  assert.equal(world.stats.get(1)!.status, "left");
  assert.equal(world.stats.get(1)!.name, "a");
});
