/**
 * Draws the bullet replica in batches: bullets are bucketed by style (a counting
 * sort into one reused index array), then each style is drawn as one path per
 * layer (halo, body, core). Thousands of bullets cost a handful of fills and no
 * per-bullet style changes. Reads the pool; never writes it.
 */
import { BulletKind } from "../content/mod.ts";
import { type BulletPool, Team } from "../sim/mod.ts";

const TAU = Math.PI * 2;
const CULLED = 255;

/**
 * How a layer outlines each bullet. "dot" is an axis-aligned square: at core size
 * (a few pixels) it reads as a bright point and rasterises far faster than a circle.
 */
type Shape = "bolt" | "circle" | "needle" | "block" | "dot";

/** One fill (or stroke, for bolts) of a style: shape, colour and size relative to the radius. */
interface Layer {
  readonly shape: Shape;
  readonly color: string;
  readonly scale: number;
}

/** The layers of one style, drawn in order. */
type Style = readonly Layer[];

/** Style indices; the order is also the draw order (enemy bullets on top, they matter more). */
const S = {
  AllyShot: 0,
  OwnShot: 1,
  Wall: 2,
  Spiral: 3,
  Curl: 4,
  Orb: 5,
  Needle: 6,
  Other: 7,
} as const;

// Enemy bullets: a soft halo so they read against the floor, a saturated body and a
// white core (the hitbox is the body; the core is where the eye goes).
const STYLES: readonly Style[] = [
  [bolt("rgba(120,170,255,0.6)", 4), bolt("#dbe6ff", 1.5)],
  [bolt("rgba(90,245,255,0.75)", 6.5), bolt("#ffffff", 2.5)],
  [
    { shape: "block", color: "rgba(140,110,255,0.35)", scale: 1.35 },
    { shape: "block", color: "#8f74ff", scale: 1 },
    { shape: "dot", color: "#e6e0ff", scale: 0.45 },
  ],
  round("rgba(80,255,170,0.3)", "#3dffa8", "#f2fff8"),
  round("rgba(190,110,255,0.3)", "#c06bff", "#fbf2ff"),
  round("rgba(255,70,150,0.3)", "#ff4f9e", "#fff0f6"),
  [
    { shape: "needle", color: "rgba(255,170,60,0.35)", scale: 1.5 },
    { shape: "needle", color: "#ffb347", scale: 1 },
    { shape: "needle", color: "#fff6e0", scale: 0.45 },
  ],
  [{ shape: "circle", color: "#ff5a5a", scale: 1 }, { shape: "dot", color: "#ffffff", scale: 0.4 }],
];

/** A player-shot layer: a streak of `widthPx`. */
function bolt(color: string, widthPx: number): Layer {
  return { shape: "bolt", color, scale: widthPx };
}

/** A round enemy bullet: halo, body, core. */
function round(halo: string, body: string, core: string): Style {
  return [
    { shape: "circle", color: halo, scale: 1.55 },
    { shape: "circle", color: body, scale: 1 },
    { shape: "dot", color: core, scale: 0.45 },
  ];
}

/** Style of an enemy bullet by its kind (content/bullets.ts). */
const ENEMY_STYLE: Record<number, number> = {
  [BulletKind.Orb]: S.Orb,
  [BulletKind.Needle]: S.Needle,
  [BulletKind.Wall]: S.Wall,
  [BulletKind.Spiral]: S.Spiral,
  [BulletKind.Curl]: S.Curl,
};

/** A world rectangle. */
export interface ViewRect {
  readonly x0: number;
  readonly y0: number;
  readonly x1: number;
  readonly y1: number;
}

/** Batched bullet drawing with reused scratch arrays. */
export class BulletLayer {
  #style = new Uint8Array(1024);
  #order = new Int32Array(1024);
  readonly #start = new Int32Array(STYLES.length + 1);
  readonly #fill = new Int32Array(STYLES.length);
  /** Bullets drawn last frame (after culling). */
  drawn = 0;

