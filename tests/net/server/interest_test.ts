/**
 * Interest management in a crowded hub: each client's snapshots carry its own ship
 * and the nearest others (INTEREST_PLAYERS in all), the roster still counts
 * everyone, and a client's snapshot size stays flat as the crowd grows. Also the
 * selection on its own (net/server/interest.ts).
 */
import assert from "node:assert/strict";
import { INTEREST_PLAYERS } from "../../../content/net_tuning.ts";
import { NearestIndex, nearestPlayers } from "../../../net/server/interest.ts";
import { ManualClock } from "../../../net/server/scheduler.ts";
import { GameServer } from "../../../net/server/server.ts";
import { type EnterMsg, ServerKind, type SnapshotMsg } from "../../../net/wire/protocol.ts";
import { Rng, TICK_MS } from "../../../sim/mod.ts";
import { NetHarness, RawClient } from "../_harness.ts";

function snapshots(c: RawClient): { msg: SnapshotMsg; bytes: number }[] {
  return c.transport.snapshots();
}

/** A hub with `n` players standing on a grid 20 px apart; returns the clients. */
function crowd(n: number): { server: GameServer; clock: ManualClock; clients: RawClient[] } {
  const clock = new ManualClock();
  const server = new GameServer({
    clock,
    seed: 1,
    limits: {
      maxConnections: 1000,
      maxConnectionsPerIp: 1000,
      connectBurstPerIp: 1000,
      hubCapacity: 1000,
    },
  });
  const clients = Array.from({ length: n }, (_, i) => {
    const c = new RawClient(server, "10.3.0.1");
    c.hello(`P${i}`);
    const ship = server.hub.world.players.get(c.conn.playerId)!;
    [ship.x, ship.y] = [100 + (i % 20) * 20, 100 + Math.floor(i / 20) * 20];
    return c;
  });
  server.start();
  clock.advance(10 * TICK_MS);
  return { server, clock, clients };
}

Deno.test("nearestPlayers() keeps self first, then the nearest, and never more than max", () => {
  const at = (id: number, x: number) => ({ id, x, y: 0 });
  const players = [at(1, 50), at(2, 0), at(3, 10), at(4, 49), at(5, 100), at(6, 52), at(7, -3)];
  const self = players[0];
  assert.deepEqual(nearestPlayers(players, { self, max: 3 }).map((p) => p.id), [1, 4, 6]);
  assert.deepEqual(
    nearestPlayers(players, { self, max: 5 }).map((p) => p.id),
    [1, 4, 6, 3, 2],
    "a tie goes to the first",
  );
  assert.deepEqual(nearestPlayers(players, { self, max: 10 }).length, 7, "all when few");
  assert.deepEqual(nearestPlayers(players, { self: undefined, max: 2 }).map((p) => p.id), [1, 2]);
  assert.deepEqual(nearestPlayers(players, { self: players[1], max: 3 }).map((p) => p.id), [
    2,
    7,
    3,
  ]);
});

Deno.test("in a crowded hub each snapshot carries your ship and the nearest others; the roster everyone", () => {
  const { server, clients } = crowd(60);
  for (const [i, c] of clients.entries()) {
    const snap = snapshots(c).at(-1)!.msg;
    assert.equal(snap.players.length, INTEREST_PLAYERS, `client ${i}`);
    // Rows travel in id order (delta baselines are positional): look yourself up by id.
    assert.ok(snap.players.some((p) => p.id === c.conn.playerId), "your own ship is in it");
    const me = server.hub.world.players.get(c.conn.playerId)!;
    const far = Math.max(...snap.players.map((p) => Math.hypot(p.x - me.x, p.y - me.y)));
    // Everyone left out is at least as far as the farthest ship sent.
    for (const p of server.hub.world.players.values()) {
      if (snap.players.some((s) => s.id === p.id)) continue;
      assert.ok(
        Math.hypot(p.x - me.x, p.y - me.y) >= far - 0.25,
        `${p.id} is nearer than one sent`,
      );
    }
  }
  const late = new RawClient(server, "10.3.0.2");
  late.hello("Late");
  const enter = late.transport.messages().find((m): m is EnterMsg => m.kind === ServerKind.Enter)!;
  assert.equal(enter.roster.length, 61, "the roster counts the whole hub");
  server.shutdown("test over");
});

