/**
 * Hits felt before the server says so. A player shot that vanishes on an enemy as drawn
 * is felt on that frame (the enemy flashes, the hit sounds): the server judges a shot by
 * what its shooter saw, so it will nearly always agree, but its word comes a lead, a
 * batch and a trip later. The ledger remembers each strike for a while; the server's hit
 * on the same enemy then claims it, and is known for the strike already felt, not a
 * second hit.
 */
export class StrikeLedger {
  /** Unclaimed strikes' times by enemy, oldest first. */
  readonly #byEnemy = new Map<number, number[]>();
  readonly #claimMs: number;
  /** Strikes no hit claimed in time: felt, but the server never agreed (or not in time). */
  unclaimedTotal = 0;
  /**
   * Strikes on an enemy the server had already killed (its death not yet drawn): the
   * shots a player fires at an enemy in the moment before they see it die.
   */
  overkillTotal = 0;

  constructor(opts: { claimMs: number }) {
    this.#claimMs = opts.claimMs;
  }

  /** A shot vanished on `enemyId` as drawn, at `nowMs`. */
  struck(enemyId: number, nowMs: number): void {
    const times = this.#byEnemy.get(enemyId);
    if (times) {
      this.#expire(times, nowMs);
      times.push(nowMs);
    } else {
      this.#byEnemy.set(enemyId, [nowMs]);
    }
  }

  /**
   * The server says a player shot hit `enemyId`: the time of the oldest strike on it it
   * claims (felt then), or undefined when none was felt in the last `claimMs`.
   */
  claim(enemyId: number, nowMs: number): number | undefined {
    const times = this.#byEnemy.get(enemyId);
    if (!times) return undefined;
    this.#expire(times, nowMs);
    const at = times.shift();
    if (times.length === 0) this.#byEnemy.delete(enemyId);
    return at;
  }

  /**
   * `enemyId` died on the server: the hits that killed it were sent before its death, so
   * a strike left on it came after (the shot flew at an enemy already dead there).
   */
  killed(enemyId: number): void {
    const times = this.#byEnemy.get(enemyId);
    if (!times) return;
    this.overkillTotal += times.length;
    this.#byEnemy.delete(enemyId);
  }

  /** Lets go of every strike too old to be claimed now (counted as unclaimed). */
  expire(nowMs: number): void {
    for (const [enemyId, times] of this.#byEnemy) {
      this.#expire(times, nowMs);
      if (times.length === 0) this.#byEnemy.delete(enemyId);
    }
  }

  /** Forgets everything (a new instance): strikes there are not this one's. */
  clear(): void {
    for (const times of this.#byEnemy.values()) this.unclaimedTotal += times.length;
    this.#byEnemy.clear();
  }

  /** Drops the strikes too old for any hit to claim, counting them. */
  #expire(times: number[], nowMs: number): void {
    let n = 0;
    while (n < times.length && nowMs - times[n] > this.#claimMs) n++;
    if (n === 0) return;
    times.splice(0, n);
    this.unclaimedTotal += n;
  }
}
