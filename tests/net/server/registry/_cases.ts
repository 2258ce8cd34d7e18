/**
 * The registry's behaviour, written once and run on every storage engine: the
 * memory and Deno KV stores in the fast tier (registry_test.ts), Redis against a
 * real redis-server in tests/e2e/registry_redis_test.ts. A fixture gives a fresh
 * store, a wall clock and a way to let time pass (by hand, or for real on Redis,
 * whose TTLs run on its own clock).
 */
import assert from "node:assert/strict";
import {
  type ClaimRequest,
  type InstanceRecord,
  leastLoaded,
  type ProcessRecord,
  Registry,
  type RegistryStore,
  RegistryUnavailable,
} from "../../../../net/server/registry/mod.ts";

/** A store under test. */
export interface Fixture {
  readonly store: RegistryStore;
  readonly now: () => number;
  /** Lets `ms` pass for the store's TTLs. */
  readonly pass: (ms: number) => Promise<void>;
  /** Makes the engine unreachable (then calls fail with RegistryUnavailable). */
  readonly breakEngine: () => Promise<void>;
  readonly dispose: () => Promise<void>;
}

/** TTLs short enough for a real-time engine, long enough for loopback round trips. */
export const HEARTBEAT_TTL_MS = 600;
export const PARTY_TTL_MS = 900;

function proc(
  id: string,
  extra: Partial<ProcessRecord> = {},
): Omit<ProcessRecord, "heartbeatAtMs"> {
  return {
    id,
    url: `http://${id}.test`,
    boot: `${id}-boot`,
    players: 0,
    capacity: 100,
    tickMeanMs: 1,
    ...extra,
  };
}

function inst(
  id: string,
  extra: Partial<Omit<InstanceRecord, "processId">> = {},
): Omit<InstanceRecord, "processId"> {
  return {
    id,
    kind: "dungeon",
    players: 0,
    accepting: true,
    createdAtMs: 1000,
    arrived: {},
    ...extra,
  };
}

let partySeq = 0;
function dungeonClaim(members: string[], extra: Partial<ClaimRequest> = {}): ClaimRequest {
  return {
    kind: "dungeon",
    partyId: `party-${++partySeq}`,
    members,
    capacity: 4,
    prefer: "newest",
    pickProcess: (loads) => leastLoaded(loads, { seats: members.length, tickBudgetMs: 8 }),
    newInstanceId: (p) => `${p.id}/dungeon-${++partySeq}`,
    ...extra,
  };
}

