/**
 * The registry's storage on Redis (npm `ioredis`), for a VPS or any host with a
 * Redis next to it. A record is a string key `<prefix><ns>/<id>` holding its JSON
 * with a PX time to live; a sorted set `<prefix>idx:<ns>` indexes each namespace by
 * expiry (Redis's own clock), so listing needs no SCAN. Commits run as one Lua
 * script: the checks compare whole stored strings, then the writes apply, so a
 * commit is atomic against every other client. Commands fail fast while Redis is
 * down (no offline queue) and the client reconnects by itself.
 */
import { Redis } from "ioredis";
import {
  type Check,
  type RegistryStore,
  RegistryUnavailable,
  type StoredEntry,
  type Write,
} from "./store.ts";

/** How long close() waits for ioredis to say it has ended (it may never, see close()). */
const CLOSE_WAIT_MS = 500;

/** Milliseconds on Redis's clock, inside a script. */
const NOW_LUA = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** ARGV: prefix, JSON {c: [[ns, id, raw | false]…], w: [[ns, id, raw | false, ttlMs]…]}. */
const COMMIT_LUA = `local p = ARGV[1]
local req = cjson.decode(ARGV[2])
for _, c in ipairs(req.c) do
  local cur = redis.call('GET', p .. c[1] .. '/' .. c[2])
  if cur ~= c[3] then return 0 end
end
${NOW_LUA}
for _, w in ipairs(req.w) do
  local key = p .. w[1] .. '/' .. w[2]
  local idx = p .. 'idx:' .. w[1]
  if w[3] == false then
    redis.call('DEL', key)
    redis.call('ZREM', idx, w[2])
  else
    redis.call('SET', key, w[3], 'PX', w[4])
    redis.call('ZADD', idx, now + w[4], w[2])
  end
end
return 1`;

/** ARGV: prefix, ns. Drops expired index entries, returns [id, raw, id, raw, …]. */
const LIST_LUA = `local p = ARGV[1]
local idx = p .. 'idx:' .. ARGV[2]
${NOW_LUA}
redis.call('ZREMRANGEBYSCORE', idx, '-inf', now)
local ids = redis.call('ZRANGE', idx, 0, -1)
local out = {}
for _, id in ipairs(ids) do
  local raw = redis.call('GET', p .. ARGV[2] .. '/' .. id)
  if raw then
    out[#out + 1] = id
    out[#out + 1] = raw
  end
end
return out`;

/** Options of a Redis store. */
export interface RedisStoreOptions {
  /** Key prefix, so several deployments (or tests) can share one Redis. */
  readonly prefix?: string;
  /** Told about connection errors (the client keeps retrying). */
  readonly onError?: (err: Error) => void;
  /** A command that takes longer than this fails as unreachable. */
  readonly commandTimeoutMs?: number;
}

/** A RegistryStore on one Redis server. */
export class RedisStore implements RegistryStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #connectWaitMs: number;
  readonly #commandTimeoutMs: number;

  constructor(url: string, opts: RedisStoreOptions = {}) {
    this.#prefix = opts.prefix ?? "bh:";
    this.#connectWaitMs = opts.commandTimeoutMs ?? 1000;
    this.#commandTimeoutMs = opts.commandTimeoutMs ?? 1000;
    this.#redis = new Redis(url, {
      lazyConnect: true,
      // Fail at once while disconnected: a placement must hear "unreachable" now, not queue.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      commandTimeout: opts.commandTimeoutMs ?? 1000,
      retryStrategy: (attempt: number) => Math.min(100 * attempt, 1000),
    });
    this.#redis.on("error", (err: Error) => opts.onError?.(err));
    // Not awaited: a Redis that is down at start-up only blocks placements until it is back.
    this.#redis.connect().catch(() => {});
  }

  /** Resolves once connected, or after `waitMs` (then the command fails fast). */
  async #connected(waitMs: number): Promise<void> {
    if (this.#redis.status === "ready" || this.#redis.status === "end") return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onReady: (() => void) | undefined;
    await new Promise<void>((resolve) => {
      onReady = resolve;
      this.#redis.once("ready", onReady);
      timer = setTimeout(resolve, waitMs);
    });
    clearTimeout(timer);
    this.#redis.off("ready", onReady!);
  }

  /**
   * Rejects when `pending` takes longer than the command timeout. ioredis has a timeout of
   * its own, but its timer does not hold the event loop: a command written just as Redis died
   * could otherwise wait forever in a process with nothing else to do.
   */
  #withDeadline<T>(pending: Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${this.#commandTimeoutMs} ms`)),
        this.#commandTimeoutMs,
      );
    });
    return Promise.race([pending, deadline]).finally(() => clearTimeout(timer));
  }

  async #run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      // A command issued while (re)connecting waits a moment instead of failing at once.
      await this.#connected(this.#connectWaitMs);
      return await this.#withDeadline(fn());
    } catch (err) {
      throw new RegistryUnavailable(`redis ${what} failed: ${(err as Error).message}`);
    }
  }

  async list(ns: string): Promise<StoredEntry[]> {
    const flat = await this.#run(
      "list",
      () => this.#redis.eval(LIST_LUA, 0, this.#prefix, ns) as Promise<string[]>,
    );
    const out: StoredEntry[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      out.push({ id: flat[i], value: JSON.parse(flat[i + 1]), version: flat[i + 1] });
    }
    return out;
  }

  async get(ns: string, id: string): Promise<StoredEntry | undefined> {
    const raw = await this.#run("get", () => this.#redis.get(`${this.#prefix}${ns}/${id}`));
    return raw === null ? undefined : { id, value: JSON.parse(raw), version: raw };
  }

  async commit(checks: readonly Check[], writes: readonly Write[]): Promise<boolean> {
    const req = {
      c: checks.map((c) => [c.ns, c.id, c.version ?? false]),
      w: writes.map((w) => [
        w.ns,
        w.id,
        w.value === null ? false : JSON.stringify(w.value),
        Math.max(1, Math.round(w.ttlMs)),
      ]),
    };
    const ok = await this.#run(
      "commit",
      () => this.#redis.eval(COMMIT_LUA, 0, this.#prefix, JSON.stringify(req)),
    );
    return ok === 1;
  }

  async close(): Promise<void> {
    const ended = new Promise<void>((resolve) => {
      if (this.#redis.status === "end") resolve();
      else this.#redis.once("end", () => resolve());
    });
    this.#redis.disconnect();
    // Between reconnect attempts (Redis is down) ioredis has no stream to close: it says
    // neither "end" nor anything else, and nothing would hold the event loop for it. Its
    // timers are cleared by disconnect(): waiting a moment is all there is to do.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const moment = new Promise<void>((resolve) => timer = setTimeout(resolve, CLOSE_WAIT_MS));
    await Promise.race([ended, moment]);
    clearTimeout(timer);
  }
}
