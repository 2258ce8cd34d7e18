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
 * ties included (the earlier in `players` wins), is exactly `nearestPlayers`'s.
 */
export class NearestIndex<T extends Positioned> {
  readonly #players: readonly T[];
  /** Indices into `players`, by x (then by index). */
  readonly #byX: number[];
  /** Where each player (by index) sits in `#byX`. */
  readonly #rank: Int32Array;

  constructor(players: readonly T[]) {
    this.#players = players;
    this.#byX = players.map((_, i) => i).sort((a, b) => players[a].x - players[b].x || a - b);
    this.#rank = new Int32Array(players.length);
    this.#byX.forEach((i, r) => this.#rank[i] = r);
  }

  /** `nearestPlayers(players, { self: players[selfIndex], max })`, faster. */
  nearest(selfIndex: number, max: number): T[] {
    const players = this.#players;
    if (players.length <= max) return [...players];
    const self = players[selfIndex];
    const byX = this.#byX;
    // The best so far, nearest first: (distance², index) pairs, ties to the lower index.
    const dist: number[] = [];
    const idx: number[] = [];
    const keep = max - 1;
    const offer = (i: number) => {
      const p = players[i];
      const dx = p.x - self.x;
      const dy = p.y - self.y;
      const d = dx * dx + dy * dy;
      const n = dist.length;
      if (n === keep && (d > dist[n - 1] || (d === dist[n - 1] && i > idx[n - 1]))) return;
      let at = n === keep ? n - 1 : n;
      while (at > 0 && (dist[at - 1] > d || (dist[at - 1] === d && idx[at - 1] > i))) {
        if (at < keep) {
          dist[at] = dist[at - 1];
          idx[at] = idx[at - 1];
        }
        at--;
      }
      dist[at] = d;
      idx[at] = i;
    };
    const r = this.#rank[selfIndex];
    let lo = r - 1;
    let hi = r + 1;
    while (lo >= 0 || hi < byX.length) {
      const worst = dist.length === keep ? dist[keep - 1] : Infinity;
      const gapLo = lo >= 0 ? self.x - players[byX[lo]].x : Infinity;
      const gapHi = hi < byX.length ? players[byX[hi]].x - self.x : Infinity;
      // Nothing farther out along x can beat the worst kept (a tie may, by index: go on).
      if (gapLo * gapLo > worst && gapHi * gapHi > worst) break;
      if (gapLo <= gapHi) offer(byX[lo--]);
      else offer(byX[hi++]);
    }
    const out: T[] = [self];
    for (const i of idx) out.push(players[i]);
    return out;
  }
}
