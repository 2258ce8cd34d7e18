/**
 * The netField check (after Quake III's msg.c): every field of the simulation's state
 * has a wire decision, and every field that travels survives the wire bit for bit.
 * Add a field to BulletPool, BulletSpec, a PlayerState or an EnemyState without
 * deciding how it travels and one of these fails.
 */
import assert from "node:assert/strict";
import { CONTENT, FOLD, PLAYER } from "../../../content/mod.ts";
import {
  BULLET_FIELD_NAMES,
  BulletPool,
  type BulletSpec,
  type Grid,
  SimWorld,
  spawnVolley,
  stepBullets,
  type Volley,
  type WorldDef,
} from "../../../sim/mod.ts";
import { think, viewOfWorld } from "../../../sim/pilot.ts";
import { bulletStates } from "../../../net/server/instance.ts";
import {
  BOSS_STATE_WIRE,
  BULLET_STATE,
  decodeServerMessage,
  decodeVolleys,
  encodeServerMessage,
  encodeVolleys,
  ENEMY_SNAP,
  ENEMY_STATE_WIRE,
  EVENTS,
  MessageDecoder,
  MessageEncoder,
  PLAYER_SNAP,
  PLAYER_STATE_WIRE,
  ServerKind,
  VOLLEY_HEADER,
  WIRE_TYPES,
  type WireDecision,
  WORLD_STATE_WIRE,
} from "../../../net/wire/mod.ts";

/** The dungeon with no trash: the boss appears after one tick. */
const BOSS_ROOM: WorldDef = { ...FOLD, waves: [], waveDelayTicks: 1 };

/**
 * A boss fight of up to `ticks` with four pilots, stopped early once `until` holds;
 * returns the world and every volley it fired.
 */
function fight(
  ticks: number,
  until: (world: SimWorld) => boolean = () => false,
): { world: SimWorld; volleys: Volley[] } {
  const world = new SimWorld(BOSS_ROOM, { seed: 5 });
  for (let id = 1; id <= 4; id++) world.addPlayer(id, `p${id}`);
  const volleys: Volley[] = [];
  for (let t = 0; t < ticks && !until(world); t++) {
    const inputs = new Map();
    for (const p of world.players.values()) {
      if (p.status !== "active") continue;
      inputs.set(p.id, think(viewOfWorld(world, p), { tick: world.tick, style: p.id }));
    }
    for (const e of world.step(inputs)) if (e.type === "volley") volleys.push(e.volley);
  }
  return { world, volleys };
}

/** Every field of every live bullet is the same number, bit for bit (NaN and -0 included). */
function assertSamePools(a: BulletPool, b: BulletPool, what: string): void {
  assert.equal(b.count, a.count, `${what}: bullet count`);
  for (let i = 0; i < a.count; i++) {
    for (const name of BULLET_FIELD_NAMES) {
      assert.ok(
        Object.is(a[name][i], b[name][i]),
        `${what}: bullet ${a.uid[i]} field ${name} is ${b[name][i]}, expected ${a[name][i]}`,
      );
    }
  }
}

Deno.test("BulletPool holds one typed array per BULLET_FIELDS entry, and Enter carries each", () => {
  const pool = new BulletPool(4);
  const arrays = Object.keys(pool).filter((k) =>
    ArrayBuffer.isView((pool as unknown as Record<string, unknown>)[k])
  );
  assert.deepEqual(arrays.sort(), [...BULLET_FIELD_NAMES].sort());
  assert.deepEqual(Object.keys(BULLET_STATE), [...BULLET_FIELD_NAMES]);
  pool.grow();
  assert.equal(pool.capacity, 8);
  for (const name of BULLET_FIELD_NAMES) assert.equal(pool[name].length, 8, name);
});

Deno.test("every bullet in flight reaches a joiner through Enter bit for bit, and flies on the same", () => {
  const { world } = fight(1800, (w) => w.bullets.count >= 150);
  assert.ok(world.bullets.count >= 150, `a real bullet field (${world.bullets.count})`);
  const bytes = encodeServerMessage(new MessageEncoder(), {
    kind: ServerKind.Enter,
    instanceId: "dungeon-1",
    worldId: 1,
    tick: world.tick,
    reason: 1,
    roster: [],
    stage: 2,
    bullets: bulletStates(world.bullets),
  });
  const msg = decodeServerMessage(new MessageDecoder(), bytes);
  assert.equal(msg.kind, ServerKind.Enter);
  if (msg.kind !== ServerKind.Enter) return;
  const joiner = new BulletPool();
  for (const b of msg.bullets) joiner.add(b);
  assertSamePools(world.bullets, joiner, "after Enter");
  for (let t = 0; t < 120; t++) {
    stepBullets(world.bullets, BOSS_ROOM.arena);
    stepBullets(joiner, BOSS_ROOM.arena);
  }
  assertSamePools(world.bullets, joiner, "120 ticks later");
});

