/**
 * The registry on the memory store (a hand-driven clock) and on Deno KV (a local
 * file, in process), through the shared cases in _cases.ts; and the load rule
 * that picks the process for a new instance.
 */
import assert from "node:assert/strict";
import { KvStore } from "../../../../net/server/registry/kv_store.ts";
import {
  leastLoaded,
  MemoryStore,
  openStore,
  type ProcessRecord,
} from "../../../../net/server/registry/mod.ts";
import { type Fixture, registryCases } from "./_cases.ts";

registryCases("memory", () => {
  let nowMs = 1_000_000;
  const store = new MemoryStore({ now: () => nowMs });
  return Promise.resolve<Fixture>({
    store,
    now: () => nowMs,
    pass: (ms) => {
      nowMs += ms;
      return Promise.resolve();
    },
    breakEngine: () => {
      store.down = true;
      return Promise.resolve();
    },
    dispose: () => store.close(),
  });
});

registryCases("deno kv", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bh_kv_" });
  // KV's own expireIn runs on real time; reads check expiry on this clock, which runs ahead.
  let nowMs = Date.now();
  const store = await KvStore.open(`${dir}/registry.db`, { now: () => nowMs });
  return {
    store,
    now: () => nowMs,
    pass: (ms) => {
      nowMs += ms;
      return Promise.resolve();
    },
    // A closed database is as unreachable as a KV service can be made in process.
    breakEngine: () => store.close(),
    dispose: async () => {
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
});

function proc(id: string, extra: Partial<ProcessRecord>): ProcessRecord {
  return {
    id,
    url: `http://${id}`,
    boot: id,
    players: 0,
    capacity: 100,
    tickMeanMs: 0,
    heartbeatAtMs: 0,
    ...extra,
  };
}

Deno.test("leastLoaded() weighs seats in use against capacity and tick time against the budget", () => {
  const a = proc("a", { capacity: 100, tickMeanMs: 1 });
  const b = proc("b", { capacity: 100, tickMeanMs: 6 });
  // a: 50/100 + 1/8 = 0.625; b: 10/100 + 6/8 = 0.85
  assert.equal(
    leastLoaded([{ process: a, seats: 50 }, { process: b, seats: 10 }], {
      seats: 1,
      tickBudgetMs: 8,
    }),
    a,
  );
  // a: 80/100 + 1/8 = 0.925 > b
  assert.equal(
    leastLoaded([{ process: a, seats: 80 }, { process: b, seats: 10 }], {
      seats: 1,
      tickBudgetMs: 8,
    }),
    b,
  );
});

Deno.test("leastLoaded() skips full processes and breaks ties towards the caller, then by id", () => {
  const a = proc("a", {});
  const b = proc("b", {});
  const c = proc("c", { capacity: 4 });
  const loads = [{ process: b, seats: 0 }, { process: a, seats: 0 }];
  assert.equal(leastLoaded(loads, { seats: 1, tickBudgetMs: 8 }), a);
  assert.equal(leastLoaded(loads, { seats: 1, tickBudgetMs: 8, preferId: "b" }), b);
  assert.equal(leastLoaded([{ process: c, seats: 2 }], { seats: 3, tickBudgetMs: 8 }), undefined);
  assert.equal(leastLoaded([{ process: c, seats: 1 }], { seats: 3, tickBudgetMs: 8 }), c);
});

Deno.test("openStore() refuses a REGISTRY_URL it does not know, naming it", async () => {
  await assert.rejects(
    () => openStore("postgres://db", { now: Date.now }),
    /REGISTRY_URL="postgres:\/\/db" must start with redis:\/\/, rediss:\/\/ or kv:/,
  );
});

Deno.test("leastLoaded() ignores tick times under the quiet threshold: they are not load", () => {
  const calm = proc("calm", { tickMeanMs: 0.2 });
  const jittery = proc("jittery", { tickMeanMs: 0.9 });
  const opts = { seats: 1, tickBudgetMs: 8, tickQuietMs: 1 };
  assert.equal(
    leastLoaded([{ process: calm, seats: 12 }, { process: jittery, seats: 0 }], opts),
    jittery,
    "12 players count, 0.9 ms of ticking does not",
  );
  const slow = proc("slow", { tickMeanMs: 5 });
  assert.equal(
    leastLoaded([{ process: calm, seats: 12 }, { process: slow, seats: 0 }], opts),
    calm,
    "5 ms a tick is past half the way to the budget: worth more than 12 players",
  );
});
