/**
 * Draws the bullet replica in batches: bullets are bucketed by style (a counting
 * sort into one reused index array), then each style is drawn as one path per
 * layer (halo, body, core). Thousands of bullets cost a handful of fills and no
 * per-bullet style changes. Reads the pool; never writes it.
 */
import { type BulletLayer as LayerDef, type BulletShape, CONTENT } from "../content/mod.ts";
import { type BulletPool, Team } from "../sim/mod.ts";

const TAU = Math.PI * 2;
const CULLED = 255;

/** The layers of one style, drawn in order. */
type Style = readonly LayerDef[];

/** A kind the registry does not know (never, with matching content): a plain red dot. */
const UNKNOWN: Style = [
  { shape: "circle", color: "#ff5a5a", scale: 1 },
  { shape: "dot", color: "#ffffff", scale: 0.4 },
];

/**
 * Every style, in draw order (a kind's `z`, then its id): one per bullet kind, plus
 * a second for kinds whose shots read differently when another player fired them.
 * Built once from the registry; `STYLE_OF[kind]` and `ALLY_STYLE_OF[kind]` index it.
 */
const { STYLES, STYLE_OF, ALLY_STYLE_OF } = (() => {
  const kinds = [...CONTENT.bulletKinds].sort((a, b) => a.z - b.z || a.id - b.id);
  const styles: Style[] = [];
  const own: number[] = [];
  const ally: number[] = [];
  for (const k of kinds) {
    if (k.allyLayers) {
      ally[k.id] = styles.length;
      styles.push(k.allyLayers);
    }
    own[k.id] = styles.length;
    styles.push(k.layers);
    ally[k.id] ??= own[k.id];
  }
  return { STYLES: [...styles, UNKNOWN], STYLE_OF: own, ALLY_STYLE_OF: ally };
})();
const UNKNOWN_STYLE = STYLES.length - 1;

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
      const ally = team[i] === Team.Player && owner[i] !== opts.selfId;
      const s = (ally ? ALLY_STYLE_OF[kind[i]] : STYLE_OF[kind[i]]) ?? UNKNOWN_STYLE;
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
  opts: { shape: BulletShape; scale: number; from: number; to: number },
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
