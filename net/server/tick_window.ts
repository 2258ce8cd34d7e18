/** The durations of the last N ticks, for a recent p50/p99 (load reports, /metrics). */

/** A ring of recent tick durations, in ms. */
export class TickWindow {
  readonly #ms: Float64Array;
  #count = 0;
  #next = 0;

  constructor(size: number) {
    this.#ms = new Float64Array(size);
  }

  add(ms: number): void {
    this.#ms[this.#next] = ms;
    this.#next = (this.#next + 1) % this.#ms.length;
    if (this.#count < this.#ms.length) this.#count++;
  }

  /** The mean of the recorded durations; 0 before any. */
  mean(): number {
    let sum = 0;
    for (let i = 0; i < this.#count; i++) sum += this.#ms[i];
    return this.#count === 0 ? 0 : sum / this.#count;
  }

  /** The `q` quantile (0–1) of the recorded durations; 0 before any. */
  quantile(q: number): number {
    if (this.#count === 0) return 0;
    const sorted = this.#ms.slice(0, this.#count).sort();
    return sorted[Math.min(this.#count - 1, Math.floor(q * this.#count))];
  }
}
