/**
 * Where things go on screen: the arena, fitted whole, and the HUD around it, never
 * on it. Two shapes, whichever shows the arena bigger: `wide` puts the HUD in a
 * column on each side (landscape), `tall` puts it in a band above and one below
 * (portrait; the arena takes the whole width and the thumbs get the space under it).
 * Pure arithmetic; no DOM.
 */

/** A rectangle in CSS pixels. */
export interface ScreenRect {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

/** The screen's arrangement for one view size and arena. */
export interface Layout {
  readonly mode: "wide" | "tall";
  readonly viewW: number;
  readonly viewH: number;
  /** CSS pixels per world pixel. */
  readonly scale: number;
  /** The arena (with its edge margin) on screen: nothing of the HUD overlaps it. */
  readonly arena: ScreenRect;
  /** Wide: each side column's width. */
  readonly columnPx: number;
  /** Tall: the top band's height. */
  readonly topPx: number;
}

/** World pixels shown past the arena edge, so the border reads as a wall. */
export const EDGE_MARGIN_PX = 24;
/** Never magnify past this: a small arena on a big screen stays crisp, not bloated. */
const MAX_SCALE = 1.6;
/** Side columns: a share of the width, within bounds that fit the panels. */
const COLUMN_SHARE = 0.17;
const COLUMN_MIN_PX = 168;
const COLUMN_MAX_PX = 300;
/** Tall: the top band (stage and a crew of four in a row, the boss bar under them) and the least
 * room kept below the arena. */
const TALL_TOP_PX = 136;
const TALL_BOTTOM_PX = 72;
/** With thumbs, the band below the arena must hold two sticks and the buttons. */
const TALL_BOTTOM_TOUCH_PX = 220;

/** Picks the arrangement that shows the arena largest. */
export function computeLayout(
  view: { w: number; h: number },
  opts: { arenaW: number; arenaH: number; touch: boolean },
): Layout {
  const aw = opts.arenaW + 2 * EDGE_MARGIN_PX;
  const ah = opts.arenaH + 2 * EDGE_MARGIN_PX;
  const fit = (w: number, h: number) => Math.max(0.05, Math.min(MAX_SCALE, w / aw, h / ah));

  const columnPx = Math.round(
    Math.min(COLUMN_MAX_PX, Math.max(COLUMN_MIN_PX, view.w * COLUMN_SHARE)),
  );
  const wideW = view.w - 2 * columnPx;
  const wideScale = wideW > 0 ? fit(wideW, view.h) : 0;

  const bottom = opts.touch ? TALL_BOTTOM_TOUCH_PX : TALL_BOTTOM_PX;
  const tallScale = fit(view.w, view.h - TALL_TOP_PX - bottom);

  if (wideScale >= tallScale) {
    const w = aw * wideScale;
    const h = ah * wideScale;
    return {
      mode: "wide",
      viewW: view.w,
      viewH: view.h,
      scale: wideScale,
      arena: { x: columnPx + (wideW - w) / 2, y: (view.h - h) / 2, w, h },
      columnPx,
      topPx: 0,
    };
  }
  const w = aw * tallScale;
  const h = ah * tallScale;
  return {
    mode: "tall",
    viewW: view.w,
    viewH: view.h,
    scale: tallScale,
    // Right under the top band: everything below is the thumbs' and the HUD's.
    arena: { x: (view.w - w) / 2, y: TALL_TOP_PX, w, h },
    columnPx: 0,
    topPx: TALL_TOP_PX,
  };
}

/** True when two rectangles share any area (touching edges do not count). */
export function rectsOverlap(a: ScreenRect, b: ScreenRect): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}
