/**
 * Who may open a game connection: per-address counts of open connections and a
 * per-address budget of new ones per second, both keyed by the address a player
 * really has (an IPv6 host owns a whole /64, so the key is its /64 prefix).
 * Memory stays bounded: an address's entry goes once it has nothing open and its
 * budget has refilled. Imports nothing but its own types.
 */

/** A token bucket: `ratePerSec` sustained, `burst` at once. */
export class Budget {
  readonly ratePerSec: number;
  readonly burst: number;
  // Numbers from the start: a field declared without a value starts as undefined, and then
  // holds each new count as a fresh heap number (two budgets take from every message).
  #tokens = 0;
  #at = 0;

  constructor(opts: { ratePerSec: number; burst: number; nowMs: number }) {
    this.ratePerSec = opts.ratePerSec;
    this.burst = opts.burst;
    this.#tokens = opts.burst;
    this.#at = opts.nowMs;
  }

  #refill(nowMs: number): void {
    this.#tokens = Math.min(
      this.burst,
      this.#tokens + ((nowMs - this.#at) / 1000) * this.ratePerSec,
    );
    this.#at = nowMs;
  }

  /** Takes `amount`; false (the budget is spent, and stays in debt) when there was not enough. */
  take(amount: number, nowMs: number): boolean {
    this.#refill(nowMs);
    this.#tokens -= amount;
    return this.#tokens >= 0;
  }

  /** True when `amount` could be taken now (takes nothing). */
  has(amount: number, nowMs: number): boolean {
    this.#refill(nowMs);
    return this.#tokens >= amount;
  }

  /** True once the bucket is full again: forgetting it changes nothing. */
  full(nowMs: number): boolean {
    this.#refill(nowMs);
    return this.#tokens >= this.burst;
  }

  /** Ms until `amount` can be taken (0 if it can now). */
  waitMs(amount: number, nowMs: number): number {
    this.#refill(nowMs);
    return this.#tokens >= amount
      ? 0
      : Math.ceil(((amount - this.#tokens) / this.ratePerSec) * 1000);
  }
}

/**
 * The key an address is limited under: IPv4 as is (an IPv4-mapped IPv6 address as
 * its IPv4), IPv6 as its /64 prefix, anything else (a test's label) as is.
 */
export function addressKey(ip: string): string {
  const s = ip.trim().replace(/^\[|\]$/g, "").toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (mapped) return mapped[1];
  if (!s.includes(":")) return s;
  const groups = ipv6Groups(s);
  return groups ? `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64` : s;
}

/** The four bytes of a dotted IPv4 literal, or undefined. */
export function ipv4Bytes(s: string): number[] | undefined {
  const parts = s.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) {
    return undefined;
  }
  return parts.map(Number);
}

/**
 * The eight 16-bit groups of an IPv6 literal (any case; a zone after "%" ignored; the
 * last two groups may be written as a dotted IPv4 address), or undefined.
 */
export function ipv6Groups(text: string): number[] | undefined {
  const zone = text.indexOf("%");
  const halves = (zone >= 0 ? text.slice(0, zone) : text).split("::");
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    const out: number[] = [];
    const items = part ? part.split(":") : [];
    for (let i = 0; i < items.length; i++) {
      const v4 = i === items.length - 1 ? ipv4Bytes(items[i]) : undefined;
      if (v4) out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      else if (/^[0-9a-fA-F]{1,4}$/.test(items[i])) out.push(parseInt(items[i], 16));
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  return [...head, ...Array(missing).fill(0), ...tail];
}

/** Why an address may not connect now. */
export type AddressRefusal =
  | { readonly kind: "per_address"; readonly reason: string }
  | { readonly kind: "rate"; readonly reason: string; readonly retryAfterMs: number };

interface Entry {
  open: number;
  readonly connects: Budget;
}

/** Per-address admission: open connections and new connections per second. */
export class AddressGate {
  readonly #entries = new Map<string, Entry>();
  readonly #limits: {
    readonly maxOpen: number;
    readonly connectBurst: number;
    readonly connectsPerSec: number;
  };

  constructor(limits: { maxOpen: number; connectBurst: number; connectsPerSec: number }) {
    this.#limits = limits;
  }

  #entry(key: string, nowMs: number): Entry {
    let e = this.#entries.get(key);
    if (!e) {
      const { connectBurst: burst, connectsPerSec: ratePerSec } = this.#limits;
      e = { open: 0, connects: new Budget({ ratePerSec, burst, nowMs }) };
      this.#entries.set(key, e);
    }
    return e;
  }

  /**
   * Whether `key` may open one more connection. With `attempt`, this is a real attempt
   * and costs a token from the address's budget whatever the answer (a refused storm
   * of attempts stays refused); without, it only looks.
   */
  check(key: string, opts: { nowMs: number; attempt: boolean }): AddressRefusal | undefined {
    const e = this.#entry(key, opts.nowMs);
    try {
      if (e.open >= this.#limits.maxOpen) {
        if (opts.attempt) e.connects.take(1, opts.nowMs);
        return { kind: "per_address", reason: "too many connections from your address" };
      }
      const ok = opts.attempt ? e.connects.take(1, opts.nowMs) : e.connects.has(1, opts.nowMs);
      if (!ok) {
        return {
          kind: "rate",
          reason: "connecting too often from your address, try again shortly",
          retryAfterMs: e.connects.waitMs(1, opts.nowMs),
        };
      }
      return undefined;
    } finally {
      this.#drop(key, e, opts.nowMs);
    }
  }

  /** A connection from `key` opened. */
  opened(key: string, nowMs: number): void {
    this.#entry(key, nowMs).open++;
  }

  /** A connection from `key` closed. */
  closed(key: string, nowMs: number): void {
    const e = this.#entries.get(key);
    if (!e) return;
    e.open = Math.max(0, e.open - 1);
    this.#drop(key, e, nowMs);
  }

  /** Open connections from `key`. */
  openFrom(key: string): number {
    return this.#entries.get(key)?.open ?? 0;
  }

  /** Forgets addresses with nothing open and a full budget (call now and then). */
  prune(nowMs: number): void {
    for (const [key, e] of this.#entries) this.#drop(key, e, nowMs);
  }

  /** Addresses remembered (for tests and metrics: bounded by the active ones). */
  get size(): number {
    return this.#entries.size;
  }

  #drop(key: string, e: Entry, nowMs: number): void {
    if (e.open === 0 && e.connects.full(nowMs)) this.#entries.delete(key);
  }
}
