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

/** Where a stall began, as the loop tells a `WakeWatch`. */
export interface StallStart {
  /** How late the stall's first tick started, ms (over a tick). */
  readonly lateMs: number;
  /**
   * Since the wake-up before this one ended, ms: where the time went. The loop slept
   * (or should have) for `timerMs` of it; past that, it did what was left of the turn
   * (its writes, its reads), and this wake-up's `ticksBefore` ticks ran before the late one.
   */
  readonly awayMs: number;
  /** The timer the wake-up before set, ms. */
  readonly timerMs: number;
  /** How long the wake-up before ran its ticks, ms. */
  readonly previousMs: number;
  /** Ticks this wake-up ran before the late one (0: the wake-up itself began late). */
  readonly ticksBefore: number;
}

/**
 * Hears where each stall began, so a watcher can tell what the loop did in the time before
 * (net/server/stall_watch.ts): it samples at every wake-up's end, and again when a stall
 * begins.
 */
export interface WakeWatch {
  /** A wake-up is over; the loop sleeps until its timer, `timerMs` from now. */
  asleep(timerMs: number): void;
  /** A stall began: this wake-up's first tick is over a tick late. */
  stalled(stall: StallStart): void;
}

/** Wake this long before a tick's target: timers fire late, rarely early. */
const WAKE_EARLY_MS = 1;

/** Calls `step` once per tick at 60 Hz until stopped. */
export class FixedStepScheduler {
  readonly #clock: Clock;
  readonly #step: (tick: number) => void;
  readonly #maxCatchUp: number;
  readonly #onError: (err: unknown) => void;
  readonly #watch: WakeWatch | undefined;
  #timer: number | undefined;
  /** When the last wake-up began and ended, how long it ran, and the timer it set. */
  #wokeAt = 0;
  #sleptAt = 0;
  #previousMs = 0;
  #timerMs = 0;
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
      /** Hears where each stall began (none by default). */
      watch?: WakeWatch;
    },
  ) {
    this.#watch = opts.watch;
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
    this.#wokeAt = this.#clock.now();
    this.#nextAt = this.#wokeAt + TICK_MS;
    this.#arm();
  }

  stop(): void {
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    const now = this.#clock.now();
    const delay = Math.max(0, this.#nextAt - now - WAKE_EARLY_MS);
    this.#timer = this.#clock.setTimer(() => this.#wake(), delay);
    this.#previousMs = now - this.#wokeAt;
    this.#sleptAt = now;
    this.#timerMs = delay;
    this.#watch?.asleep(delay);
  }

  #wake(): void {
    this.stats.wakes++;
    let ran = 0;
    let now = this.#clock.now();
    this.#wokeAt = now;
    while (now >= this.#nextAt - WAKE_EARLY_MS && ran < this.#maxCatchUp) {
      const late = now - this.#nextAt;
      if (late > TICK_MS) {
        // A stall begins (one still catching up, capped per wake-up, began before).
        if (this.#stallMs === 0) {
          this.#watch?.stalled({
            lateMs: late,
            awayMs: now - this.#sleptAt,
            timerMs: this.#timerMs,
            previousMs: this.#previousMs,
            ticksBefore: ran,
          });
        }
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
