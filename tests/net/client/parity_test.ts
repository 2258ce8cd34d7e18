/**
 * Replica parity: the server's bullets and a client replica fed only by events
 * must hold the same bullets at the same places. If this fails, the bullets on
 * screen are no longer the bullets that can kill you.
 */
import assert from "node:assert/strict";
import { FOLD, ORB, PLAYER } from "../../../content/mod.ts";
import {
  type BulletPool,
  type InputFrame,
  quantizePos,
  SimWorld,
  Team,
  type Volley,
  type WorldDef,
} from "../../../sim/mod.ts";
import { think, viewOfWorld } from "../../../sim/pilot.ts";
import { BulletReplica } from "../../../net/client/replica.ts";
import { Instance, type Peer } from "../../../net/server/instance.ts";
import {
  decodeServerMessage,
  encodeServerMessage,
  MessageDecoder,
  MessageEncoder,
} from "../../../net/wire/codec.ts";
import { ServerKind } from "../../../net/wire/protocol.ts";
import { TICKS_PER_SNAPSHOT } from "../../../content/net_tuning.ts";

/** The dungeon with no trash: the Warden appears after one tick. */
const BOSS_ROOM: WorldDef = { ...FOLD, waves: [], waveDelayTicks: 1 };
const FIGHT_TICKS = 900;

function compare(
  server: BulletPool,
  replica: BulletPool,
  opts: { tick: number },
): number {
  const bySlot = new Map<number, number>();
  for (let i = 0; i < replica.count; i++) bySlot.set(replica.uid[i], i);
  assert.equal(replica.count, server.count, `bullet count on tick ${opts.tick}`);
  let worst = 0;
  for (let i = 0; i < server.count; i++) {
    const j = bySlot.get(server.uid[i]);
    assert.ok(j !== undefined, `bullet ${server.uid[i]} missing from the replica on ${opts.tick}`);
    const err = Math.hypot(server.x[i] - replica.x[j], server.y[i] - replica.y[j]);
    worst = Math.max(worst, err);
    assert.equal(err, 0, `bullet ${server.uid[i]} off by ${err} px on ${opts.tick}`);
    assert.equal(replica.kind[j], server.kind[i]);
    assert.equal(replica.team[j], server.team[i]);
  }
  return worst;
}

function pilots(world: SimWorld): Map<number, InputFrame> {
  const inputs = new Map<number, InputFrame>();
  for (const p of world.players.values()) {
    if (p.status === "active") {
      inputs.set(p.id, think(viewOfWorld(world, p), { tick: world.tick, style: p.id }));
    }
  }
  return inputs;
}

Deno.test("a replica fed the world's events in-process holds every bullet at the same place (0 px)", () => {
  const world = new SimWorld(BOSS_ROOM, { seed: 7 });
  for (let id = 1; id <= 4; id++) world.addPlayer(id, `p${id}`);
  const replica = new BulletReplica(BOSS_ROOM.arena, { tick: -1 });
  let peak = 0;
  let worst = 0;
  for (let t = 0; t < FIGHT_TICKS; t++) {
    const tick = world.tick;
    const events = world.step(pilots(world));
    replica.advanceTo(tick);
    for (const e of events) {
      if (e.type === "volley") replica.spawn(e.volley);
      else if (e.type === "bulletHit") replica.hit(e);
      else if (e.type === "bulletsCleared") replica.clearTeam(e.team);
    }
    worst = Math.max(worst, compare(world.bullets, replica.pool, { tick }));
    peak = Math.max(peak, world.bullets.count);
  }
  assert.equal(world.stage, "boss", "the fight was still on");
  assert.ok(peak >= 100, `a real bullet field (peak ${peak})`);
  assert.equal(worst, 0);
});

/** A peer that keeps every message the instance sends it. */
class RecordingPeer implements Peer {
  readonly sent: Uint8Array[] = [];
  constructor(readonly playerId: number, readonly name: string) {}
  sendReliable(data: Uint8Array): void {
    this.sent.push(data);
  }
  sendLatest(data: Uint8Array): boolean {
    this.sent.push(data);
    return true;
  }
}

