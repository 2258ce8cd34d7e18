/**
 * Instances and transfers, in process on a ManualClock: ClientRuntimes walk into
 * the hub's portal, escape, die and hang up, and the server's instances, its
 * Enter messages and its clock's timers are checked at each turn.
 */
import assert from "node:assert/strict";
import { TICKS_PER_SNAPSHOT, TRANSFER_DELAYS } from "../../../content/net_tuning.ts";
import { CANTOR, CONTENT, FOLD, HUB, PLAYER, WARDEN, worldByKey } from "../../../content/mod.ts";
import { Instance, type Peer } from "../../../net/server/instance.ts";
import { decodeServerMessage, MessageDecoder, MessageEncoder } from "../../../net/wire/codec.ts";
import { CloseCode, EnterReason, type EventName, ServerKind } from "../../../net/wire/protocol.ts";
import { decodeSnapshotBody, type SnapshotUnits } from "../../../net/wire/snapshot_delta.ts";
import { type BossDef, Button, quantizeAngle } from "../../../sim/mod.ts";
import {
  type Control,
  dist,
  IDLE,
  NetHarness,
  type SimClient,
  steerTo,
  toPortal,
} from "../_harness.ts";

/** Walks to the portal, then holds Escape once in a dungeon. */
const portalThenEscape: Control = (tick, c) =>
  c.runtime.world?.kind === "dungeon" ? { ...IDLE, buttons: Button.Escape } : toPortal(tick, c);

/** The scheduler's own timer: all a quiet server should have pending. */
const SCHEDULER_TIMERS = 1;

function inDungeon(c: SimClient): boolean {
  return c.runtime.instanceId.startsWith("dungeon-");
}

function reasons(c: SimClient): EnterReason[] {
  return c.enters.map((e) => e.value.reason);
}

/** Ids of the server's live instances. */
function instanceIds(h: NetHarness): string[] {
  return [...h.server.instances.keys()].sort();
}

/** The small events of `type` about `c` itself that `c` received. */
function ownEvents(c: SimClient, type: EventName) {
  return c.events.filter((e) => {
    const event = e.value.event;
    return event.type === type && "playerId" in event && event.playerId === c.runtime.playerId;
  });
}

Deno.test("four players through the portal share a dungeon; a fifth gets a new one", () => {
  using h = new NetHarness();
  const four = ["Ann", "Bo", "Cy", "Di"].map((name) => h.connect(name, { control: toPortal }));
  h.runUntil(() => four.every(inDungeon), { maxMs: 5000, what: "four players in a dungeon" });

  const shared = four[0].runtime.instanceId;
  assert.equal(four[0].runtime.world?.key, HUB.portals[0].to, "the world the portal names");
  for (const c of four) {
    assert.equal(c.runtime.instanceId, shared);
    assert.deepEqual(reasons(c), [EnterReason.Join, EnterReason.Portal]);
    assert.equal(c.enters[0].value.instanceId, "hub");
  }
  assert.equal(h.server.instances.get(shared)?.size, 4);
  const rosters = four.map((c) => c.enters[1].value.roster.length).sort();
  assert.deepEqual(rosters, [1, 2, 3, 4], "each arrival is told who is already there");
  assert.deepEqual(
    [...h.server.instances.get(shared)!.world.players.keys()].sort(),
    four.map((c) => c.runtime.playerId).sort(),
  );

  const fifth = h.connect("Ed", { control: toPortal });
  h.runUntil(() => inDungeon(fifth), { maxMs: 5000, what: "the fifth player in a dungeon" });
  assert.notEqual(fifth.runtime.instanceId, shared);
  assert.deepEqual(reasons(fifth), [EnterReason.Join, EnterReason.Portal]);
  assert.deepEqual(fifth.enters[1].value.roster.map((r) => r.name), ["Ed"]);
  assert.deepEqual(instanceIds(h), ["hub", fifth.runtime.instanceId, shared].sort());
  assert.equal(h.server.hub.size, 0);
});