Deno.test("every volley of a fight, decoded off the wire, spawns bullets identical in every field", () => {
  const { volleys } = fight(900);
  const players = volleys.filter((v) => v.team === 1).length;
  assert.ok(players > 50 && volleys.length - players > 50, "player shots and boss volleys");
  const kinds = new Set(volleys.map((v) => v.spec.kind));
  assert.ok(kinds.size >= 4, `several bullet kinds (${[...kinds]})`);
  for (const v of volleys) {
    const [back] = decodeVolleys(encodeVolleys([v], v.birthTick), v.birthTick);
    const server = new BulletPool(1);
    const client = new BulletPool(1);
    spawnVolley(server, v);
    spawnVolley(client, back);
    assertSamePools(server, client, `volley ${v.uid0}`);
  }
});

/** Every bullet spec the shipped content fires. */
function contentSpecs(): BulletSpec[] {
  const specs: BulletSpec[] = [PLAYER.shot];
  for (const e of CONTENT.enemies) for (const em of e.emitters) specs.push(em.bullet);
  for (const b of CONTENT.bosses) {
    for (const p of b.phases) for (const em of p.emitters) specs.push(em.bullet);
  }
  return specs;
}

Deno.test("every BulletSpec field has a volley header field whose wire type holds its grid", () => {
  const header = VOLLEY_HEADER as Record<string, { type: keyof typeof WIRE_TYPES; grid: Grid }>;
  for (const spec of contentSpecs()) {
    for (const key of Object.keys(spec)) {
      assert.ok(key in header, `BulletSpec.${key} has no wire field`);
    }
  }
  for (const [name, f] of Object.entries(header)) {
    const range = WIRE_TYPES[f.type];
    assert.ok(
      Math.round(f.grid.min * f.grid.per) >= range.min,
      `${name}: grid minimum fits ${f.type}`,
    );
    assert.ok(
      Math.round(f.grid.max * f.grid.per) <= range.max,
      `${name}: grid maximum fits ${f.type}`,
    );
  }
});

/** Checks a decision table against a live object and the wire tables it names. */
function assertDecided(
  live: object,
  table: Record<string, WireDecision>,
  opts: { what: string; extra?: readonly string[] },
): void {
  const fields = [...Object.keys(live), ...(opts.extra ?? [])].sort();
  assert.deepEqual(Object.keys(table).sort(), fields, `${opts.what}: a wire decision per field`);
  const records: Record<string, object> = { PLAYER_SNAP, ENEMY_SNAP, EVENTS };
  for (const [field, decision] of Object.entries(table)) {
    if (!("sent" in decision)) continue;
    const [where, name] = decision.sent.split(".");
    if (records[where]) {
      assert.ok(name in records[where], `${opts.what}.${field}: ${decision.sent}`);
    }
  }
}

Deno.test("every field of a ship, an enemy, the boss and the world has a wire decision", () => {
  const world = new SimWorld(BOSS_ROOM, { seed: 1 });
  const player = world.addPlayer(1, "Ada");
  const enemy = world.spawnEnemy(CONTENT.enemies[0], 100, 100);
  world.step(new Map());
  world.step(new Map());
  assert.ok(world.boss, "the boss is up");
  assertDecided(player, PLAYER_STATE_WIRE, { what: "PlayerState" });
  assertDecided(enemy, ENEMY_STATE_WIRE, { what: "EnemyState" });
  assertDecided(world.boss, BOSS_STATE_WIRE, { what: "BossState" });
  assertDecided(world, WORLD_STATE_WIRE, { what: "SimWorld" });
  // The decisions name real snapshot fields, and the snapshot tables carry nothing undecided.
  const sentFrom = (t: Record<string, WireDecision>) =>
    Object.values(t).flatMap((d) => "sent" in d ? [d.sent] : []);
  for (const name of Object.keys(PLAYER_SNAP)) {
    assert.ok(sentFrom(PLAYER_STATE_WIRE).includes(`PLAYER_SNAP.${name}`), `PLAYER_SNAP.${name}`);
  }
  for (const name of Object.keys(ENEMY_SNAP)) {
    assert.ok(sentFrom(ENEMY_STATE_WIRE).includes(`ENEMY_SNAP.${name}`), `ENEMY_SNAP.${name}`);
  }
});
