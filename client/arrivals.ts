/**
 * Whose arrival is news. When you go through a portal (or "again") with others, they
 * arrive in the new instance a tick or a ticket after you; "Ann joined" for each of them
 * would announce your own crew to you. Names, not ids: a transfer to another process
 * gives everyone a new id there, never a new name.
 */
export class Arrivals {
  #companions = new Set<string>();
  #untilMs = 0;

  /** At an Enter: everyone you were with just before may catch up within `windowMs`. */
  entered(companions: Iterable<string>, opts: { nowMs: number; windowMs: number }): void {
    this.#companions = new Set(companions);
    this.#untilMs = opts.nowMs + opts.windowMs;
  }

  /** Whether `name` joining is news: not for a companion catching up (once each). */
  isNews(name: string, nowMs: number): boolean {
    return !(nowMs < this.#untilMs && this.#companions.delete(name));
  }
}
