/**
 * Player movement: the one function the server runs and client prediction replays.
 * Must not import anything outside sim/.
 */
import { clamp, pushCircleOutOfRect } from "./geometry.ts";
import { TICK_S } from "./time.ts";
import { type ArenaDef, Button, type PlayerTuning } from "./types.ts";

/** Largest magnitude of a move axis on the wire (hundredths of full speed). */
export const MOVE_UNITS = 100;

/**
 * Turns wire move units into a vector inside the unit disc. Every input goes
 * through here, so no frame can buy more than full speed.
 */
export function sanitizeMove(moveX: number, moveY: number): { x: number; y: number } {
  return sanitizeInto(moveX, moveY, { x: 0, y: 0 });
}

/** sanitizeMove() into `out` (movePlayer's own, reused: every ship moves every tick). */
function sanitizeInto(
  moveX: number,
  moveY: number,
  out: { x: number; y: number },
): { x: number; y: number } {
  let x = clamp(moveX, -MOVE_UNITS, MOVE_UNITS) / MOVE_UNITS;
  let y = clamp(moveY, -MOVE_UNITS, MOVE_UNITS) / MOVE_UNITS;
  if (!Number.isFinite(x) || !Number.isFinite(y)) {
    x = 0;
    y = 0;
  }
  const len2 = x * x + y * y;
  if (len2 > 1) {
    const len = Math.sqrt(len2);
    x /= len;
    y /= len;
  }
  out.x = x;
  out.y = y;
  return out;
}

const MOVE = { x: 0, y: 0 };

/**
 * Moves a ship one tick by the move vector (at focus speed while Focus is held), then
 * keeps it inside the arena and out of walls.
 */
export function movePlayer(
  pos: { x: number; y: number },
  move: { moveX: number; moveY: number; buttons?: number },
  opts: { arena: ArenaDef; tuning: PlayerTuning },
): void {
  const v = sanitizeInto(move.moveX, move.moveY, MOVE);
  const focused = ((move.buttons ?? 0) & Button.Focus) !== 0;
  const stepPx = (focused ? opts.tuning.focusSpeedPxPerS : opts.tuning.speedPxPerS) * TICK_S;
  const r = opts.tuning.radiusPx;
  pos.x = clamp(pos.x + v.x * stepPx, r, opts.arena.widthPx - r);
  pos.y = clamp(pos.y + v.y * stepPx, r, opts.arena.heightPx - r);
  for (const wall of opts.arena.walls) pushCircleOutOfRect(pos, r, wall);
}
