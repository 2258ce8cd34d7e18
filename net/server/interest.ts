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