/** Runs a boss fight in a real Instance and replays its wire bytes into a replica `delay` ticks late. */
function fightThroughWire(
  delayTicks: number,
  opts: { def?: WorldDef; untilCleared?: boolean } = {},
) {
  const def = opts.def ?? BOSS_ROOM;
  const instance = new Instance("parity", {
    worldId: 1,
    def,
    seed: 11,
    encoder: new MessageEncoder(),
  });
  const peers = [1, 2, 3, 4].map((id) => new RecordingPeer(id, `p${id}`));
  for (const p of peers) instance.join(p, 0);
  const watcher = peers[0];
  const decoder = new MessageDecoder();
  const inbox: { deliverAt: number; bytes: Uint8Array }[] = [];
  let replica: BulletReplica | undefined;
  let delivered = 0;
  const hitTick = new Map<number, number>();
  const firstSeen = new Map<number, number>();
  let worst = 0;
  let peak = 0;
  let clearedAt = -1;
  for (let t = 0; t < (opts.untilCleared ? 20_000 : FIGHT_TICKS); t++) {
    const world = instance.world;
    const tick = world.tick;
    if (world.stage === "cleared") {
      if (clearedAt < 0) clearedAt = tick;
      // Compared on the batches after the fall, then done.
      if (tick > clearedAt + 4 * TICKS_PER_SNAPSHOT) break;
    }
    for (const [id, frame] of pilots(world)) instance.offerInput(id, frame);
    instance.step();
    for (; delivered < watcher.sent.length; delivered++) {
      inbox.push({ deliverAt: tick + delayTicks, bytes: watcher.sent[delivered] });
    }
    while (inbox.length > 0 && inbox[0].deliverAt <= tick) {
      const msg = decodeServerMessage(decoder, inbox.shift()!.bytes);
      if (msg.kind === ServerKind.Enter) {
        replica = new BulletReplica(def.arena, { tick: msg.tick - 1, bullets: msg.bullets });
      } else if (msg.kind === ServerKind.Events && replica) {
        replica.advanceTo(tick);
        replica.applyEvents(msg);
      }
    }
    replica?.advanceTo(tick);
    if (!replica) continue;
    peak = Math.max(peak, world.bullets.count);
    if (delayTicks === 0) {
      // Events leave in one batch per snapshot interval: compare right after each batch.
      if (tick % TICKS_PER_SNAPSHOT !== 0) continue;
      if (clearedAt < 0) {
        worst = Math.max(worst, compare(world.bullets, replica.pool, { tick }));
        continue;
      }
      // After the fall: the replica kept retiring player shots on the boss until it heard of
      // it (a batch later), so it may miss a few of those; it must hold nothing else extra.
      const inServer = new Set(
        Array.from({ length: world.bullets.count }, (_, i) => world.bullets.uid[i]),
      );
      for (let j = 0; j < replica.pool.count; j++) {
        assert.ok(
          inServer.has(replica.pool.uid[j]),
          `replica keeps ${replica.pool.uid[j]} after the fall`,
        );
      }
      assert.equal(
        countTeam(world.bullets, Team.Enemy),
        0,
        "the server cleared every enemy bullet",
      );
      continue;
    }
    // Late by `delayTicks`: every server bullet old enough to have been announced is in the
    // replica at the same place, and every extra replica bullet died early on the server lately.
    const server = world.bullets;
    const inServer = new Map<number, number>();
    for (let i = 0; i < server.count; i++) inServer.set(server.uid[i], i);
    const inReplica = new Set<number>();
    for (let j = 0; j < replica.pool.count; j++) inReplica.add(replica.pool.uid[j]);
    for (const uid of inServer.keys()) {
      if (!firstSeen.has(uid)) firstSeen.set(uid, tick);
      const age = tick - firstSeen.get(uid)!;
      // Announced in the batch after its birth (≤ 2 ticks later), heard `delayTicks` after that.
      const announced = age > delayTicks + TICKS_PER_SNAPSHOT - 1;
      assert.ok(inReplica.has(uid) || !announced, `bullet ${uid} (age ${age}) not replicated`);
    }
    for (let j = 0; j < replica.pool.count; j++) {
      const uid: number = replica.pool.uid[j];
      const i = inServer.get(uid);
      if (i === undefined) {
        hitTick.set(uid, hitTick.get(uid) ?? tick);
        const since = tick - hitTick.get(uid)!;
        assert.ok(since < delayTicks + TICKS_PER_SNAPSHOT, `replica keeps dead bullet ${uid}`);
        continue;
      }
      const err = Math.hypot(server.x[i] - replica.pool.x[j], server.y[i] - replica.pool.y[j]);
      worst = Math.max(worst, err);
      assert.equal(err, 0, `bullet ${uid} off by ${err} px on tick ${tick}`);
    }
  }
  return {
    worst,
    peak,
    stage: instance.world.stage,
    enemyLeft: replica ? countTeam(replica.pool, Team.Enemy) : -1,
  };
}

