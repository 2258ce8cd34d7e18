/**
 * The storage a registry needs, small enough for any engine to provide: records
 * grouped in namespaces, each with a time to live, listed by namespace, and one
 * atomic compare-and-set over several keys. Redis (redis_store.ts) and Deno KV
 * (kv_store.ts) implement it; MemoryStore here serves one process and tests.
 * Values are plain JSON data. Time is wall-clock ms from an injected function,
 * because records are compared across processes.
 */

/** A live record: its value and an opaque version for compare-and-set. */
export interface StoredEntry {
  readonly id: string;
  readonly value: unknown;
  readonly version: string;
}

/** A precondition of a commit: the record still has `version`, or is absent (`null`). */
export interface Check {
  readonly ns: string;
  readonly id: string;
  readonly version: string | null;
}

/** A write of a commit: a value with its time to live, or a deletion (`value: null`). */
export interface Write {
  readonly ns: string;
  readonly id: string;
  readonly value: unknown | null;
  /** Ignored for deletions. */
  readonly ttlMs: number;
}

/** Storage for a registry. Every method rejects with RegistryUnavailable when the engine is down. */
export interface RegistryStore {
  /** Every live record in `ns`. */
  list(ns: string): Promise<StoredEntry[]>;
  /** One live record, or undefined. */
  get(ns: string, id: string): Promise<StoredEntry | undefined>;
  /** Applies every write if every check holds, all or nothing; false on a conflict. */
  commit(checks: readonly Check[], writes: readonly Write[]): Promise<boolean>;
  /** Releases connections. */
  close(): Promise<void>;
}

/** The engine behind a registry cannot be reached; running instances are unaffected. */
export class RegistryUnavailable extends Error {
  constructor(detail: string) {
    super(`registry unreachable: ${detail}`);
    this.name = "RegistryUnavailable";
  }
}

/** Records in this process's memory: for one process, and for tests on a manual clock. */
export class MemoryStore implements RegistryStore {
  readonly #now: () => number;
  readonly #records = new Map<string, { value: unknown; expMs: number; version: number }>();
  #version = 0;
  /** While true every call fails as an unreachable engine would (for outage tests). */
  down = false;

  constructor(opts: { now: () => number }) {
    this.#now = opts.now;
  }

  #live(key: string): { value: unknown; version: number } | undefined {
    const r = this.#records.get(key);
    if (!r) return undefined;
    if (r.expMs <= this.#now()) {
      this.#records.delete(key);
      return undefined;
    }
    return r;
  }

  #guard(): void {
    if (this.down) throw new RegistryUnavailable("memory store is down");
  }

  list(ns: string): Promise<StoredEntry[]> {
    this.#guard();
    const out: StoredEntry[] = [];
    const prefix = `${ns}/`;
    for (const key of [...this.#records.keys()]) {
      if (!key.startsWith(prefix)) continue;
      const r = this.#live(key);
      if (r) out.push({ id: key.slice(prefix.length), value: r.value, version: String(r.version) });
    }
    return Promise.resolve(out);
  }

  get(ns: string, id: string): Promise<StoredEntry | undefined> {
    this.#guard();
    const r = this.#live(`${ns}/${id}`);
    return Promise.resolve(r && { id, value: r.value, version: String(r.version) });
  }

  commit(checks: readonly Check[], writes: readonly Write[]): Promise<boolean> {
    this.#guard();
    for (const c of checks) {
      const r = this.#live(`${c.ns}/${c.id}`);
      if ((r ? String(r.version) : null) !== c.version) return Promise.resolve(false);
    }
    for (const w of writes) {
      const key = `${w.ns}/${w.id}`;
      if (w.value === null) this.#records.delete(key);
      else {
        // A copy, as a real engine would store: later changes to the caller's object don't leak in.
        this.#records.set(key, {
          value: structuredClone(w.value),
          expMs: this.#now() + w.ttlMs,
          version: ++this.#version,
        });
      }
    }
    return Promise.resolve(true);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
