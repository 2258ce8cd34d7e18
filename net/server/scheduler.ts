/**
 * One fixed-step loop for every instance: each wake-up aims at the absolute time of
 * the next tick on a monotonic clock (so late timers never accumulate into drift),
 * catches up at most a bounded number of ticks, and drops the rest.
 * The clock is injected; tests drive it by hand.
 */
import { TICK_MS } from "../../sim/mod.ts";

/** Monotonic time and one-shot timers. */
export interface Clock {
  now(): number;
  setTimer(fn: () => void, delayMs: number): number;
  clearTimer(id: number): void;
}

/** The real clock: performance.now() and setTimeout. */
export const realClock: Clock = {
  now: () => performance.now(),
  // Deno's setTimeout returns a number; the DOM/Node typings disagree, hence the cast.
  setTimer: (fn, delayMs) => setTimeout(fn, delayMs) as unknown as number,
  clearTimer: (id) => clearTimeout(id),
};

/**
 * The buckets of `SchedulerStats.stallBuckets`: the most any tick of a stall started late,
 * ms, at most (the last bucket holds every stall beyond the last bound).
 */
export const STALL_MS_BUCKETS = [25, 33, 50, 100, 250, 1000] as const;

/** What the loop has measured. */
export interface SchedulerStats {
  ticks: number;
  /**
   * Wake-ups of the loop: turns of the event loop that ran ticks. A socket writes what it
   * was given between turns, never during one (net/server/transport.ts reads this).
   */
  wakes: number;
  /** Ticks that started more than one tick after their target time. */
  ticksLate: number;
  /** Ticks skipped because the loop fell too far behind. */
  ticksDropped: number;
  /** Steps that threw (the loop went on). */
  stepErrors: number;
  /**
   * Stalls: runs of late ticks, each counted once a tick starts on time again. One stop
   * of the loop (a collection's pause, a long tick, a burst of I/O between ticks) makes
   * the ticks due meanwhile late, and the ones run to catch up after it: one stall of
   * several late ticks. Many short stalls are a loop with too little time to spare; a
   * few long ones are pauses.
   */
  stalls: number;
  /**
   * Stalls by the most any of their ticks started late: `stallBuckets[i]` counts those of at
   * most STALL_MS_BUCKETS[i] ms (not cumulative); the one past the end, any later.
   */
  stallBuckets: number[];
  /** The stalls' worst lateness, summed, ms. */
  stallMsSum: number;
}

/** Wake this long before a tick's target: timers fire late, rarely early. */
const WAKE_EARLY_MS = 1;

/** Calls `step` once per tick at 60 Hz until stopped. */
export class FixedStepScheduler {
  readonly #clock: Clock;
  readonly #step: (tick: number) => void;
  readonly #maxCatchUp: number;
  readonly #onError: (err: unknown) => void;
  #timer: number | undefined;
  #nextAt = 0;
  #tick = 0;
  readonly stats: SchedulerStats = {
    ticks: 0,
    wakes: 0,
    ticksLate: 0,
    ticksDropped: 0,
    stepErrors: 0,
    stalls: 0,
    stallBuckets: [...STALL_MS_BUCKETS, Infinity].map(() => 0),
    stallMsSum: 0,
  };
  /** The most any tick of the stall in progress started late, ms (0: none in progress). */
  #stallMs = 0;

  constructor(
    clock: Clock,
    opts: {
      step: (tick: number) => void;
      maxCatchUpTicks: number;
      /** Hears an error thrown by `step`; the loop goes on (default: rethrown on a microtask). */
      onError?: (err: unknown) => void;
    },
  ) {
    this.#clock = clock;
    this.#step = opts.step;
    this.#maxCatchUp = opts.maxCatchUpTicks;
    this.#onError = opts.onError ?? ((err) =>
      queueMicrotask(() => {
        throw err;
      }));
  }

  get running(): boolean {
    return this.#timer !== undefined;
  }

  start(): void {
    if (this.running) return;
    this.#nextAt = this.#clock.now() + TICK_MS;
    this.#arm();
  }

  stop(): void {
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    const delay = Math.max(0, this.#nextAt - this.#clock.now() - WAKE_EARLY_MS);
    this.#timer = this.#clock.setTimer(() => this.#wake(), delay);
  }

  #wake(): void {
    this.stats.wakes++;
    let ran = 0;
    let now = this.#clock.now();
    while (now >= this.#nextAt - WAKE_EARLY_MS && ran < this.#maxCatchUp) {
      const late = now - this.#nextAt;
      if (late > TICK_MS) {
        this.stats.ticksLate++;
        if (late > this.#stallMs) this.#stallMs = late;
      } else if (this.#stallMs > 0) {
        this.#endStall();
      }
      try {
        this.#step(this.#tick++);
      } catch (err) {
        // A step that throws costs that tick, never the loop: the timer is re-armed below.
        this.stats.stepErrors++;
        this.#onError(err);
      }
      this.stats.ticks++;
      this.#nextAt += TICK_MS;
      ran++;
      now = this.#clock.now();
    }
    if (now - this.#nextAt > TICK_MS) {
      // Too far behind to catch up: skip ahead rather than burst.
      const behind = Math.floor((now - this.#nextAt) / TICK_MS);
      this.stats.ticksDropped += behind;
      this.#nextAt += behind * TICK_MS;
    }
    if (this.#timer !== undefined) this.#arm();
  }

  /** The stall in progress is over: counted under the most any of its ticks started late. */
  #endStall(): void {
    const ms = this.#stallMs;
    this.#stallMs = 0;
    const s = this.stats;
    s.stalls++;
    s.stallMsSum += ms;
    let i = 0;
    while (i < STALL_MS_BUCKETS.length && ms > STALL_MS_BUCKETS[i]) i++;
    s.stallBuckets[i]++;
  }
}

/** A clock for tests: time moves only when told, timers fire in order. */
export class ManualClock implements Clock {
  #now = 0;
  #nextId = 1;
  readonly #timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, delayMs: number): number {
    const id = this.#nextId++;
    this.#timers.set(id, { at: this.#now + delayMs, fn });
    return id;
  }

  clearTimer(id: number): void {
    this.#timers.delete(id);
  }

  /** Pending timers. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      let nextId = -1;
      let nextAt = Infinity;
      for (const [id, t] of this.#timers) {
        if (t.at < nextAt) [nextId, nextAt] = [id, t.at];
      }
      if (nextId < 0 || nextAt > end) break;
      const timer = this.#timers.get(nextId)!;
      this.#timers.delete(nextId);
      this.#now = Math.max(this.#now, timer.at);
      timer.fn();
    }
    this.#now = end;
  }
}
