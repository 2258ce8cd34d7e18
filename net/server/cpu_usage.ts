/**
 * The process's CPU use, read at the start of each tick that could be logged, so that a slow
 * one's line can say what the loop did with the time: worked (user time near the tick's length),
 * worked in the kernel (system time, page faults), or lost its core (preemptions, and CPU
 * well short of the tick's length).
 */
import process from "node:process";
import { openLibc } from "./libc.ts";

/** Cumulative counts since the process started. */
export interface CpuSample {
  /** CPU in user space, ms (every thread of the process). */
  readonly userMs: number;
  /** CPU in the kernel on the process's behalf, ms. */
  readonly systemMs: number;
  /** Involuntary context switches: the kernel took a core from one of its threads. */
  readonly preemptions: number;
  /** Page faults served without I/O. */
  readonly pageFaults: number;
}

/** The process's usage so far (one `getrusage`, a few µs). */
export function processCpu(): CpuSample {
  const u = process.resourceUsage();
  return {
    userMs: u.userCPUTime / 1000,
    systemMs: u.systemCPUTime / 1000,
    preemptions: u.involuntaryContextSwitches,
    pageFaults: u.minorPageFault,
  };
}

/** What was spent between two samples, each figure to 0.01. */
export function cpuSpent(from: CpuSample, to: CpuSample): CpuSample {
  const round = (v: number) => Math.round(v * 100) / 100;
  return {
    userMs: round(to.userMs - from.userMs),
    systemMs: round(to.systemMs - from.systemMs),
    preemptions: to.preemptions - from.preemptions,
    pageFaults: to.pageFaults - from.pageFaults,
  };
}

const RUSAGE_THREAD = 1;
/** `struct rusage` in 64-bit words: two timevals, then fourteen longs (Linux, 64-bit). */
const RUSAGE_WORDS = 18;
const RUSAGE_SYMBOLS = {
  getrusage: { parameters: ["i32", "buffer"], result: "i32" },
} as const;

/** A thread's CPU reader, holding the C library open until closed. */
export interface ThreadCpu {
  /** The calling thread's usage so far. */
  read(): CpuSample;
  close(): void;
}

/**
 * The calling thread's usage alone (`getrusage(RUSAGE_THREAD)` through the C library):
 * the game loop's own, with none of the runtime's other threads in it (one call, well
 * under a µs). Undefined off Linux, without the FFI permission, or where the kernel has no
 * per-thread usage.
 */
export function openThreadCpu(): ThreadCpu | undefined {
  const lib = openLibc(RUSAGE_SYMBOLS);
  if (!lib) return undefined;
  const words = new BigInt64Array(RUSAGE_WORDS);
  const w = (i: number) => Number(words[i]);
  // A kernel without RUSAGE_THREAD says so at once: the process's own usage then.
  if (lib.symbols.getrusage(RUSAGE_THREAD, words) !== 0) {
    lib.close();
    return undefined;
  }
  return {
    read: () => {
      // It cannot fail once it has worked (the buffer and the flag stay good).
      lib.symbols.getrusage(RUSAGE_THREAD, words);
      return {
        userMs: w(0) * 1000 + w(1) / 1000,
        systemMs: w(2) * 1000 + w(3) / 1000,
        // ru_minflt and ru_nivcsw.
        preemptions: w(17),
        pageFaults: w(8),
      };
    },
    close: () => lib.close(),
  };
}
