/**
 * The simulation clock: ticks are integers, seconds appear only here and in content.
 * Must not import anything outside sim/.
 */

/** Simulation steps per second. */
export const TICK_HZ = 60;
/** Length of one tick in seconds. */
export const TICK_S = 1 / TICK_HZ;
/** Length of one tick in milliseconds. */
export const TICK_MS = 1000 / TICK_HZ;

/** Converts seconds to a whole number of ticks (rounded to the nearest tick). */
export function ticks(seconds: number): number {
  return Math.round(seconds * TICK_HZ);
}