Deno.test("dungeons' snapshots are spread over the snapshot interval: no tick carries them all", () => {
  using h = new NetHarness();
  const names = Array.from({ length: 12 }, (_, i) => `P${i + 1}`);
  const players = names.map((name) => h.connect(name, { control: toPortal }));
  h.runUntil(() => players.every(inDungeon), { maxMs: 8000, what: "twelve players in dungeons" });
  const dungeons = [...new Set(players.map((c) => c.runtime.instanceId))];
  assert.equal(dungeons.length, 3);
  // Which of the interval's ticks (the server's tick count, modulo) each dungeon's
  // members got their snapshots on, over a few intervals.
  const residues = new Map<string, Set<number>>(dungeons.map((d) => [d, new Set()]));
  for (let i = 0; i < 4 * TICKS_PER_SNAPSHOT; i++) {
    const before = players.map((c) => c.transport.sent.filter((s) => s.latest).length);
    h.runTicks(1);
    const tick = h.ticks - 1;
    players.forEach((c, k) => {
      const got = c.transport.sent.filter((s) => s.latest).length - before[k];
      if (got > 0) residues.get(c.runtime.instanceId)!.add(tick % TICKS_PER_SNAPSHOT);
    });
  }
  const slots = dungeons.map((d) => [...residues.get(d)!]);
  for (const s of slots) {
    assert.equal(s.length, 1, "a dungeon snapshots on one tick of each interval");
  }
  assert.deepEqual(slots.flat().sort(), [0, 1, 2], "three dungeons, three different ticks");
});

Deno.test("each hub portal leads to the world it names: the Fold and the Sunken Choir", () => {
  using h = new NetHarness();
  const through = (portal: number): Control => (_tick, c) => {
    const target = c.runtime.world?.portals[portal];
    const me = c.runtime.selfView();
    return target && me ? steerTo(me, target) : IDLE;
  };
  const fold = h.connect("Ann", { control: through(0) });
  const choir = h.connect("Bo", { control: through(1) });
  h.runUntil(() => inDungeon(fold) && inDungeon(choir), { maxMs: 5000, what: "both in dungeons" });
  assert.deepEqual(HUB.portals.map((p) => p.to), ["fold", "choir"]);
  assert.equal(fold.runtime.world?.key, "fold");
  assert.equal(choir.runtime.world?.key, "choir");
  assert.notEqual(fold.runtime.instanceId, choir.runtime.instanceId);
  const enter = choir.enters.at(-1)!.value;
  assert.equal(enter.reason, EnterReason.Portal);
  assert.equal(CONTENT.worlds[enter.worldId].key, "choir", "the Enter names the Choir's wire id");
  assert.equal(h.server.instances.get(choir.runtime.instanceId)?.world.def.boss?.id, CANTOR.id);
  // A third player through the Choir's portal joins the Choir's instance, not the Fold's.
  const third = h.connect("Cy", { control: through(1) });
  h.runUntil(() => inDungeon(third), { maxMs: 5000, what: "the third in a dungeon" });
  assert.equal(third.runtime.instanceId, choir.runtime.instanceId);
});

Deno.test("the portal puts nobody into a dungeon whose boss has appeared: a latecomer gets a new one", () => {
  // Dungeons open on their boss half a second in; nobody dies while we watch.
  using h = new NetHarness({
    worldDef: (kind, _id, world) =>
      kind === "dungeon"
        ? { ...world, waves: [], waveDelayTicks: 30, player: { ...world.player, maxHp: 255 } }
        : undefined,
  });
  const early = h.connect("Early", { control: toPortal });
  h.runUntil(() => inDungeon(early), { maxMs: 5000, what: "the first player in a dungeon" });
  const first = h.server.instances.get(early.runtime.instanceId)!;
  h.runUntil(() => first.world.stage === "boss", { maxMs: 3000, what: "the boss" });
  assert.equal(first.world.acceptsPlayers, false);

  const late = h.connect("Late", { control: toPortal });
  h.runUntil(() => inDungeon(late), { maxMs: 5000, what: "the latecomer in a dungeon" });
  assert.notEqual(late.runtime.instanceId, first.id, "not into the boss fight");
  assert.equal(first.size, 1);
  assert.equal(late.runtime.world?.key, early.runtime.world?.key, "the same world, a new instance");
});

/**
 * A Fold dungeon straight to its boss, its ships sturdy (255 HP) and placed at `spawnPoints`:
 * a fight that runs on by itself, with no wave in the way.
 */
