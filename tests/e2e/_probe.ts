/**
 * A probe of this process's event loop for e2e timing checks: the longest gap between
 * timer wake-ups, and for each stall (a gap longer than a tick) how much CPU the process
 * got meanwhile. A stall during which the process barely ran is the machine's (another
 * process had the cores); one during which it was busy is its own (its work, GC).
 */
import process from "node:process";
import { TICK_MS } from "../../sim/mod.ts";

/** The probe's period; the CPU share of a gap that makes a stall this process's own. */
const PROBE_EVERY_MS = 2;
const OWN_STALL_CPU_SHARE = 0.5;

/** Watches the event loop from construction until stop(). */
export class LoopProbe {
  /** Tick periods lost while the process was off the CPU. */
  starvedTicks = 0;
  /** Stalls of either kind, and the longest gap. */
  stalls = 0;
  /**
   * Gaps of more than two ticks: long enough to hold a client's input frame past the tick
   * it was made for (the relays and the server in this process wait meanwhile).
   */
  longStalls = 0;
  ownStalls = 0;
  maxGapMs = 0;
  #lastMs = performance.now();
  #lastCpu = process.cpuUsage();
  readonly #timer: ReturnType<typeof setInterval>;

  constructor() {
    this.#timer = setInterval(() => this.#sample(), PROBE_EVERY_MS);
  }

  #sample(): void {
    const nowMs = performance.now();
    const cpu = process.cpuUsage();
    const gapMs = nowMs - this.#lastMs;
    const cpuMs = (cpu.user - this.#lastCpu.user + cpu.system - this.#lastCpu.system) / 1000;
    this.#lastMs = nowMs;
    this.#lastCpu = cpu;
    this.maxGapMs = Math.max(this.maxGapMs, gapMs);
    if (gapMs <= TICK_MS) return;
    this.stalls++;
    if (gapMs > 2 * TICK_MS) this.longStalls++;
    if (cpuMs < OWN_STALL_CPU_SHARE * gapMs) this.starvedTicks += Math.floor(gapMs / TICK_MS);
    else this.ownStalls++;
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
