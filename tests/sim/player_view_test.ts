/**
 * What a player saw of the enemies (sim/player_view.ts) and how the world judges by
 * it: the picture a client draws on the present tick is the world's own movement run
 * forward from a snapshot, so the server can rebuild it; shots count where the shooter
 * saw the enemy too, contact only where the player saw it touch them too, and never
 * from further back than the rewind limit.
 */
import assert from "node:assert/strict";
import {
  type EnemyDef,
  type EnemySample,
  type InputFrame,
  onGrid,
  quantizeAngle,
  quantizePos,
  type SimEvent,
  SimWorld,
  spawnVolley,
  Team,
  viewEnemies,
  ViewHistory,
  type WorldDef,
} from "../../sim/mod.ts";
import { CHASER, GUNNER, PLAYER, SPINNER } from "../../content/mod.ts";

const OPEN = { widthPx: 1280, heightPx: 960, walls: [], spawnPoints: [{ x: 640, y: 800 }] };
const ROOM: WorldDef = {
  kind: "dungeon",
  name: "View Room",
  arena: OPEN,
  player: PLAYER,
  waves: [],
  waveDelayTicks: 100_000,
};
/** The rewind limit and snapshot interval the server runs with. */
const REWIND = 15;
const GAP = 3;

function frame(world: SimWorld, over: Partial<InputFrame> = {}): Map<number, InputFrame> {
  const p = world.players.get(1)!;
  return new Map([[1, { tick: world.tick, moveX: 0, moveY: 0, aim: p.aim, buttons: 0, ...over }]]);
}

function sample(world: SimWorld): EnemySample[] {
  return world.enemies.map((e) => ({ id: e.id, def: e.def, x: onGrid(e.x), y: onGrid(e.y) }));
}

function ofType<T extends SimEvent["type"]>(events: SimEvent[], type: T) {
  return events.filter((e): e is Extract<SimEvent, { type: T }> => e.type === type);
}

Deno.test("viewEnemies() runs a chaser after the viewer's own path exactly as the world does", () => {
  const world = new SimWorld(ROOM, { seed: 1 });
  world.addPlayer(1, "p");
  world.spawnEnemy(CHASER, 300, 300);
  const path = new Map<number, { x: number; y: number }>();
  let before: EnemySample[] = [];
  let base: { tick: number; enemies: EnemySample[] } | undefined;
  // The player weaves; the chaser follows. Snapshot samples at ticks 30 and 33.
  for (let t = 0; t < 60; t++) {
    const move = { moveX: t % 20 < 10 ? 100 : -60, moveY: -40 };
    world.step(frame(world, move));
    const p = world.players.get(1)!;
    path.set(world.tick - 1, { x: p.x, y: p.y });
    if (world.tick - 1 === 30) before = sample(world);
    if (world.tick - 1 === 33) base = { tick: 33, enemies: sample(world) };
  }
  const seen = viewEnemies({ ...base!, before, others: [] }, {
    ticks: world.tick - 1 - 33,
    arena: OPEN,
    selfAt: (t) => path.get(t),
  });
  const truth = world.enemies[0];
  const err = Math.hypot(seen[0].x - truth.x, seen[0].y - truth.y);
  console.log(`chaser drawn 26 ticks past its snapshot: ${err.toFixed(3)} px from the server's`);
  assert.ok(err < 0.25, `${err} px apart`);
});

Deno.test("viewEnemies() keeps a drifter's heading from its last two samples, bouncing as the world does", () => {
  const world = new SimWorld(ROOM, { seed: 4 });
  world.addPlayer(1, "p");
  const e = world.spawnEnemy(SPINNER, 30, 480);
  e.dirX = -0.6;
  e.dirY = 0.8; // heading for the left wall: it bounces inside the window
  world.step(frame(world));
  const before = sample(world);
  for (let t = 0; t < 3; t++) world.step(frame(world));
  const base = { tick: world.tick - 1, enemies: sample(world), before, others: [] };
  for (let t = 0; t < 60; t++) world.step(frame(world));
  const p = world.players.get(1)!;
  const [seen] = viewEnemies(base, { ticks: 60, arena: OPEN, selfAt: () => p });
  const err = Math.hypot(seen.x - e.x, seen.y - e.y);
  assert.ok(e.dirX > 0, "the drifter did bounce");
  assert.ok(err < 1, `drawn ${err} px from the server's`);
});

Deno.test("viewEnemies() keeps a distance-keeper circling the way it was circling", () => {
  for (const strafe of [1, -1]) {
    const world = new SimWorld(ROOM, { seed: 2 });
    const p = world.addPlayer(1, "p");
    const e = world.spawnEnemy(GUNNER, p.x, p.y - 250);
    (e as { strafe: number }).strafe = strafe;
    world.step(frame(world));
    const before = sample(world);
    for (let t = 0; t < 3; t++) world.step(frame(world));
    const base = { tick: world.tick - 1, enemies: sample(world), before, others: [] };
    for (let t = 0; t < 20; t++) world.step(frame(world));
    const [seen] = viewEnemies(base, { ticks: 20, arena: OPEN, selfAt: () => p });
    const err = Math.hypot(seen.x - e.x, seen.y - e.y);
    assert.ok(err < 1, `strafe ${strafe}: drawn ${err} px from the server's`);
  }
});