function sturdyFold(
  id: string,
  opts: { spawnPoints: { x: number; y: number }[]; seed: number; boss?: BossDef },
): Instance {
  return new Instance(id, {
    worldId: worldByKey(FOLD.key).id,
    def: {
      ...FOLD,
      arena: { ...FOLD.arena, spawnPoints: opts.spawnPoints },
      player: { ...FOLD.player, maxHp: 255 },
      waves: [],
      waveDelayTicks: 1,
      boss: opts.boss ?? FOLD.boss,
    },
    seed: opts.seed,
    encoder: new MessageEncoder(),
  });
}

Deno.test("a cleared dungeon sends every survivor to the hub, resultsReturnTicks after the boss fell", () => {
  // A weak Warden, two ships right under it that no pattern can kill in time.
  const instance = sturdyFold("dungeon-7", {
    spawnPoints: [{ x: 630, y: 300 }, { x: 650, y: 300 }],
    seed: 2,
    boss: { ...WARDEN, baseHp: 30 },
  });
  const quiet = (id: number): Peer => ({
    playerId: id,
    name: `p${id}`,
    sendReliable() {},
    sendLatest: () => true,
  });
  instance.join(quiet(1), EnterReason.Portal);
  instance.join(quiet(2), EnterReason.Portal);
  const up = quantizeAngle(-Math.PI / 2);
  let fellAt = -1;
  const cleared: { tick: number; playerId: number; to: string }[] = [];
  for (let t = 0; t < 600 + TRANSFER_DELAYS.resultsReturnTicks && cleared.length < 2; t++) {
    const tick = instance.world.tick;
    for (const id of [1, 2]) {
      instance.offerInput(id, { tick, moveX: 0, moveY: 0, aim: up, buttons: Button.Fire });
    }
    for (const order of instance.step()) {
      if (order.reason === EnterReason.Cleared) {
        cleared.push({ tick: instance.world.tick, playerId: order.playerId, to: order.to });
      }
    }
    if (fellAt < 0 && instance.world.stage === "cleared") fellAt = instance.world.tick;
  }
  assert.ok(fellAt > 0, "the boss fell");
  assert.deepEqual(
    cleared.sort((a, b) => a.playerId - b.playerId),
    [1, 2].map((playerId) => ({
      tick: fellAt + TRANSFER_DELAYS.resultsReturnTicks,
      playerId,
      to: "hub",
    })),
  );
});

Deno.test("members of one dungeon on different baselines each get what their own rebuilds", () => {
  const instance = new Instance("dungeon-8", {
    worldId: worldByKey(FOLD.key).id,
    def: FOLD,
    seed: 3,
    encoder: new MessageEncoder(),
  });
  // Each member rebuilds what it is sent against what it rebuilt before, as a client does.
  // Member 2's socket is backed up now and then: it skips snapshots, and its baseline
  // falls behind the others'.
  const members = [1, 2, 3].map((id) => ({
    id,
    dec: new MessageDecoder(),
    rebuilt: new Map<number, SnapshotUnits>(),
    bases: new Map<number, number | undefined>(),
    snapshots: 0,
  }));
  for (const m of members) {
    instance.join({
      playerId: m.id,
      name: `p${m.id}`,
      sendReliable() {},
      sendLatest: (data) => {
        if (m.id === 2 && m.snapshots++ % 3 !== 0) return false;
        const msg = decodeServerMessage(m.dec, data);
        assert.ok(msg.kind === ServerKind.Snapshot);
        const base = msg.baseTick === undefined ? undefined : m.rebuilt.get(msg.baseTick);
        assert.ok(msg.baseTick === undefined || base, `member ${m.id} holds its baseline`);
        m.rebuilt.set(msg.tick, decodeSnapshotBody(msg.body, { tick: msg.tick, base }));
        m.bases.set(msg.tick, msg.baseTick);
        return true;
      },
    }, EnterReason.Portal);
  }
  for (let t = 0; t < 40 * TICKS_PER_SNAPSHOT; t++) {
    const tick = instance.world.tick;
    for (const m of members) {
      // Every ship on the move, each its own way: every snapshot has news.
      const turn = quantizeAngle((tick * m.id) / 20);
      instance.offerInput(m.id, { tick, moveX: 70, moveY: -70 + m.id * 30, aim: turn, buttons: 0 });
    }
    instance.step();
  }
  const [one, two, three] = members;
  let apart = 0;
  for (const [tick, state] of two.rebuilt) {
    // Whatever the baseline, the same tick rebuilds the same world.
    assert.deepEqual(state, one.rebuilt.get(tick), `tick ${tick}`);
    assert.deepEqual(state, three.rebuilt.get(tick), `tick ${tick}`);
    if (two.bases.get(tick) !== undefined && two.bases.get(tick) !== one.bases.get(tick)) apart++;
  }
  assert.ok(two.rebuilt.size >= 10, `${two.rebuilt.size} snapshots for member 2`);
  assert.ok(apart >= 5, `member 2 was on its own baseline ${apart} times`);
  assert.ok([...one.bases.values()].filter((b) => b !== undefined).length >= 30, "deltas");
});

