/**
 * Small geometry helpers shared by movement, AI and bullets.
 * Must not import anything outside sim/.
 */

/** An axis-aligned rectangle in arena pixels, origin top-left. */
export interface Rect {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

/**
 * True when `v` is outside [lo, hi]: the product of its distances to the two edges is
 * positive exactly then (an edge counts as inside). For tests in loops over every bullet:
 * this is one branch, which goes the same way for nearly every item, where `v < lo ||
 * v > hi` is two, each going either way from one item to the next, and each such change
 * costs the processor a missed guess (CAPACITY: "Branches the processor can guess").
 */
export function outsideSpan(v: number, lo: number, hi: number): boolean {
  return (v - lo) * (v - hi) > 0;
}

/** Clamps `v` into [min, max]. */
export function clamp(v: number, min: number, max: number): number {
  return v < min ? min : v > max ? max : v;
}

/**
 * True when two circles overlap (touching counts). The one overlap test for hits,
 * so a client replica that asks it of the same floats gets the server's answer.
 */
export function circlesOverlap(
  ax: number,
  ay: number,
  ar: number,
  bx: number,
  by: number,
  br: number,
): boolean {
  const dx = ax - bx;
  const dy = ay - by;
  const rr = ar + br;
  return dx * dx + dy * dy <= rr * rr;
}

/**
 * Pushes a circle out of a rectangle along the shortest way, mutating `pos`.
 */
export function pushCircleOutOfRect(
  pos: { x: number; y: number },
  radiusPx: number,
  rect: Rect,
): void {
  const nearestX = clamp(pos.x, rect.x, rect.x + rect.w);
  const nearestY = clamp(pos.y, rect.y, rect.y + rect.h);
  const dx = pos.x - nearestX;
  const dy = pos.y - nearestY;
  const d2 = dx * dx + dy * dy;
  if (d2 >= radiusPx * radiusPx) return;
  if (d2 > 0) {
    const d = Math.sqrt(d2);
    pos.x = nearestX + (dx / d) * radiusPx;
    pos.y = nearestY + (dy / d) * radiusPx;
    return;
  }
  // Centre inside the rectangle: leave through the nearest side.
  const left = pos.x - rect.x;
  const right = rect.x + rect.w - pos.x;
  const top = pos.y - rect.y;
  const bottom = rect.y + rect.h - pos.y;
  const m = Math.min(left, right, top, bottom);
  if (m === left) pos.x = rect.x - radiusPx;
  else if (m === right) pos.x = rect.x + rect.w + radiusPx;
  else if (m === top) pos.y = rect.y - radiusPx;
  else pos.y = rect.y + rect.h + radiusPx;
}
