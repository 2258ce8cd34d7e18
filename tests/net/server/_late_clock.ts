/** A test clock for stalls between wake-ups: the next timer set fires late. */
import { ManualClock } from "../../../net/server/scheduler.ts";

/**
 * A manual clock whose next timer fires `late.ms` late, running `late.meanwhile` first
 * (what the process did meanwhile, if anything): a host that did not run the loop, or a
 * loop kept busy past its timer.
 */
export class LateTimerClock extends ManualClock {
  late: { ms: number; meanwhile?: () => void } | undefined;

  override setTimer(fn: () => void, delayMs: number): number {
    const late = this.late;
    this.late = undefined;
    if (!late) return super.setTimer(fn, delayMs);
    return super.setTimer(() => {
      late.meanwhile?.();
      fn();
    }, delayMs + late.ms);
  }
}
