/**
 * The registry's storage on Deno KV (`Deno.openKv`): the hosted database on Deno
 * Deploy, or a local SQLite file (tests, one machine). A record lives at
 * `[prefix, ns, id]` as `{ value, expMs }`. KV's own `expireIn` only promises
 * deletion *some time* after expiry, so every read also checks `expMs`
 * against the wall clock. Commits are KV atomic operations checked by
 * versionstamp. Needs `--unstable-kv` on the CLI (deno.json turns it on).
 */
import {
  type Check,
  type RegistryStore,
  RegistryUnavailable,
  type StoredEntry,
  type Write,
} from "./store.ts";

interface KvRecord {
  readonly value: unknown;
  readonly expMs: number;
}

/** A RegistryStore on a Deno KV database. */
export class KvStore implements RegistryStore {
  readonly #kv: Deno.Kv;
  readonly #prefix: string;
  readonly #now: () => number;
  #closed = false;

  /** Wraps an open database; `open` opens one by path. */
  constructor(kv: Deno.Kv, opts: { prefix: string; now: () => number }) {
    this.#kv = kv;
    this.#prefix = opts.prefix;
    this.#now = opts.now;
  }

  /** Opens the database at `path` (undefined: Deno Deploy's, or the default local one). */
  static async open(
    path: string | undefined,
    opts: { prefix?: string; now: () => number },
  ): Promise<KvStore> {
    return new KvStore(await Deno.openKv(path), { prefix: opts.prefix ?? "bh", now: opts.now });
  }

  async #run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new RegistryUnavailable(`deno kv ${what} failed: ${(err as Error).message}`);
    }
  }

  #entry(id: string, entry: Deno.KvEntryMaybe<KvRecord>): StoredEntry | undefined {
    const r = entry.value;
    if (r === null || r.expMs <= this.#now()) return undefined;
    return { id, value: r.value, version: entry.versionstamp! };
  }

  async list(ns: string): Promise<StoredEntry[]> {
    return await this.#run("list", async () => {
      const out: StoredEntry[] = [];
      for await (const e of this.#kv.list<KvRecord>({ prefix: [this.#prefix, ns] })) {
        const live = this.#entry(String(e.key[2]), e);
        if (live) out.push(live);
      }
      return out;
    });
  }

  async get(ns: string, id: string): Promise<StoredEntry | undefined> {
    const e = await this.#run("get", () => this.#kv.get<KvRecord>([this.#prefix, ns, id]));
    return this.#entry(id, e);
  }

  async commit(checks: readonly Check[], writes: readonly Write[]): Promise<boolean> {
    return await this.#run("commit", async () => {
      const op = this.#kv.atomic();
      for (const c of checks) {
        const key = [this.#prefix, c.ns, c.id];
        if (c.version !== null) {
          op.check({ key, versionstamp: c.version });
          continue;
        }
        // "Absent" includes expired but not yet deleted: check whatever is physically there.
        const cur = await this.#kv.get<KvRecord>(key);
        if (cur.value !== null && cur.value.expMs > this.#now()) return false;
        op.check({ key, versionstamp: cur.versionstamp });
      }
      const nowMs = this.#now();
      for (const w of writes) {
        const key = [this.#prefix, w.ns, w.id];
        if (w.value === null) op.delete(key);
        else {
          const record: KvRecord = { value: w.value, expMs: nowMs + w.ttlMs };
          op.set(key, record, { expireIn: Math.max(1, Math.round(w.ttlMs)) });
        }
      }
      return (await op.commit()).ok;
    });
  }

  close(): Promise<void> {
    if (!this.#closed) this.#kv.close();
    this.#closed = true;
    return Promise.resolve();
  }
}
