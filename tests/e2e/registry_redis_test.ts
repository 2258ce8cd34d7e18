/**
 * The registry's shared cases (tests/net/server/registry/_cases.ts) on Redis: a
 * real redis-server on a free loopback port per case, TTLs on Redis's own clock
 * (so time really passes), and an outage made by killing the server.
 */
import { RedisStore } from "../../net/server/registry/redis_store.ts";
import { startRedis } from "../../tools/redis_server.ts";
import { registryCases } from "../net/server/registry/_cases.ts";

registryCases("redis", async () => {
  const redis = await startRedis();
  const store = new RedisStore(redis.url, { prefix: "test:" });
  return {
    store,
    now: () => Date.now(),
    pass: (ms) => new Promise((r) => setTimeout(r, ms)),
    breakEngine: () => redis.stop({ hard: true }),
    dispose: async () => {
      await store.close();
      await redis.stop();
    },
  };
});