Deno.test("a client's snapshot size stays flat from 20 to 200 players in one hub", () => {
  const sizes: number[] = [];
  for (const n of [20, 200]) {
    const { server, clients } = crowd(n);
    const all = clients.flatMap((c) => snapshots(c).map((s) => s.bytes));
    sizes.push(Math.max(...all));
    server.shutdown("test over");
  }
  assert.ok(sizes[1] <= sizes[0] + 8, `largest snapshot ${sizes[0]} B at 20, ${sizes[1]} B at 200`);
  assert.ok(sizes[1] < 20 + INTEREST_PLAYERS * 10 + 10, `${sizes[1]} B`);
});

Deno.test("a crowd that comes and goes: every client rebuilds every delta snapshot", () => {
  using h = new NetHarness({ limits: { maxConnections: 100, maxConnectionsPerIp: 100 } });
  const join = (i: number) =>
    h.connect(`P${i}`, {
      control: (tick) => ({
        moveX: Math.round(100 * Math.cos(tick / (20 + i))),
        moveY: Math.round(100 * Math.sin(tick / (15 + i))),
        aim: (tick * 97) & 0xffff,
        buttons: 0,
      }),
    });
  const clients = Array.from({ length: INTEREST_PLAYERS + 4 }, (_, i) => join(i));
  // Leaves and joins reshuffle who is nearest to whom, so rows enter, leave and reorder.
  for (let k = 0; k < 40; k++) {
    h.pump(100);
    if (k % 3 === 0) h.disconnect(clients[k % clients.length]);
    if (k % 4 === 0) clients.push(join(100 + k));
  }
  const playing = clients.filter((c) => c.runtime.phase === "playing");
  assert.ok(playing.length > INTEREST_PLAYERS, `${playing.length} still playing`);
  for (const c of playing) {
    assert.equal(c.runtime.snapshotsWithoutBaseline, 0, `${c.name} always held the baseline`);
    assert.ok(c.runtime.latest()!.tick >= h.server.hub.world.tick - 6, `${c.name} is current`);
  }
});

Deno.test("NearestIndex answers every member exactly as nearestPlayers, ties included", () => {
  const rng = new Rng(3);
  for (const [n, grid] of [[11, false], [60, true], [200, false], [200, true]] as const) {
    // On a grid many ships are equally far: the earlier one in the list must win each tie.
    const players = Array.from({ length: n }, (_, i) => ({
      id: 1000 - i,
      x: grid ? (i % 15) * 20 : Math.floor(rng.next() * 1280),
      y: grid ? Math.floor(i / 15) * 20 : Math.floor(rng.next() * 300),
    }));
    const index = new NearestIndex(players);
    for (const max of [3, INTEREST_PLAYERS]) {
      players.forEach((self, i) => {
        assert.deepEqual(
          index.nearest(i, max).map((p) => p.id),
          nearestPlayers(players, { self, max }).map((p) => p.id),
          `${n} players${grid ? " on a grid" : ""}, max ${max}, member ${i}`,
        );
      });
    }
  }
});

Deno.test("NearestIndex kept from tick to tick answers as nearestPlayers as ships move, join, leave and jump", () => {
  const rng = new Rng(9);
  let nextId = 1;
  const ship = () => ({
    id: nextId++,
    // Whole pixels on a coarse grid: equal x's and equal distances are common.
    x: Math.floor(rng.next() * 40) * 8,
    y: Math.floor(rng.next() * 20) * 8,
  });
  let players = Array.from({ length: 60 }, ship);
  const index = new NearestIndex<{ id: number; x: number; y: number }>();
  const from: string[] = [];
  for (let tick = 0; tick < 120; tick++) {
    if (tick % 40 === 20) {
      players = [...players.slice(0, 30), ship(), ...players.slice(31)]; // one left, one joined
    } else if (tick === 90) {
      players = players.map((p) => ({ ...p, x: 320 - p.x })); // everyone jumps
    } else {
      // A few pixels a tick, as ships in a hub move; a new list each tick, as the instance makes.
      players = players.map((p) => ({ ...p, x: p.x + Math.floor(rng.next() * 9) - 4 }));
    }
    index.update(players);
    from.push(index.sortedFrom);
    players.forEach((self, i) => {
      assert.deepEqual(
        index.nearest(i, INTEREST_PLAYERS).map((p) => p.id),
        nearestPlayers(players, { self, max: INTEREST_PLAYERS }).map((p) => p.id),
        `tick ${tick}, member ${i}`,
      );
    });
    index.release();
  }
  // Ordered anew only when the list changed (the first tick, a join, a leave) or everyone
  // jumped; from last tick's order every other tick.
  const scratch = from.flatMap((f, tick) => f === "scratch" ? [tick] : []);
  assert.deepEqual(scratch, [0, 20, 60, 90, 100]);
});
