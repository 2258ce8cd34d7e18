/**
 * What the game loop did in the time before each stall began (the scheduler's WakeWatch:
 * from the end of the wake-up before to the stall's first late tick), told from its
 * thread's own CPU over that time:
 *
 * - **worked**: it ran for at least half of it (the writes and reads between ticks, a
 *   collection, the runtime's own work), so the tick's timer waited for it;
 * - **preempted**: it ran short of that and the kernel took its core (another thread or
 *   process at its priority or above, the kernel's own work);
 * - **slept**: it neither ran nor lost its core: its timer woke it late. On a virtual
 *   machine that is the host, not running the machine's CPU when the timer was due.
 *
 * Counted by verdict for /metrics, and logged as `loop_stall` at most once per `logEveryMs`
 * with the stalls between counted in.
 */
import { type CpuSample, cpuSpent } from "./cpu_usage.ts";
import type { StallStart, WakeWatch } from "./scheduler.ts";

export const STALL_VERDICTS = ["worked", "preempted", "slept"] as const;
export type StallVerdict = typeof STALL_VERDICTS[number];

/** The verdict on `awayMs` in which the loop's thread spent `spent`. */
export function stallVerdict(awayMs: number, spent: CpuSample): StallVerdict {
  if (spent.userMs + spent.systemMs >= awayMs / 2) return "worked";
  return spent.preemptions > 0 ? "preempted" : "slept";
}

export class StallWatch implements WakeWatch {
  /** Stalls so far, by verdict. */
  readonly counts: Record<StallVerdict, number> = { worked: 0, preempted: 0, slept: 0 };
  readonly #cpu: () => CpuSample;
  readonly #now: () => number;
  readonly #logEveryMs: number;
  readonly #log: (fields: Record<string, unknown>) => void;
  /** The loop thread's CPU when the last wake-up ended. */
  #asleep: CpuSample | undefined;
  #loggedAt = -Infinity;
  #unlogged = 0;

  constructor(opts: {
    /** The loop's thread's CPU use so far. */
    cpu: () => CpuSample;
    now: () => number;
    logEveryMs: number;
    log: (fields: Record<string, unknown>) => void;
  }) {
    this.#cpu = opts.cpu;
    this.#now = opts.now;
    this.#logEveryMs = opts.logEveryMs;
    this.#log = opts.log;
  }

  asleep(): void {
    this.#asleep = this.#cpu();
  }

  stalled(stall: StallStart): void {
    const before = this.#asleep;
    if (!before) return;
    const spent = cpuSpent(before, this.#cpu());
    const verdict = stallVerdict(stall.awayMs, spent);
    this.counts[verdict]++;
    this.#unlogged++;
    const now = this.#now();
    if (now - this.#loggedAt < this.#logEveryMs) return;
    const round = (v: number) => Math.round(v * 100) / 100;
    this.#log({
      verdict,
      lateMs: round(stall.lateMs),
      awayMs: round(stall.awayMs),
      timerMs: round(stall.timerMs),
      previousMs: round(stall.previousMs),
      ticksBefore: stall.ticksBefore,
      ...spent,
      stalls: this.#unlogged,
    });
    this.#loggedAt = now;
    this.#unlogged = 0;
  }
}
