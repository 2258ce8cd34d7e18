/**
 * The link simulator's core: when something sent now arrives. A `LinkPath` is one
 * direction of a network path (delay, jitter, stalls, scripted outages); a
 * `LinkPipe` is one ordered stream over it (nothing overtakes what was sent
 * before it, as on TCP), delivering on an injected clock. No I/O: the TCP relay,
 * the server's transport wrapper and the in-process tests all build on these.
 */
import { Rng } from "../../sim/mod.ts";
import type { LinkDirectionSpec, LinkSpec } from "./spec.ts";

/** Monotonic time and one-shot timers (the server's Clock and ManualClock fit). */
export interface LinkClock {
  now(): number;
  setTimer(fn: () => void, delayMs: number): number;
  clearTimer(id: number): void;
}

interface Window {
  readonly startMs: number;
  readonly endMs: number;
}

/** What a path has done so far. */
export interface PathStats {
  /** Stalls that have begun. */
  stalls: number;
  /** Scripted outages. */
  cuts: number;
}

/** One direction of a network path: a delay, a jitter, stalls and outages. */
export class LinkPath {
  spec: LinkDirectionSpec;
  readonly stats: PathStats = { stalls: 0, cuts: 0 };
  readonly #jitterRng: Rng;
  // A separate generator: the stall schedule depends on the seed and time alone,
  // not on how many messages happened to be sent.
  readonly #stallRng: Rng;
  readonly #stalls: Window[] = [];
  #stallsUntilMs: number;
  readonly #outages: Window[] = [];

  constructor(spec: LinkDirectionSpec, opts: { seed: number; startMs: number }) {
    this.spec = spec;
    this.#jitterRng = new Rng(opts.seed);
    this.#stallRng = new Rng(opts.seed ^ 0x9e3779b9);
    this.#stallsUntilMs = opts.startMs;
  }

  /** When something sent at `sendMs` arrives, ignoring what was sent before it. */
  arrivalMs(sendMs: number): number {
    const { delayMs, jitterMs } = this.spec;
    const jitter = jitterMs > 0 ? this.#jitterRng.range(-jitterMs, jitterMs) : 0;
    let at = sendMs + Math.max(0, delayMs + jitter);
    this.#forget(sendMs);
    // Nothing arrives while the path is down: it waits for the window's end.
    for (let moved = true; moved;) {
      moved = false;
      for (const w of [...this.#stallsAround(at), ...this.#outages]) {
        if (at >= w.startMs && at < w.endMs) {
          at = w.endMs;
          moved = true;
        }
      }
    }
    return at;
  }

  /** True while nothing can arrive (a stall or an outage). */
  downAt(ms: number): boolean {
    return [...this.#stallsAround(ms), ...this.#outages].some((w) =>
      ms >= w.startMs && ms < w.endMs
    );
  }

  /** Takes the path down from `fromMs` for `durationMs`: what would arrive meanwhile waits. */
  cut(fromMs: number, durationMs: number): void {
    this.#outages.push({ startMs: fromMs, endMs: fromMs + durationMs });
    this.stats.cuts++;
  }

  /** Stall windows that can contain `ms`, generated as far as needed. */
  #stallsAround(ms: number): readonly Window[] {
    const { stallMs, stallEveryMs } = this.spec;
    if (stallMs <= 0) return [];
    while (this.#stallsUntilMs <= ms) {
      const startMs = this.#stallsUntilMs + stallEveryMs * this.#stallRng.range(0.5, 1.5);
      this.#stalls.push({ startMs, endMs: startMs + stallMs });
      this.#stallsUntilMs = startMs + stallMs;
      this.stats.stalls++;
    }
    return this.#stalls;
  }

  /** Drops windows that ended before `ms`: sends only move forward in time. */
  #forget(ms: number): void {
    while (this.#stalls.length > 0 && this.#stalls[0].endMs < ms) this.#stalls.shift();
    for (let i = this.#outages.length - 1; i >= 0; i--) {
      if (this.#outages[i].endMs < ms) this.#outages.splice(i, 1);
    }
  }
}

/** Both directions of one simulated path. */
export class LinkSim {
  /** Client → server. */
  readonly up: LinkPath;
  /** Server → client. */
  readonly down: LinkPath;

  /** `stream` salts the seed, so two connections under one spec differ. */
  constructor(spec: LinkSpec, opts: { startMs: number; stream?: number }) {
    const seed = (spec.seed * 2654435761 + (opts.stream ?? 0) * 40503) >>> 0;
    this.up = new LinkPath(spec.up, { seed, startMs: opts.startMs });
    this.down = new LinkPath(spec.down, { seed: seed ^ 0x5bd1e995, startMs: opts.startMs });
  }

  /** Cuts both directions for `durationMs` from `nowMs` ("pull the cable for 3 s"). */
  cut(nowMs: number, durationMs: number): void {
    this.up.cut(nowMs, durationMs);
    this.down.cut(nowMs, durationMs);
  }
}

/** One ordered stream over a path: delivers each item at its arrival time, in order. */
export class LinkPipe<T> {
  readonly #path: LinkPath;
  readonly #clock: LinkClock;
  readonly #deliver: (item: T) => void;
  readonly #queue: { atMs: number; item: T }[] = [];
  #lastAtMs = -Infinity;
  #timer: number | undefined;
  /** Items delivered so far. */
  delivered = 0;

  constructor(path: LinkPath, opts: { clock: LinkClock; deliver: (item: T) => void }) {
    this.#path = path;
    this.#clock = opts.clock;
    this.#deliver = opts.deliver;
  }

  /** Sends `item` now; it arrives after the path's delay, and never before anything sent earlier. */
  send(item: T): void {
    const atMs = Math.max(this.#lastAtMs, this.#path.arrivalMs(this.#clock.now()));
    this.#lastAtMs = atMs;
    this.#queue.push({ atMs, item });
    if (this.#timer === undefined) this.#arm();
  }

  /** Items sent and not yet delivered. */
  get inFlight(): number {
    return this.#queue.length;
  }

  /** When the next item arrives (Infinity when none is in flight). */
  get nextAtMs(): number {
    return this.#queue[0]?.atMs ?? Infinity;
  }

  /** Drops everything in flight and stops (the connection is gone). */
  clear(): void {
    this.#queue.length = 0;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    const head = this.#queue[0];
    if (!head) return;
    this.#timer = this.#clock.setTimer(
      () => this.#fire(),
      Math.max(0, head.atMs - this.#clock.now()),
    );
  }

  #fire(): void {
    this.#timer = undefined;
    const now = this.#clock.now();
    // Shift before delivering: a delivery may send more or clear the pipe.
    while (this.#queue.length > 0 && this.#queue[0].atMs <= now) {
      const { item } = this.#queue.shift()!;
      this.delivered++;
      this.#deliver(item);
    }
    if (this.#timer === undefined) this.#arm();
  }
}
