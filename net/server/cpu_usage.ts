/**
 * The process's CPU use, read at the start of each tick that could be logged, so that a slow
 * one's line can say what the loop did with the time: worked (user time near the tick's length),
 * worked in the kernel (system time, page faults), or lost its core (preemptions, and CPU
 * well short of the tick's length).
 */
import process from "node:process";

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