Deno.test("each batch carries one graze per player, its newest total", () => {
  // Two sturdy ships under the Warden's fire from the start: they graze all the time.
  const instance = sturdyFold("dungeon-9", {
    spawnPoints: [{ x: 600, y: 420 }, { x: 680, y: 420 }],
    seed: 4,
  });
  const batches = new Map<number, { playerId: number; total: number }[][]>();
  for (const id of [1, 2]) {
    const dec = new MessageDecoder();
    batches.set(id, []);
    instance.join({
      playerId: id,
      name: `p${id}`,
      sendReliable: (data) => {
        const msg = decodeServerMessage(dec, data);
        if (msg.kind !== ServerKind.Events) return;
        batches.get(id)!.push(
          msg.events.flatMap((e) =>
            e.type === "graze" ? [{ playerId: e.playerId, total: e.total }] : []
          ),
        );
      },
      sendLatest: () => true,
    }, EnterReason.Portal);
  }
  for (let t = 0; t < 900; t++) {
    const tick = instance.world.tick;
    for (const id of [1, 2]) {
      instance.offerInput(id, { tick, moveX: 0, moveY: 0, aim: 0, buttons: 0 });
    }
    instance.step();
  }
  for (const [member, sent] of batches) {
    const last = new Map<number, number>();
    let grazes = 0;
    for (const batch of sent) {
      const ids = batch.map((g) => g.playerId);
      assert.equal(new Set(ids).size, ids.length, `member ${member}: one graze per player a batch`);
      for (const g of batch) {
        assert.ok(g.total > (last.get(g.playerId) ?? 0), "each a newer total");
        last.set(g.playerId, g.total);
        grazes++;
      }
    }
    assert.ok(grazes >= 10, `member ${member} heard ${grazes} grazes`);
    // Fewer events than grazes: totals that a later one in the same batch replaced.
    for (const [id, total] of last) {
      assert.ok(total <= instance.world.stats.get(id)!.grazes);
    }
  }
  const total = [1, 2].reduce((a, id) => a + instance.world.stats.get(id)!.grazes, 0);
  const heard = [...batches.get(1)!].reduce((a, b) => a + b.length, 0);
  assert.ok(heard < total, `${heard} graze events for ${total} grazes: batched`);
});

Deno.test("holding Escape for 3 s in a dungeon sends the player to the hub and the empty dungeon goes", () => {
  using h = new NetHarness();
  const c = h.connect("Runner", { control: portalThenEscape });
  h.runUntil(() => inDungeon(c), { maxMs: 5000, what: "the player in a dungeon" });
  const dungeon = h.server.instances.get(c.runtime.instanceId)!;
  const id = c.runtime.playerId;
  const destroyed = h.server.counters.instancesDestroyed;

  // Watch the server's channel tick by tick (pump steps are shorter than a tick).
  h.runUntil(() => (dungeon.world.players.get(id)?.escapeTicks ?? 0) > 0, {
    maxMs: 1000,
    what: "the channel to start",
  });
  const startedAt = h.ticks;
  h.runUntil(() => !dungeon.has(id), { maxMs: 5000, what: "the escape" });
  assert.equal(h.ticks - startedAt, PLAYER.escapeTicks - 1, "the channel lasted 3 s");

  // The client hears how its stay ended, then is told where it is now.
  assert.equal(c.runtime.instanceId, "hub");
  assert.deepEqual(reasons(c), [EnterReason.Join, EnterReason.Portal, EnterReason.Escape]);
  const [started] = ownEvents(c, "escapeStarted");
  const [completed] = ownEvents(c, "escapeCompleted");
  assert.ok(started && completed, "the client heard the channel start and complete");
  assert.ok(completed.seq < c.enters[2].seq, "EscapeCompleted arrives before the Enter");
  assert.equal(ownEvents(c, "escapeCancelled").length, 0);

  // Destroyed on the very tick the last player left, with nothing left scheduled.
  assert.equal(h.server.instances.has(dungeon.id), false);
  assert.deepEqual(instanceIds(h), ["hub"]);
  assert.equal(h.server.counters.instancesDestroyed, destroyed + 1);
  assert.equal(h.clock.pending, SCHEDULER_TIMERS);
  assert.ok(h.server.hub.has(id));
});