/** Registers every case under `engine` for a fixture factory. */
export function registryCases(engine: string, make: () => Promise<Fixture>): void {
  const test = (name: string, fn: (f: Fixture, r: Registry) => Promise<void>) =>
    Deno.test(`${engine}: ${name}`, async () => {
      const f = await make();
      const r = new Registry(f.store, {
        now: f.now,
        heartbeatTtlMs: HEARTBEAT_TTL_MS,
        partyTtlMs: PARTY_TTL_MS,
      });
      try {
        await fn(f, r);
      } finally {
        await f.dispose();
      }
    });

  test(
    "announce() publishes a process and its instances; withdraw() removes them",
    async (_f, r) => {
      await r.announce(proc("a", { players: 3 }), [inst("a/hub", { kind: "hub", players: 3 })]);
      await r.announce(proc("b"), [inst("b/dungeon-1"), inst("b/dungeon-2")]);
      const procs = await r.processes();
      assert.deepEqual(procs.map((p) => p.id).sort(), ["a", "b"]);
      assert.equal(procs.find((p) => p.id === "a")!.url, "http://a.test");
      const insts = await r.instances();
      assert.deepEqual(insts.map((i) => i.id).sort(), ["a/hub", "b/dungeon-1", "b/dungeon-2"]);
      assert.equal(insts.find((i) => i.id === "a/hub")!.processId, "a");
      await r.withdraw({ instanceIds: ["b/dungeon-1"] });
      assert.deepEqual((await r.instances()).map((i) => i.id).sort(), ["a/hub", "b/dungeon-2"]);
      await r.withdraw({ processId: "b", instanceIds: ["b/dungeon-2"] });
      assert.deepEqual((await r.processes()).map((p) => p.id), ["a"]);
    },
  );

  test(
    "a process that stops announcing expires with its instances within the TTL",
    async (f, r) => {
      await r.announce(proc("a"), [inst("a/hub", { kind: "hub" })]);
      await r.announce(proc("b"), [inst("b/dungeon-1")]);
      await f.pass(HEARTBEAT_TTL_MS / 2);
      await r.announce(proc("a"), [inst("a/hub", { kind: "hub" })]); // a keeps beating, b is dead
      await f.pass(HEARTBEAT_TTL_MS / 2 + 150);
      assert.deepEqual((await r.processes()).map((p) => p.id), ["a"]);
      assert.deepEqual((await r.instances()).map((i) => i.id), ["a/hub"]);
    },
  );

  test(
    "claim() puts a party in the newest accepting dungeon with room for all of it",
    async (_f, r) => {
      await r.announce(proc("a"), [
        inst("a/dungeon-old", { createdAtMs: 1000, players: 1 }),
        inst("a/dungeon-new", { createdAtMs: 2000, players: 1 }),
        inst("a/dungeon-boss", { createdAtMs: 3000, players: 1, accepting: false }),
        inst("a/hub", { kind: "hub", createdAtMs: 4000 }),
      ]);
      const placed = await r.claim(dungeonClaim(["ann", "bob"]));
      assert.ok(placed);
      assert.equal(placed.instance.id, "a/dungeon-new");
      assert.equal(placed.created, false);
      assert.equal(placed.process.url, "http://a.test");
      assert.deepEqual(placed.party.members, ["ann", "bob"]);
      assert.deepEqual(await r.party(placed.party.id), placed.party);
      // a/dungeon-new now holds 1 + 2: a party of two no longer fits there, one player does.
      const pair = await r.claim(dungeonClaim(["cy", "dee"]));
      assert.equal(pair!.instance.id, "a/dungeon-old");
      const single = await r.claim(dungeonClaim(["eve"]));
      assert.equal(single!.instance.id, "a/dungeon-new");
    },
  );

  test(
    "claim() makes a new instance on the least-loaded process when none has room",
    async (_f, r) => {
      await r.announce(proc("busy", { players: 60 }), [
        inst("busy/hub", { kind: "hub", players: 60 }),
      ]);
      await r.announce(proc("idle", { players: 0 }), []);
      const placed = await r.claim(dungeonClaim(["ann", "bob", "cy"]));
      assert.ok(placed);
      assert.equal(placed.created, true);
      assert.equal(placed.process.id, "idle");
      assert.match(placed.instance.id, /^idle\/dungeon-/);
      // The new instance is visible (and holds three seats) before its host ever announces it.
      const listed = (await r.instances()).find((i) => i.id === placed.instance.id);
      assert.ok(listed);
      const next = await r.claim(dungeonClaim(["dee", "eve"]));
      assert.notEqual(next!.instance.id, placed.instance.id, "3 held + 2 would overfill");
    },
  );

  test("concurrent claims fill an instance exactly to capacity, never over", async (_f, r) => {
    await r.announce(proc("a"), [inst("a/dungeon-1")]);
    await r.announce(proc("b"), []);
    const placed = await Promise.all(
      Array.from({ length: 10 }, (_, i) => r.claim(dungeonClaim([`p${i}`]))),
    );
    const perInstance = new Map<string, number>();
    for (const p of placed) {
      assert.ok(p);
      perInstance.set(p.instance.id, (perInstance.get(p.instance.id) ?? 0) + 1);
    }
    for (const [id, n] of perInstance) assert.ok(n <= 4, `${id} got ${n} players`);
    assert.equal(perInstance.get("a/dungeon-1"), 4);
    assert.equal([...perInstance.values()].reduce((a, b) => a + b, 0), 10);
  });

  test("members the host reports as arrived stop holding seats", async (_f, r) => {
    await r.announce(proc("a"), [inst("a/dungeon-1")]);
    const party = await r.claim(dungeonClaim(["ann", "bob"]));
    assert.equal(party!.instance.id, "a/dungeon-1");
    // Both arrived: the host now reports 2 players and the party's 2 arrivals. 2 seats left.
    await r.announce(proc("a"), [
      inst("a/dungeon-1", { players: 2, arrived: { [party!.party.id]: 2 } }),
    ]);
    const pair = await r.claim(dungeonClaim(["cy", "dee"]));
    assert.equal(pair!.instance.id, "a/dungeon-1");
    const full = await r.claim(dungeonClaim(["eve"]));
    assert.notEqual(full!.instance.id, "a/dungeon-1");
  });

  test("seats of a party that never arrives are released after the party TTL", async (f, r) => {
    await r.announce(proc("a"), [inst("a/dungeon-1")]);
    const party = await r.claim(dungeonClaim(["ann", "bob", "cy", "dee"]));
    assert.equal(party!.instance.id, "a/dungeon-1");
    await f.pass(PARTY_TTL_MS + 150);
    await r.announce(proc("a"), [inst("a/dungeon-1")]);
    assert.equal(await r.party(party!.party.id), undefined);
    const again = await r.claim(dungeonClaim(["eve"]));
    assert.equal(again!.instance.id, "a/dungeon-1");
  });

  test("hubs are claimed fullest first, up to their capacity", async (_f, r) => {
    await r.announce(proc("a"), [
      inst("a/hub", { kind: "hub", players: 5, createdAtMs: 1 }),
      inst("a/hub-2", { kind: "hub", players: 9, createdAtMs: 2 }),
      inst("a/hub-3", { kind: "hub", players: 10, createdAtMs: 3 }),
    ]);
    const hub = (members: string[]) =>
      dungeonClaim(members, {
        kind: "hub",
        capacity: 10,
        prefer: "fullest",
        newInstanceId: (p) => `${p.id}/hub-${++partySeq}`,
      });
    assert.equal((await r.claim(hub(["ann"])))!.instance.id, "a/hub-2");
    assert.equal((await r.claim(hub(["bob"])))!.instance.id, "a/hub", "hub-2 is full now");
  });

  test("claim() answers undefined when no live process can take the party", async (_f, r) => {
    assert.equal(await r.claim(dungeonClaim(["ann"])), undefined, "no process at all");
    await r.announce(proc("a", { capacity: 2, players: 2 }), []);
    assert.equal(await r.claim(dungeonClaim(["ann"])), undefined, "the only process is full");
  });

  test("an unreachable engine fails every call with RegistryUnavailable", async (f, r) => {
    await r.announce(proc("a"), []);
    await f.breakEngine();
    await assert.rejects(() => r.announce(proc("a"), []), RegistryUnavailable);
    await assert.rejects(() => r.claim(dungeonClaim(["ann"])), RegistryUnavailable);
    await assert.rejects(() => r.processes(), RegistryUnavailable);
  });
}
