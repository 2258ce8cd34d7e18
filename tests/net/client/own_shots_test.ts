/**
 * Predicted own shots, unit by unit: the server's fire rule replayed on the client
 * (FireRule), and the replica drawing a shot at the muzzle, matching it to the
 * server's volley by owner and birth tick (one copy, never two), taking back the
 * ones the server never fired, and retiring shots on the enemies as drawn.
 */
import assert from "node:assert/strict";
import { FireRule } from "../../../net/client/fire_rule.ts";
import { BulletReplica, type OwnShotNote, type ShotStrike } from "../../../net/client/replica.ts";
import {
  Button,
  quantizeAngle,
  quantizePos,
  SimWorld,
  Team,
  type Volley,
} from "../../../sim/mod.ts";
import { PLAYER } from "../../../content/mod.ts";

const ARENA = { widthPx: 1280, heightPx: 960, walls: [], spawnPoints: [{ x: 640, y: 800 }] };
const C = PLAYER.fireCooldownTicks;

function f(tick: number, buttons: number = Button.Fire) {
  return { tick, moveX: 0, moveY: 0, aim: 0, buttons };
}

Deno.test("FireRule fires on held Fire once per cooldown, as the world does", () => {
  // The world's own cooldown, 120 ticks of Fire held: the ticks it fires on.
  const world = new SimWorld({
    kind: "dungeon",
    name: "Range",
    arena: ARENA,
    player: PLAYER,
    waves: [],
    waveDelayTicks: 100_000,
  }, { seed: 1 });
  world.addPlayer(1, "p");
  const server: number[] = [];
  const client: number[] = [];
  const rule = new FireRule(C);
  for (let t = 0; t < 120; t++) {
    const buttons = t % 50 < 35 ? Button.Fire : 0; // bursts, as a thumb does
    const events = world.step(new Map([[1, { ...f(t, buttons) }]]));
    if (events.some((e) => e.type === "volley")) server.push(t);
    if (rule.fires(f(t, buttons), true)) client.push(t);
  }
  assert.ok(server.length > 10);
  assert.deepEqual(client, server);
});

Deno.test("FireRule holds fire while channelling an escape, and in the hub", () => {
  const rule = new FireRule(C);
  assert.equal(rule.fires(f(10, Button.Fire | Button.Escape), true), false);
  assert.equal(rule.fires(f(11), false), false, "not armed: the hub");
  assert.equal(rule.fires(f(12), true), true);
  assert.equal(rule.fires(f(13), true), false, "cooling down");
});

Deno.test("FireRule.restart() follows the server's last shot, not the client's guess", () => {
  const rule = new FireRule(C);
  assert.ok(rule.fires(f(100), true));
  rule.serverFired(103); // the server fired on another beat (it coasted a late frame)
  rule.restart();
  assert.equal(rule.fires(f(106), true), false);
  assert.equal(rule.fires(f(109), true), true, "the next shot is 103 + cooldown");
});

/** A replica for player 7 recording what became of its shots. */
function replica(): { r: BulletReplica; notes: OwnShotNote[] } {
  const notes: OwnShotNote[] = [];
  const r = new BulletReplica(ARENA, { tick: 100, onOwnShot: (n) => notes.push(n) });
  r.ownerId = 7;
  return { r, notes };
}

/** The shot the server fires for player 7 on `tick` from (x, y), aimed up. */
function volley(tick: number, at: { x: number; y: number }, uid0 = 500): Volley {
  return {
    birthTick: tick,
    uid0,
    team: Team.Player,
    owner: 7,
    spec: PLAYER.shot,
    speedPxPerS: PLAYER.shotSpeedPxPerS,
    xs: [quantizePos(at.x)],
    ys: [quantizePos(at.y)],
    angles: [quantizeAngle(-Math.PI / 2)],
  };
}

function shotOf(at: { x: number; y: number }) {
  const v = volley(0, at);
  return { spec: v.spec, speedPxPerS: v.speedPxPerS, xs: v.xs, ys: v.ys, angles: v.angles };
}

Deno.test("a predicted shot is drawn at the muzzle at once and becomes the server's on its volley", () => {
  const { r, notes } = replica();
  const muzzle = { x: 640, y: 800 };
  r.predict(shotOf(muzzle));
  assert.equal(r.pool.count, 1);
  assert.deepEqual([r.pool.x[0], r.pool.y[0]], [muzzle.x, muzzle.y], "at the muzzle");
  r.advanceTo(120); // 20 ticks of flight before the server's word arrives
  const flown = { x: r.pool.x[0], y: r.pool.y[0] };
  r.applyEvents({ kind: 15, tick: 99, volleys: [volley(100, muzzle)], hits: [], events: [] });
  assert.equal(r.pool.count, 1, "one shot, not two");
  assert.equal(r.pool.uid[0], 500, "it carries the server's uid now");
  assert.ok(Math.hypot(r.pool.x[0] - flown.x, r.pool.y[0] - flown.y) < 1e-9, "where it was");
  assert.deepEqual(notes.map((n) => n.outcome), ["predicted", "confirmed"]);
  assert.equal(notes[1].serverUid, 500);
  r.hit({ uid: 500, target: 1, targetId: 3, damage: 1 });
  assert.equal(r.pool.count, 0, "the server's hit removes it by its uid");
});