  /** Draws every live bullet of `pool` inside `view`; the context holds the world transform. */
  draw(
    ctx: CanvasRenderingContext2D,
    pool: BulletPool,
    opts: { selfId: number; view: ViewRect },
  ): void {
    const n = pool.count;
    if (this.#style.length < n) {
      this.#style = new Uint8Array(pool.capacity);
      this.#order = new Int32Array(pool.capacity);
    }
    const style = this.#style;
    const start = this.#start;
    start.fill(0);
    const { x, y, radius, team, kind, owner } = pool;
    const { x0, y0, x1, y1 } = opts.view;
    for (let i = 0; i < n; i++) {
      const bx = x[i];
      const by = y[i];
      const r = radius[i] * 2;
      if (bx < x0 - r || bx > x1 + r || by < y0 - r || by > y1 + r) {
        style[i] = CULLED;
        continue;
      }
      const s = team[i] === Team.Player
        ? (owner[i] === opts.selfId ? S.OwnShot : S.AllyShot)
        : (ENEMY_STYLE[kind[i]] ?? S.Other);
      style[i] = s;
      start[s + 1]++;
    }
    for (let s = 0; s < STYLES.length; s++) start[s + 1] += start[s];
    const fill = this.#fill;
    fill.set(start.subarray(0, STYLES.length));
    const order = this.#order;
    for (let i = 0; i < n; i++) {
      const s = style[i];
      if (s !== CULLED) order[fill[s]++] = i;
    }
    this.drawn = start[STYLES.length];
    for (let s = 0; s < STYLES.length; s++) {
      if (start[s] === start[s + 1]) continue;
      for (const layer of STYLES[s]) {
        ctx.beginPath();
        tracePath(ctx, pool, {
          shape: layer.shape,
          scale: layer.scale,
          from: start[s],
          to: start[s + 1],
        }, order);
        if (layer.shape === "bolt") {
          ctx.strokeStyle = layer.color;
          ctx.lineWidth = layer.scale;
          ctx.stroke();
        } else {
          ctx.fillStyle = layer.color;
          ctx.fill();
        }
      }
    }
  }
}

/** Adds the outline of bullets order[from..to) to the current path. */
function tracePath(
  ctx: CanvasRenderingContext2D,
  pool: BulletPool,
  opts: { shape: Shape; scale: number; from: number; to: number },
  order: Int32Array,
): void {
  const { x, y, radius, dirX, dirY } = pool;
  const { scale, from, to } = opts;
  switch (opts.shape) {
    case "bolt":
      // A streak behind the shot: reads as speed, and as "ours" against round enemy bullets.
      for (let k = from; k < to; k++) {
        const i = order[k];
        const len = radius[i] * 4;
        ctx.moveTo(x[i] - dirX[i] * len, y[i] - dirY[i] * len);
        ctx.lineTo(x[i] + dirX[i] * radius[i], y[i] + dirY[i] * radius[i]);
      }
      return;
    case "circle":
      for (let k = from; k < to; k++) {
        const i = order[k];
        const r = radius[i] * scale;
        ctx.moveTo(x[i] + r, y[i]);
        ctx.arc(x[i], y[i], r, 0, TAU);
      }
      return;
    case "needle":
      // A diamond along the heading: the player sees where a fast bullet is going.
      for (let k = from; k < to; k++) {
        const i = order[k];
        const r = radius[i] * scale;
        const dx = dirX[i];
        const dy = dirY[i];
        const bx = x[i];
        const by = y[i];
        ctx.moveTo(bx + dx * r * 2, by + dy * r * 2);
        ctx.lineTo(bx - dy * r * 0.8, by + dx * r * 0.8);
        ctx.lineTo(bx - dx * r * 1.6, by - dy * r * 1.6);
        ctx.lineTo(bx + dy * r * 0.8, by - dx * r * 0.8);
        // No closePath: a fill closes every subpath anyway, and Chrome's closePath
        // costs time proportional to the whole path — quadratic over a batch.
      }
      return;
    case "block":
    case "dot":
      for (let k = from; k < to; k++) {
        const i = order[k];
        const r = radius[i] * scale;
        ctx.rect(x[i] - r, y[i] - r, r * 2, r * 2);
      }
      return;
  }
}
