/**
 * Seeded PRNG (mulberry32). The state is a plain number kept on the world, so a
 * world's whole future is a function of its seed and inputs.
 * Must not import anything outside sim/.
 */

/** A 32-bit PRNG state holder; copy `state` to fork, assign it to restore. */
export class Rng {
  /** Starts as a number: declared without one, it would start as undefined and box every state. */
  state = 0;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform float in [min, max). */
  range(min: number, max: number): number {
    return min + (max - min) * this.next();
  }
}