Deno.test("a shot the server fired from elsewhere replaces the predicted one where the server has it", () => {
  const { r } = replica();
  r.predict(shotOf({ x: 640, y: 800 }));
  r.advanceTo(110);
  r.applyEvents({
    kind: 15,
    tick: 99,
    volleys: [volley(100, { x: 600, y: 800 })],
    hits: [],
    events: [],
  });
  assert.equal(r.pool.count, 1);
  assert.ok(Math.abs(r.pool.x[0] - 600) < 1e-9, "the server's position wins");
});

Deno.test("a predicted shot the server never fired disappears once its tick is settled", () => {
  const { r, notes } = replica();
  r.predict(shotOf({ x: 640, y: 800 }));
  r.advanceTo(110);
  r.settle(99);
  assert.equal(r.pool.count, 1, "not yet: the server has not reported tick 100");
  r.settle(100);
  assert.equal(r.pool.count, 0);
  assert.deepEqual(notes.map((n) => n.outcome), ["predicted", "refused"]);
});

Deno.test("unpredict() and unpredictAfter() take back shots the server will not fire", () => {
  const { r } = replica();
  for (let t = 101; t <= 104; t++) {
    r.advanceTo(t);
    r.predict(shotOf({ x: 640, y: 800 }));
  }
  assert.equal(r.pool.count, 4);
  r.unpredict(101);
  assert.ok(!r.predictedAt(101) && r.predictedAt(102));
  r.unpredictAfter(102);
  assert.equal(r.pool.count, 1);
  assert.ok(r.predictedAt(102) && !r.predictedAt(103));
});

Deno.test("a late prediction is fast-forwarded from its tick, as the server's volley would be", () => {
  const { r } = replica();
  r.advanceTo(110);
  r.predict(shotOf({ x: 640, y: 800 }), 104);
  const late = { x: r.pool.x[0], y: r.pool.y[0] };
  r.applyEvents({
    kind: 15,
    tick: 99,
    volleys: [volley(104, { x: 640, y: 800 })],
    hits: [],
    events: [],
  });
  assert.ok(Math.hypot(r.pool.x[0] - late.x, r.pool.y[0] - late.y) < 1e-9);
  assert.ok(Math.abs(late.y - (800 - 6 * (PLAYER.shotSpeedPxPerS / 60))) < 1e-6, "six ticks out");
});

Deno.test("player shots vanish on an enemy as drawn, with no word from the server, and spark there", () => {
  const struck: ShotStrike[] = [];
  const r = new BulletReplica(ARENA, { tick: 100, onShotStruck: (s) => struck.push(s) });
  r.ownerId = 7;
  r.shotTargets = () => [{ id: 3, x: 640, y: 700, r: 12 }];
  r.predict(shotOf({ x: 640, y: 800 }));
  let tick = 100;
  while (r.pool.count > 0 && tick < 130) r.advanceTo(++tick);
  assert.equal(r.pool.count, 0);
  assert.equal(r.predictedHitsTotal, 1);
  // It died as it touched the drawn enemy: 100 px at 11.67 px a tick, ~7 ticks.
  assert.ok(tick - 100 <= 8, `took ${tick - 100} ticks`);
  assert.equal(struck.length, 1, "one spark");
  assert.equal(struck[0].enemyId, 3, "on the enemy it touched");
  const d = Math.hypot(struck[0].x - 640, struck[0].y - 700);
  assert.ok(d <= 12 + PLAYER.shot.radiusPx, `where it touched the drawn enemy (${d} px)`);
  // The server's volley for it, arriving later, brings no second copy.
  r.applyEvents({
    kind: 15,
    tick: 99,
    volleys: [volley(100, { x: 640, y: 800 })],
    hits: [{ uid: 500, target: 1, targetId: 3, damage: 1 }],
    events: [],
  });
  assert.equal(r.pool.count, 0);
  assert.equal(r.impactOf(500), undefined, "the server's hit finds it gone: no second spark");
});

Deno.test("a shot that dies on the boss, an ally's never drawn, is reported where it hit", () => {
  const sunk: { x: number; y: number }[] = [];
  const r = new BulletReplica(ARENA, { tick: 100, onShotSunk: (x, y) => sunk.push({ x, y }) });
  r.ownerId = 7;
  const boss = { x: 640, y: 300, r: 40 };
  r.setShotSink(boss, 0);
  // Player 9's shot from 200 px under the boss arrives 30 ticks late (350 px of flight):
  // fast-forwarded, it is in the boss before the replica ever draws it.
  const ally = { ...volley(70, { x: 640, y: 500 }, 900), owner: 9 };
  r.applyEvents({ kind: 15, tick: 69, volleys: [ally], hits: [], events: [] });
  assert.equal(r.pool.count, 0, "never drawn");
  assert.equal(sunk.length, 1, "but its hit is reported");
  const d = Math.hypot(sunk[0].x - boss.x, sunk[0].y - boss.y);
  assert.ok(d <= boss.r + PLAYER.shot.radiusPx && d > boss.r - 12, `at the boss's edge (${d} px)`);
  // An own predicted shot flown into the boss is reported too, once.
  r.predict(shotOf({ x: 640, y: 420 }));
  r.advanceTo(130);
  assert.equal(sunk.length, 2);
  assert.equal(r.pool.count, 0);
});
