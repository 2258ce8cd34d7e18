/**
 * The shared instance registry and its storage engines: Redis (a VPS), Deno KV
 * (Deno Deploy, or a local file) and memory (one process, tests). `openStore`
 * turns a REGISTRY_URL into a store, loading only the engine it names.
 * Imports nothing from the rest of net/.
 */
export * from "./store.ts";
export * from "./registry.ts";
import type { RegistryStore } from "./store.ts";

/**
 * Opens the store a REGISTRY_URL names: `redis://…` / `rediss://…`, `kv:` (Deno
 * Deploy's database, or the default local one) or `kv:PATH` (a local file).
 */
export async function openStore(
  url: string,
  opts: { now: () => number; prefix?: string; onError?: (err: Error) => void },
): Promise<RegistryStore> {
  if (url.startsWith("redis://") || url.startsWith("rediss://")) {
    const { RedisStore } = await import("./redis_store.ts");
    return new RedisStore(url, { prefix: opts.prefix, onError: opts.onError });
  }
  if (url.startsWith("kv:")) {
    const { KvStore } = await import("./kv_store.ts");
    const path = url.slice("kv:".length);
    return await KvStore.open(path === "" ? undefined : path, {
      prefix: opts.prefix,
      now: opts.now,
    });
  }
  throw new Error(`REGISTRY_URL=${JSON.stringify(url)} must start with redis://, rediss:// or kv:`);
}
