/**
 * Hits felt before the server says so. A player shot that vanishes on an enemy as drawn
 * is felt on that frame (the enemy flashes, the hit sounds): the server judges a shot by
 * what its shooter saw, so it will nearly always agree, but its word comes a lead, a
 * batch and a trip later. The ledger remembers each strike for a while; the server's hit
 * on the same enemy then claims it, and is known for the strike already felt, not a
 * second hit. What the strikes not yet claimed would take off an enemy says whether it
 * is already dead on the player's timeline (`pendingDamage`).
 */
export class StrikeLedger {
  /** Unclaimed strikes by enemy, oldest first. */
  readonly #byEnemy = new Map<number, Strike[]>();
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

  /** A shot that would deal `damage` vanished on `enemyId` as drawn, at `atMs`. */
  struck(enemyId: number, strike: Strike): void {
    const strikes = this.#byEnemy.get(enemyId);
    if (strikes) {
      this.#expire(strikes, strike.atMs);
      strikes.push(strike);
    } else {
      this.#byEnemy.set(enemyId, [strike]);
    }
  }

  /** The damage the unclaimed strikes on `enemyId` would deal (0: none waits). */
  pendingDamage(enemyId: number): number {
    let sum = 0;
    for (const s of this.#byEnemy.get(enemyId) ?? []) sum += s.damage;
    return sum;
  }

  /** True when no strike waits for its hit. */
  get empty(): boolean {
    return this.#byEnemy.size === 0;
  }

  /**
   * The server says a player shot hit `enemyId`: the time of the oldest strike on it it
   * claims (felt then), or undefined when none was felt in the last `claimMs`.
   */
  claim(enemyId: number, nowMs: number): number | undefined {
    const strikes = this.#byEnemy.get(enemyId);
    if (!strikes) return undefined;
    this.#expire(strikes, nowMs);
    const first = strikes.shift();
    if (strikes.length === 0) this.#byEnemy.delete(enemyId);
    return first?.atMs;
  }

  /**
   * `enemyId` died on the server: the hits that killed it were sent before its death, so
   * a strike left on it came after (the shot flew at an enemy already dead there).
   */
  killed(enemyId: number): void {
    const strikes = this.#byEnemy.get(enemyId);
    if (!strikes) return;
    this.overkillTotal += strikes.length;
    this.#byEnemy.delete(enemyId);
  }

  /** Lets go of every strike too old to be claimed now (counted as unclaimed). */
  expire(nowMs: number): void {
    for (const [enemyId, strikes] of this.#byEnemy) {
      this.#expire(strikes, nowMs);
      if (strikes.length === 0) this.#byEnemy.delete(enemyId);
    }
  }

  /** Forgets everything (a new instance): strikes there are not this one's. */
  clear(): void {
    for (const strikes of this.#byEnemy.values()) this.unclaimedTotal += strikes.length;
    this.#byEnemy.clear();
  }

  /** Drops the strikes too old for any hit to claim, counting them. */
  #expire(strikes: Strike[], nowMs: number): void {
    let n = 0;
    while (n < strikes.length && nowMs - strikes[n].atMs > this.#claimMs) n++;
    if (n === 0) return;
    strikes.splice(0, n);
    this.unclaimedTotal += n;
  }
}

/** One strike: when it was felt, and what it would deal. */
export interface Strike {
  readonly atMs: number;
  readonly damage: number;
}
