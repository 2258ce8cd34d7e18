/**
 * A boss is data alone: a new boss, its bullets and its room are declared here and
 * fought through SimWorld with nothing added under sim/.
 */
import assert from "node:assert/strict";
import {
  type BossDef,
  type BulletSpec,
  HitTarget,
  type InputFrame,
  POS_UNITS_PER_PX,
  type SimEvent,
  SimWorld,
  Team,
  ticks,
  type Volley,
  type WorldDef,
} from "../../sim/mod.ts";
import { PLAYER } from "../../content/mod.ts";
import { think, viewOfWorld } from "../../sim/pilot.ts";

const DEG = Math.PI / 180;

/** A slow ember that gathers speed. */
const EMBER = {
  kind: 20,
  radiusPx: 5,
  ttlTicks: ticks(5),
  damage: 1,
  accelPxPerS2: 40,
  turnRadPerS: 0,
} as const satisfies BulletSpec;

/** A shard that curls back on itself. */
const SHARD = {
  kind: 21,
  radiusPx: 4,
  ttlTicks: ticks(4),
  damage: 1,
  accelPxPerS2: 0,
  turnRadPerS: -0.6,
} as const satisfies BulletSpec;

/** The Lantern: two phases, three emitters, none of them shared with any shipped boss. */
const LANTERN = {
  id: 7,
  name: "The Lantern",
  x: 480,
  y: 120,
  radiusPx: 30,
  baseHp: 60,
  hpPerExtraPlayer: 0.5,
  contactDamage: 1,
  foldTicks: ticks(0.5),
  phases: [
    {
      name: "Flicker",
      fromHpFrac: 1,
      damageTakenMult: 1,
      emitters: [{
        type: "ring",
        count: 6,
        rotateRad: 10 * DEG,
        speedPxPerS: 90,
        periodTicks: ticks(1),
        bullet: EMBER,
      }],
    },
    {
      name: "Blaze",
      fromHpFrac: 0.5,
      damageTakenMult: 1.5,
      emitters: [
        {
          type: "arcSweep",
          arcRad: 90 * DEG,
          centerRad: 90 * DEG,
          sweepRadPerS: 45 * DEG,
          direction: -1,
          arms: 2,
          speedPxPerS: 120,
          periodTicks: ticks(0.25),
          bullet: SHARD,
        },
        {
          type: "aimedSpread",
          count: 3,
          spreadRad: 20 * DEG,
          speedPxPerS: 150,
          periodTicks: ticks(1.5),
          startDelayTicks: ticks(0.5),
          bullet: SHARD,
        },
      ],
    },
  ],
} as const satisfies BossDef;

/** A small room with one pillar, no trash waves: the Lantern appears after one second. */
const LANTERN_ROOM = {
  kind: "dungeon",
  name: "The Lantern's Room",
  arena: {
    widthPx: 960,
    heightPx: 720,
    walls: [{ x: 200, y: 380, w: 50, h: 50 }],
    spawnPoints: [{ x: 400, y: 600 }, { x: 560, y: 600 }],
  },
  player: PLAYER,
  waves: [],
  waveDelayTicks: ticks(1),
  boss: LANTERN,
} as const satisfies WorldDef;

interface Fight {
  readonly world: SimWorld;
  readonly events: { readonly tick: number; readonly event: SimEvent }[];
}

/** Two scripted pilots fight the Lantern until it falls, they all fall, or time runs out. */
function fight(seed: number, maxTicks = ticks(120)): Fight {
  const world = new SimWorld(LANTERN_ROOM, { seed });
  world.addPlayer(1, "ash");
  world.addPlayer(2, "cinder");
  const events: Fight["events"][number][] = [];
  for (let t = 0; t < maxTicks; t++) {
    const inputs = new Map<number, InputFrame>();
    for (const p of world.players.values()) {
      if (p.status !== "active") continue;
      inputs.set(p.id, think(viewOfWorld(world, p), { tick: world.tick }));
    }
    const tick = world.tick;
    for (const event of world.step(inputs)) events.push({ tick, event });
    if (world.stage === "cleared") break;
    if (![...world.players.values()].some((p) => p.status === "active")) break;
  }
  return { world, events };
}