function countTeam(pool: BulletPool, team: number): number {
  let n = 0;
  for (let i = 0; i < pool.count; i++) if (pool.team[i] === team) n++;
  return n;
}

Deno.test("a replica fed through the real codec holds every bullet at the server's place (0 px)", () => {
  const { worst, peak, stage } = fightThroughWire(0);
  console.log(`worst error through the codec: ${worst} px, peak ${peak} bullets`);
  assert.equal(stage, "boss");
  assert.ok(peak >= 100, `a real bullet field (peak ${peak})`);
  assert.equal(worst, 0);
});

Deno.test("a replica 9 ticks behind the wire fast-forwards every bullet to its server place", () => {
  const { worst, peak } = fightThroughWire(9);
  assert.ok(peak >= 100, `a real bullet field (peak ${peak})`);
  assert.equal(worst, 0);
});

Deno.test("through the real codec to the Warden's fall: the replica matches, with no enemy bullet left", () => {
  // Heavy shots so that the pilots finish the Warden in a few hundred ticks.
  const def: WorldDef = {
    ...BOSS_ROOM,
    player: { ...PLAYER, shot: { ...PLAYER.shot, damage: 12 } },
  };
  const { worst, stage, enemyLeft } = fightThroughWire(0, { def, untilCleared: true });
  assert.equal(stage, "cleared", "the Warden fell");
  assert.equal(enemyLeft, 0, "the replica cleared every enemy bullet with the server");
  assert.equal(worst, 0);
});

/** An enemy volley of `n` motionless orbs born on `tick`. */
function orbs(tick: number, uid0: number, n = 3): Volley {
  return {
    birthTick: tick,
    uid0,
    team: Team.Enemy,
    owner: -1,
    spec: ORB,
    speedPxPerS: 0,
    xs: Array.from({ length: n }, (_, i) => quantizePos(100 + 40 * i)),
    ys: Array(n).fill(quantizePos(300)),
    angles: Array(n).fill(0),
  };
}

Deno.test("a clear takes the volleys of its batch born up to its tick and spares later ones", () => {
  const enc = new MessageEncoder();
  const dec = new MessageDecoder();
  const replica = new BulletReplica(FOLD.arena, { tick: 99 });
  const bytes = encodeServerMessage(enc, {
    kind: ServerKind.Events,
    tick: 100,
    volleys: [orbs(100, 1), orbs(101, 4), orbs(102, 7)],
    hits: [],
    events: [{ type: "bulletsCleared", team: Team.Enemy, tick: 101 }],
  });
  const msg = decodeServerMessage(dec, bytes);
  assert.ok(msg.kind === ServerKind.Events);
  replica.advanceTo(103);
  replica.applyEvents(msg);
  const uids = Array.from({ length: replica.pool.count }, (_, i) => replica.pool.uid[i]).sort();
  assert.deepEqual(uids, [7, 8, 9], "only the volley born after the clear flies on");
});