Deno.test("ViewHistory.seenBy() is the truth at lag 0 and never reaches past the rewind limit", () => {
  const history = new ViewHistory({ maxRewindTicks: REWIND, gapTicks: GAP });
  const enemy = (x: number): EnemySample => ({ id: 7, def: CHASER, x, y: 100 });
  for (let t = 0; t <= 100; t++) {
    // One pixel a tick, rightwards.
    history.record(t, [enemy(t)], [{ id: 1, x: 0, y: 900, status: "active" }]);
  }
  assert.equal(history.seenBy(1, { tick: 100, lagTicks: 0, arena: OPEN }), undefined);
  const seen = history.seenBy(1, { tick: 100, lagTicks: 5, arena: OPEN })!.get(7)!;
  assert.ok(Math.abs(seen.x - 95) < 3, `a 5-tick-old picture starts at x 95 (${seen.x})`);
  const capped = history.seenBy(1, { tick: 100, lagTicks: 200, arena: OPEN })!.get(7)!;
  const atLimit = history.seenBy(1, { tick: 100, lagTicks: REWIND, arena: OPEN })!.get(7)!;
  assert.deepEqual(capped, atLimit, "a 200-tick lag is judged as the limit");
});

/** A world that judges by what players saw, with one player and one enemy. */
function judgedWorld(enemyDef: EnemyDef = CHASER): { world: SimWorld; enemyId: number } {
  const world = new SimWorld(ROOM, { seed: 9, maxRewindTicks: REWIND, viewGapTicks: GAP });
  world.addPlayer(1, "p");
  const e = world.spawnEnemy(enemyDef, 640, 200);
  return { world, enemyId: e.id };
}

Deno.test("contact lands only where the player saw the enemy touch them too", () => {
  // A chaser jumps onto a still ship: a move no picture could foresee. Seen at once, it
  // hurts at once; seen 15 ticks late, not until the picture shows it there too.
  const hurtTicksAfterJump = (lag: number) => {
    const { world } = judgedWorld();
    const p = world.players.get(1)!;
    for (let t = 0; t < 20; t++) world.step(frame(world, { viewLag: lag }));
    const e = world.enemies[0];
    e.x = p.x;
    e.y = p.y - 15;
    for (let t = 0; t < 60; t++) {
      if (ofType(world.step(frame(world, { viewLag: lag })), "playerHit").length > 0) return t;
    }
    throw new Error("never hurt");
  };
  const now = hurtTicksAfterJump(0);
  const late = hurtTicksAfterJump(REWIND);
  console.log(`hurt ${now} ticks after the jump seen at once, ${late} seen 15 ticks late`);
  assert.equal(now, 0);
  assert.ok(late >= REWIND - GAP && late <= REWIND, `hurt ${late} ticks after the jump`);
});

Deno.test("a shot counts where its owner saw the enemy, though the enemy has moved on", () => {
  // A drifter slips 15 px sideways (an unforeseen move); a shot lands just short of the
  // spot it left, on the far side. The shooter who still sees it there (15 ticks late)
  // hits; one who sees the present misses.
  const fire = (lag: number) => {
    const { world, enemyId } = judgedWorld(SPINNER);
    const e = world.enemies[0];
    e.dirX = 0;
    e.dirY = 0;
    for (let t = 0; t < 20; t++) world.step(frame(world, { viewLag: lag }));
    const was = { x: e.x, y: e.y };
    e.x += 15;
    world.step(frame(world, { viewLag: lag }));
    spawnVolley(world.bullets, {
      birthTick: world.tick,
      uid0: 5000,
      team: Team.Player,
      owner: 1,
      spec: PLAYER.shot,
      speedPxPerS: 0, // parked: only where the enemy is judged to be matters
      xs: [quantizePos(was.x - SPINNER.radiusPx - PLAYER.shot.radiusPx + 2)],
      ys: [quantizePos(was.y)],
      angles: [quantizeAngle(0)],
    });
    const hits = ofType(world.step(frame(world, { viewLag: lag })), "bulletHit");
    return { hits, enemyId };
  };
  assert.equal(fire(0).hits.length, 0, "the enemy is not there now");
  const { hits, enemyId } = fire(REWIND);
  assert.equal(hits.length, 1, "but the shooter saw it there");
  assert.equal(hits[0].targetId, enemyId);
});

Deno.test("a world without a rewind limit judges by the truth alone, whatever frames say", () => {
  const world = new SimWorld(ROOM, { seed: 9 });
  const p = world.addPlayer(1, "p");
  world.spawnEnemy(CHASER, p.x, p.y - 40);
  let hurt = 0;
  for (let t = 0; t < 60 && hurt === 0; t++) {
    hurt += ofType(world.step(frame(world, { viewLag: 200 })), "playerHit").length;
  }
  assert.equal(hurt, 1);
});