function bossVolleys(f: Fight): { tick: number; volley: Volley }[] {
  const out: { tick: number; volley: Volley }[] = [];
  for (const { tick, event } of f.events) {
    if (event.type === "volley" && event.volley.team === Team.Enemy) {
      out.push({ tick, volley: event.volley });
    }
  }
  return out;
}

function tickOf(f: Fight, match: (e: SimEvent) => boolean): number {
  const found = f.events.find(({ event }) => match(event));
  assert.ok(found, "event happened");
  return found.tick;
}

Deno.test("two scripted pilots defeat a boss declared only as data", () => {
  const f = fight(1);
  const types = f.events.map(({ event }) => event.type);
  assert.ok(types.includes("bossDefeated"), `boss still standing after ${f.world.tick} ticks`);
  assert.equal(f.world.stage, "cleared");
  assert.equal(f.world.boss?.def, LANTERN);
  assert.equal(f.world.boss?.hp, 0);
  assert.ok([...f.world.players.values()].some((p) => p.status === "active"));
});

Deno.test("the data boss appears with its own id and HP scaled for two pilots", () => {
  const f = fight(1);
  const spawned = f.events.filter(({ event }) => event.type === "bossSpawned");
  assert.deepEqual(spawned.map(({ event }) => event), [{
    type: "bossSpawned",
    bossId: 7,
    maxHp: 90, // 60 × (1 + 0.5 × 1)
  }]);
  assert.equal(spawned[0].tick, LANTERN_ROOM.waveDelayTicks);
});

Deno.test("the data boss goes through exactly its two phases, switching at half HP", () => {
  const f = fight(1);
  const phases = f.events.flatMap(({ event }) => event.type === "bossPhase" ? [event.phase] : []);
  assert.deepEqual(phases, [0, 1]);
  // Every landed hit before the switch deals 1; after it, 1.5.
  const switchTick = tickOf(f, (e) => e.type === "bossPhase" && e.phase === 1);
  let hpLeft = 90;
  let hpAtSwitch = NaN;
  for (const { tick, event } of f.events) {
    if (tick > switchTick && Number.isNaN(hpAtSwitch)) hpAtSwitch = hpLeft;
    if (event.type !== "bulletHit" || event.target !== HitTarget.Boss) continue;
    hpLeft -= event.damage;
    if (event.damage === 0) continue; // the fold
    if (tick <= switchTick) assert.equal(event.damage, 1);
    else assert.equal(event.damage, 1.5);
  }
  assert.equal(hpAtSwitch, 45);
  assert.ok(hpLeft <= 0);
});

Deno.test("the data boss fires its own emitters with its own bullets, phase by phase", () => {
  const f = fight(1);
  const switchTick = tickOf(f, (e) => e.type === "bossPhase" && e.phase === 1);
  const volleys = bossVolleys(f);
  const before = volleys.filter((v) => v.tick <= switchTick);
  const after = volleys.filter((v) => v.tick > switchTick);
  assert.ok(before.length > 0 && after.length > 0);
  for (const { volley } of before) {
    assert.equal(volley.spec, EMBER);
    assert.equal(volley.angles.length, 6);
    assert.equal(volley.speedPxPerS, 90);
    assert.ok(volley.xs.every((x) => x === LANTERN.x * POS_UNITS_PER_PX));
    assert.ok(volley.ys.every((y) => y === LANTERN.y * POS_UNITS_PER_PX));
  }
  for (const { volley } of after) assert.equal(volley.spec, SHARD);
  const shapes = new Set(
    after.map(({ volley }) => `${volley.angles.length}@${volley.speedPxPerS}`),
  );
  assert.deepEqual(shapes, new Set(["2@120", "3@150"]), "the sweep's two arms and the spread");
  // The ring fires once a second from the moment the boss appears.
  const spawnTick = tickOf(f, (e) => e.type === "bossSpawned");
  assert.deepEqual(
    before.slice(0, 3).map((v) => v.tick),
    [spawnTick, spawnTick + 60, spawnTick + 120],
  );
  // No shots during the fold.
  assert.ok(after[0].tick > switchTick + LANTERN.foldTicks);
});

Deno.test("fighting the data boss twice with one seed replays the same fight", () => {
  const a = fight(5);
  const b = fight(5);
  assert.deepEqual(
    a.events.map((e) => [e.tick, e.event.type]),
    b.events.map((e) => [e.tick, e.event.type]),
  );
});
