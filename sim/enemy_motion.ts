/**
 * How a trash enemy moves in one tick: the one function the server's world runs
 * and a client (or the server, reconstructing what a player saw) runs forward from a
 * snapshot. Must not import anything outside sim/.
 */
import { clamp, pushCircleOutOfRect } from "./geometry.ts";
import { TICK_S } from "./time.ts";
import type { ArenaDef, EnemyDef } from "./types.ts";

/** What moving needs to know of an enemy, and changes. */
export interface EnemyMotion {
  x: number;
  y: number;
  /** Drift heading (a unit vector, or zero). */
  dirX: number;
  dirY: number;
  /** Which way a distance-keeper circles its target: 1 or -1. */
  readonly strafe: number;
}

/** Band around a distance-keeper's preferred distance in which it circles instead. */
export const KEEP_DISTANCE_BAND_PX = 20;

/** Moves `e` one tick by its def's movement toward (or around) `target`. */
export function stepEnemyMotion(
  e: EnemyMotion,
  opts: {
    def: EnemyDef;
    target: { readonly x: number; readonly y: number } | undefined;
    arena: ArenaDef;
  },
): void {
  const { def, target, arena } = opts;
  const m = def.movement;
  if (m.type === "stationary") return;
  const r = def.radiusPx;
  const step = m.speedPxPerS * TICK_S;
  let dx = e.dirX;
  let dy = e.dirY;
  if (target && m.type !== "drift") {
    const tx = target.x - e.x;
    const ty = target.y - e.y;
    const d = Math.hypot(tx, ty) || 1;
    if (m.type === "chase" || d > m.distancePx + KEEP_DISTANCE_BAND_PX) [dx, dy] = [tx / d, ty / d];
    else if (d < m.distancePx - KEEP_DISTANCE_BAND_PX) [dx, dy] = [-tx / d, -ty / d];
    else [dx, dy] = [(-ty / d) * e.strafe, (tx / d) * e.strafe];
  }
  if (m.type !== "drift" && !target) [dx, dy] = [0, 0];
  const nx = e.x + dx * step;
  const ny = e.y + dy * step;
  if (m.type === "drift") {
    // Bounce off the arena edges.
    if (nx < r || nx > arena.widthPx - r) e.dirX = -e.dirX;
    if (ny < r || ny > arena.heightPx - r) e.dirY = -e.dirY;
  }
  e.x = clamp(nx, r, arena.widthPx - r);
  e.y = clamp(ny, r, arena.heightPx - r);
  for (const wall of arena.walls) pushCircleOutOfRect(e, r, wall);
}
