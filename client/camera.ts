/**
 * The view onto the arena: follows the local ship, stays inside the arena (or
 * centres it when the window is bigger) and converts between world and screen.
 * Pure arithmetic; no DOM.
 */
import type { ArenaDef } from "../sim/mod.ts";

/**
 * Zoom limits. The zoom fits the whole arena when it can: in a bullet-hell what
 * kills you comes from off-screen otherwise. Small screens stop at MIN_SCALE and scroll.
 */
const MIN_SCALE = 0.55;
const MAX_SCALE = 1.6;
/** World pixels shown past the arena edge, so the border reads as a wall. */
const EDGE_MARGIN_PX = 24;

/** A camera: world centre, zoom, and the CSS size of the view. */
export class Camera {
  /** World point at the centre of the screen. */
  x = 0;
  y = 0;
  /** CSS pixels per world pixel. */
  scale = 1;
  /** View size in CSS pixels. */
  viewW = 1;
  viewH = 1;

  /** Fits the zoom to the view and centres on `target`, clamped to the arena. */
  follow(
    target: { x: number; y: number },
    opts: { arena: ArenaDef; viewW: number; viewH: number },
  ): void {
    const { arena, viewW, viewH } = opts;
    this.viewW = viewW;
    this.viewH = viewH;
    const fit = Math.min(
      viewW / (arena.widthPx + 2 * EDGE_MARGIN_PX),
      viewH / (arena.heightPx + 2 * EDGE_MARGIN_PX),
    );
    this.scale = Math.max(MIN_SCALE, Math.min(MAX_SCALE, fit));
    this.x = clampAxis(target.x, viewW / this.scale, arena.widthPx);
    this.y = clampAxis(target.y, viewH / this.scale, arena.heightPx);
  }

  /** Screen (CSS px) position of a world point. */
  toScreen(wx: number, wy: number): { x: number; y: number } {
    return {
      x: (wx - this.x) * this.scale + this.viewW / 2,
      y: (wy - this.y) * this.scale + this.viewH / 2,
    };
  }

  /** World rectangle on screen, grown by `padPx` world pixels (for culling). */
  visible(padPx: number): { x0: number; y0: number; x1: number; y1: number } {
    const hw = this.viewW / 2 / this.scale + padPx;
    const hh = this.viewH / 2 / this.scale + padPx;
    return { x0: this.x - hw, y0: this.y - hh, x1: this.x + hw, y1: this.y + hh };
  }
}

/** Centre coordinate on one axis: follow the target, but never show much past the arena. */
function clampAxis(target: number, spanPx: number, sizePx: number): number {
  const lo = spanPx / 2 - EDGE_MARGIN_PX;
  const hi = sizePx - spanPx / 2 + EDGE_MARGIN_PX;
  if (lo >= hi) return sizePx / 2; // the view is wider than the arena: centre it
  return Math.max(lo, Math.min(hi, target));
}
