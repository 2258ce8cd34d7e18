/**
 * The game loop's thread at a real-time priority (Linux): `SCHED_FIFO` at a low priority,
 * through the C library over Deno's FFI. Every tick, every message and every socket of the
 * process runs on that one thread; anything else that wants its core at normal priority
 * (V8's compiler thread, the kernel's housekeeping threads, the machine's other processes)
 * then runs while the loop sleeps between ticks, instead of taking the core from it in the
 * middle of one. It costs no CPU: the same work, in another order.
 *
 * Needs CAP_SYS_NICE, or an RLIMIT_RTPRIO of at least LOOP_RT_PRIORITY (systemd's
 * `LimitRTPRIO=`), and a kernel or container that grants real-time time; without them the
 * loop stays at normal priority and says why. The kernel keeps 5 % of every second for the
 * rest of the core (`sched_rt_runtime_us`), and `PriorityGuard` gives the priority back
 * when the loop cannot keep up, so a process in overload never holds a core.
 */
import { openLibc } from "./libc.ts";

/** The loop's real-time priority: the lowest band, under the kernel's own real-time threads. */
export const LOOP_RT_PRIORITY = 10;

const SCHED_OTHER = 0;
const SCHED_FIFO = 1;
/** Threads and processes this thread starts from then on begin at normal priority. */
const SCHED_RESET_ON_FORK = 0x40000000;
const EPERM = 1;

const SYMBOLS = {
  sched_setscheduler: { parameters: ["i32", "i32", "buffer"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

/** What the loop's thread runs at, and why when it is not what was asked. */
export interface LoopPriority {
  readonly got: "realtime" | "normal";
  readonly why?: string;
}

/** The calling thread's scheduling, through the C library (Linux only). */
export class ThreadScheduling {
  readonly #lib: Deno.DynamicLibrary<typeof SYMBOLS>;

  private constructor(lib: Deno.DynamicLibrary<typeof SYMBOLS>) {
    this.#lib = lib;
  }

  /** Undefined off Linux or without the FFI permission. */
  static open(): ThreadScheduling | undefined {
    const lib = openLibc(SYMBOLS);
    return lib && new ThreadScheduling(lib);
  }

  /**
   * Puts the calling thread at `SCHED_FIFO` `priority`; the errno when refused. What it
   * starts afterwards (the runtime's worker threads, child processes) does not inherit it.
   */
  realtime(priority = LOOP_RT_PRIORITY): number {
    return this.#set(SCHED_FIFO | SCHED_RESET_ON_FORK, priority);
  }

  /** Puts the calling thread back at normal priority; the errno when refused. */
  normal(): number {
    return this.#set(SCHED_OTHER, 0);
  }

  close(): void {
    this.#lib.close();
  }

  #set(policy: number, priority: number): number {
    // struct sched_param { int sched_priority; }; pid 0 is the calling thread.
    const param = new Int32Array([priority]);
    if (this.#lib.symbols.sched_setscheduler(0, policy, param) === 0) return 0;
    const at = this.#lib.symbols.__errno_location();
    return at ? new Deno.UnsafePointerView(at).getInt32(0) : -1;
  }
}

/**
 * The scheduling policy in a `/proc/…/stat` line (0 normal, 1 FIFO, 2 round-robin, …):
 * field 41, counted from field 3 (the state) after the command's closing paren.
 */
export function schedPolicyOf(stat: string): number {
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[38]);
}

/** Why a refusal happened, in words an operator can act on. */
export function refusalText(errno: number): string {
  return errno === EPERM
    ? "not permitted: grant CAP_SYS_NICE or LimitRTPRIO=10 (deploy/README.md)"
    : `sched_setscheduler failed (errno ${errno})`;
}

/** Asks for the loop's real-time priority on the calling thread (the one that runs the loop). */
export function raiseLoopPriority(sched: ThreadScheduling | undefined): LoopPriority {
  if (!sched) return { got: "normal", why: "unsupported here (Linux with --allow-ffi only)" };
  const errno = sched.realtime();
  return errno === 0 ? { got: "realtime" } : { got: "normal", why: refusalText(errno) };
}

/** The scheduler's running counts, as `FixedStepScheduler.stats` keeps them. */
export interface TickCounts {
  /** Ticks run. */
  readonly ticks: number;
  /** Ticks skipped because the loop was too far behind to catch up. */
  readonly ticksDropped: number;
}

/** The wait before the priority is taken again doubles at most this often (5 min to 80). */
const MAX_RECOVER_DOUBLINGS = 4;

/** What a check of `PriorityGuard` did: gave the priority back, took it again, or nothing. */
export type GuardVerdict = "lowered" | "raised" | undefined;

/**
 * Gives the real-time priority back when the loop cannot keep up, and takes it again
 * once the load has passed. A process that drops at least `overloadShare` of its ticks
 * in each of `overloadChecks` checks in a row is overloaded, and holding a core at
 * real-time priority would only starve the rest of the machine. A start-up, or hundreds
 * of players arriving at once, drops ticks for a few seconds while V8 compiles the hot
 * code (the load test's ramp to 800 players: 114–131 in the first 5 s, 1–13 in the next
 * 5, none after): the checks in a row must outlast that. After `recoverChecks` checks in
 * a row without a dropped tick it asks for the priority again; each time it has to give
 * it back, the wait before the next try doubles (up to 16 times), so a load on the edge
 * does not flap.
 * Call `check` every few seconds with the scheduler's counts.
 */
export class PriorityGuard {
  readonly #lower: () => void;
  /** Asks for the priority again: false when refused. */
  readonly #raise: () => boolean;
  readonly #overloadChecks: number;
  readonly #overloadShare: number;
  readonly #recoverChecks: number;
  #last: TickCounts = { ticks: 0, ticksDropped: 0 };
  /** Checks in a row that were behind (while raised) or clean (while lowered). */
  #run = 0;
  #lowered = false;
  #timesLowered = 0;

  constructor(opts: {
    lower: () => void;
    raise: () => boolean;
    overloadChecks: number;
    overloadShare: number;
    recoverChecks: number;
  }) {
    this.#lower = opts.lower;
    this.#raise = opts.raise;
    this.#overloadChecks = opts.overloadChecks;
    this.#overloadShare = opts.overloadShare;
    this.#recoverChecks = opts.recoverChecks;
  }

  /** True while the priority is given back. */
  get lowered(): boolean {
    return this.#lowered;
  }

  /** Clean checks in a row the guard waits for before it asks for the priority again. */
  get recoverChecks(): number {
    const doublings = Math.min(MAX_RECOVER_DOUBLINGS, Math.max(0, this.#timesLowered - 1));
    return this.#recoverChecks * 2 ** doublings;
  }

  /** One check: what it did, if anything. */
  check(counts: TickCounts): GuardVerdict {
    const ran = counts.ticks - this.#last.ticks;
    const dropped = counts.ticksDropped - this.#last.ticksDropped;
    this.#last = { ticks: counts.ticks, ticksDropped: counts.ticksDropped };
    if (this.#lowered) {
      this.#run = dropped === 0 ? this.#run + 1 : 0;
      if (this.#run < this.recoverChecks) return undefined;
      this.#run = 0;
      if (!this.#raise()) return undefined;
      this.#lowered = false;
      return "raised";
    }
    const behind = dropped > 0 && dropped >= this.#overloadShare * (ran + dropped);
    this.#run = behind ? this.#run + 1 : 0;
    if (this.#run < this.#overloadChecks) return undefined;
    this.#run = 0;
    this.#lowered = true;
    this.#timesLowered++;
    this.#lower();
    return "lowered";
  }
}