Deno.test("a dead player returns to the hub after deathReturnTicks", () => {
  using h = new NetHarness();
  // Into the dungeon, then straight at the nearest enemy until something kills us.
  const c = h.connect("Doomed", {
    control: (tick, self) => {
      if (self.runtime.world?.kind !== "dungeon") return toPortal(tick, self);
      const me = self.runtime.selfView();
      if (!me) return IDLE;
      const [nearest] = self.runtime.enemies(h.clock.now())
        .sort((a, b) => dist(a, me) - dist(b, me));
      return nearest ? steerTo(me, nearest) : IDLE;
    },
  });
  h.runUntil(() => inDungeon(c), { maxMs: 5000, what: "the player in a dungeon" });
  const dungeon = h.server.instances.get(c.runtime.instanceId)!;
  const id = c.runtime.playerId;
  h.runUntil(() => dungeon.world.players.get(id)?.status === "dead", {
    maxMs: 60_000,
    what: "the player to die",
  });
  const diedAt = h.ticks;
  assert.deepEqual(reasons(c), [EnterReason.Join, EnterReason.Portal], "still in the dungeon");

  h.runUntil(() => c.enters.length === 3, { maxMs: 5000, what: "the return to the hub" });
  const back = c.enters[2];
  assert.equal(back.value.reason, EnterReason.Death);
  assert.equal(back.value.instanceId, "hub");
  assert.equal(back.serverTicks - diedAt, TRANSFER_DELAYS.deathReturnTicks);
  const [died] = ownEvents(c, "playerDied");
  assert.ok(died && died.seq < back.seq, "the client heard of its death before the Enter");
  assert.equal(h.server.instances.has(dungeon.id), false);
  assert.equal(h.clock.pending, SCHEDULER_TIMERS);
  // Back in the hub with a fresh ship.
  assert.equal(h.server.hub.world.players.get(id)?.status, "active");
  assert.equal(h.server.hub.world.players.get(id)?.hp, PLAYER.maxHp);
});

Deno.test("disconnecting mid-dungeon leaves no instance and no timer behind", () => {
  using h = new NetHarness();
  const [a, b] = ["Ann", "Bo"].map((name) => h.connect(name, { control: toPortal }));
  h.runUntil(() => inDungeon(a) && inDungeon(b), { maxMs: 5000, what: "both in a dungeon" });
  const dungeonId = a.runtime.instanceId;
  assert.equal(b.runtime.instanceId, dungeonId);

  h.disconnect(a);
  h.runTicks(TICKS_PER_SNAPSHOT); // events reach peers at least once per snapshot interval
  assert.equal(h.server.instances.get(dungeonId)?.size, 1, "the dungeon lives on for Bo");
  assert.equal(b.runtime.roster.has(a.runtime.playerId), false, "Bo heard Ann leave");

  h.disconnect(b);
  assert.deepEqual(instanceIds(h), ["hub"]);
  assert.equal(h.server.connections.size, 0);
  assert.equal(h.server.playerCount, 0);
  assert.equal(h.clock.pending, SCHEDULER_TIMERS);
  h.runTicks(5); // and the loop runs on without it
  assert.deepEqual(instanceIds(h), ["hub"]);
});

Deno.test("shutdown closes every client with ServerRestarting and leaves no timer at all", () => {
  const h = new NetHarness();
  const inHub = h.connect("Stay");
  const traveller = h.connect("Go", { control: toPortal });
  h.runUntil(() => inDungeon(traveller), { maxMs: 5000, what: "one player in a dungeon" });
  h.shutdown();
  assert.equal(h.clock.pending, 0);
  for (const c of [inHub, traveller]) {
    assert.equal(c.transport.closedWith?.code, CloseCode.ServerRestarting);
  }
  assert.deepEqual(instanceIds(h), ["hub"]);
});
