/**
 * The view onto the arena: the layout fits the whole arena on screen (in a
 * bullet-hell what kills you comes from off-screen otherwise), and the camera
 * converts between world and screen, with a passing shake. Pure arithmetic; no DOM.
 */
import { EDGE_MARGIN_PX, type Layout } from "./layout.ts";

/** A camera: where world (0, 0) lands on screen and the zoom. */
export class Camera {
  /** CSS pixels per world pixel. */
  scale = 1;
  /** Screen position (CSS px) of the world origin, shake included. */
  originX = 0;
  originY = 0;
  #arenaW = 1;
  #arenaH = 1;

  /** Places the arena where the layout says, offset by `shake` (CSS px). */
  fit(layout: Layout, opts: { arenaW: number; arenaH: number; shake: { x: number; y: number } }) {
    this.scale = layout.scale;
    this.#arenaW = opts.arenaW;
    this.#arenaH = opts.arenaH;
    this.originX = layout.arena.x + EDGE_MARGIN_PX * layout.scale + opts.shake.x;
    this.originY = layout.arena.y + EDGE_MARGIN_PX * layout.scale + opts.shake.y;
  }

  /** Screen (CSS px) position of a world point. */
  toScreen(wx: number, wy: number): { x: number; y: number } {
    return { x: this.originX + wx * this.scale, y: this.originY + wy * this.scale };
  }

  /** World rectangle drawn, grown by `padPx` world pixels (for culling): the whole arena. */
  visible(padPx: number): { x0: number; y0: number; x1: number; y1: number } {
    const m = EDGE_MARGIN_PX + padPx;
    return { x0: -m, y0: -m, x1: this.#arenaW + m, y1: this.#arenaH + m };
  }
}
