/**
 * Interest management: in a crowded instance each client gets full state only for
 * the players nearest to it (itself included); the roster still counts everyone.
 * Pure selection, kept apart from encoding so any snapshot format can use it.
 */

/** A player with a position. */
export interface Positioned {
  readonly id: number;
  readonly x: number;
  readonly y: number;
}

/**
 * The `max` players nearest to `self`, `self` first, the rest nearest first. Without
 * `self` (not in the world), the first `max`. O(n · max): no sort of the whole crowd.
 */
export function nearestPlayers<T extends Positioned>(
  players: readonly T[],
  opts: { self: T | undefined; max: number },
): T[] {
  const { self, max } = opts;
  if (players.length <= max) return [...players];
  if (!self) return players.slice(0, max);
  const out: T[] = [self];
  const dist: number[] = [-1];
  for (const p of players) {
    if (p === self) continue;
    const d = (p.x - self.x) ** 2 + (p.y - self.y) ** 2;
    if (out.length === max && d >= dist[max - 1]) continue;
    let i = out.length === max ? max - 1 : out.length;
    // Insertion into the sorted tail (slot 0, self, never moves).
    while (i > 1 && dist[i - 1] > d) {
      if (i < max) {
        out[i] = out[i - 1];
        dist[i] = dist[i - 1];
      }
      i--;
    }
    out[i] = p;
    dist[i] = d;
  }
  return out;
}

/**
 * The same selection as `nearestPlayers`, for many members of one crowd on one tick:
 * the players sorted by x once, then each query walks outwards from its own x and
 * stops where the x gap alone is farther than the `max`-th nearest so far. The result,
 * ties included (the earlier in `players` wins), is exactly `nearestPlayers`'s. A
 * query allocates nothing (`nearestIndices`): a crowd asks it 200 times a tick.
 *
 * One index serves an instance tick after tick (`update`): when the same players stand
 * at the same places in the list, last tick's order by x is sorted again by insertion.
 * They move a few pixels a tick, so it is nearly in order already: a few swaps where a
 * sort from scratch compared every pair it met through a closure.
 */
export class NearestIndex<T extends Positioned> {
  #players: readonly T[] = [];
  /** The last `update`'s number of players and their ids by index: does its order still apply? */
  #count = 0;
  #ids = new Int32Array(0);
  /** Indices into `players`, by x (then by index): the first `players.length`. */
  #byX = new Int32Array(0);
  /** Where each player (by index) sits in `#byX`. */
  #rank = new Int32Array(0);
  #sortedFrom: "last" | "scratch" = "scratch";
  /** A query's best so far, nearest first: distance², index (self first in `#out`). */
  #dist = new Float64Array(0);
  #idx = new Int32Array(0);
  #out = new Int32Array(0);

  constructor(players?: readonly T[]) {
    if (players) this.update(players);
  }

  /** Indexes this tick's players (their positions are read now, not at each query). */
  update(players: readonly T[]): void {
    const n = players.length;
    const same = n === this.#count && this.#sameIds(players);
    this.#players = players;
    this.#count = n;
    if (this.#byX.length < n) {
      const room = Math.max(n, 2 * this.#byX.length);
      this.#ids = new Int32Array(room);
      this.#byX = new Int32Array(room);
      this.#rank = new Int32Array(room);
    }
    for (let i = 0; i < n; i++) this.#ids[i] = players[i].id;
    const byX = this.#byX;
    if (!same || !this.#resort(n)) {
      this.#sortedFrom = "scratch";
      const order = players.map((_, i) => i).sort((a, b) => players[a].x - players[b].x || a - b);
      byX.set(order);
    } else {
      this.#sortedFrom = "last";
    }
    for (let r = 0; r < n; r++) this.#rank[byX[r]] = r;
  }

  /**
   * Lets go of this tick's players once its queries are done (their order and ids are
   * kept for the next `update`): held until then, they would outlive a scavenge or two.
   */
  release(): void {
    this.#players = [];
  }

  /** How the last `update` ordered the players: from last tick's order, or from scratch. */
  get sortedFrom(): "last" | "scratch" {
    return this.#sortedFrom;
  }

  /** True when `players` holds the last update's players at the same indices. */
  #sameIds(players: readonly T[]): boolean {
    const ids = this.#ids;
    for (let i = 0; i < players.length; i++) if (ids[i] !== players[i].id) return false;
    return true;
  }

  /**
   * Sorts last tick's order again by insertion (by x, then by index: a total order, so
   * the answer is the one a sort from scratch gives). Gives up, false, once it has moved
   * players more than a few times their number: a crowd that jumped about is sorted anew.
   */
  #resort(n: number): boolean {
    const players = this.#players;
    const byX = this.#byX;
    let budget = 4 * n;
    for (let r = 1; r < n; r++) {
      const i = byX[r];
      const x = players[i].x;
      let at = r;
      while (at > 0) {
        const j = byX[at - 1];
        const xj = players[j].x;
        if (xj < x || (xj === x && j < i)) break;
        byX[at] = j;
        at--;
        if (--budget < 0) return false;
      }
      byX[at] = i;
    }
    return true;
  }

  /** `nearestPlayers(players, { self: players[selfIndex], max })`, faster. */
  nearest(selfIndex: number, max: number): T[] {
    const players = this.#players;
    const count = this.nearestIndices(selfIndex, max);
    return Array.from(this.found.subarray(0, count), (i) => players[i]);
  }

  /**
   * The indices (into `players`) of the last query's answer, in its order: the first
   * `nearestIndices` returned of them (the index's own buffer: read it before the next).
   */
  get found(): Int32Array {
    return this.#out;
  }

  /**
   * Finds `nearest(selfIndex, max)`'s answer and returns how many it holds, their indices
   * in `found` (no view made: a crowd asks this 200 times a tick).
   */
  nearestIndices(selfIndex: number, max: number): number {
    const players = this.#players;
    const n = players.length;
    if (this.#out.length < max) {
      this.#dist = new Float64Array(max);
      this.#idx = new Int32Array(max);
      this.#out = new Int32Array(max);
    }
    const out = this.#out;
    if (n <= max) {
      for (let i = 0; i < n; i++) out[i] = i;
      return n;
    }
    const self = players[selfIndex];
    const byX = this.#byX;
    const dist = this.#dist;
    const idx = this.#idx;
    const keep = max - 1;
    let kept = 0;
    const r = this.#rank[selfIndex];
    let lo = r - 1;
    let hi = r + 1;
    while (lo >= 0 || hi < n) {
      const worst = kept === keep ? dist[keep - 1] : Infinity;
      const gapLo = lo >= 0 ? self.x - players[byX[lo]].x : Infinity;
      const gapHi = hi < n ? players[byX[hi]].x - self.x : Infinity;
      // Nothing farther out along x can beat the worst kept (a tie may, by index: go on).
      if (gapLo * gapLo > worst && gapHi * gapHi > worst) break;
      const i = gapLo <= gapHi ? byX[lo--] : byX[hi++];
      // Offer player i to the sorted best-so-far (ties to the lower index).
      const p = players[i];
      const dx = p.x - self.x;
      const dy = p.y - self.y;
      const d = dx * dx + dy * dy;
      if (kept === keep && (d > dist[kept - 1] || (d === dist[kept - 1] && i > idx[kept - 1]))) {
        continue;
      }
      let at = kept === keep ? kept - 1 : kept;
      while (at > 0 && (dist[at - 1] > d || (dist[at - 1] === d && idx[at - 1] > i))) {
        if (at < keep) {
          dist[at] = dist[at - 1];
          idx[at] = idx[at - 1];
        }
        at--;
      }
      dist[at] = d;
      idx[at] = i;
      if (kept < keep) kept++;
    }
    out[0] = selfIndex;
    for (let k = 0; k < kept; k++) out[k + 1] = idx[k];
    return kept + 1;
  }
}
