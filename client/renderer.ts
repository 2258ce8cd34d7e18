/**
 * The canvas renderer: one full-window canvas at devicePixelRatio, a camera on the
 * local ship, and a draw of the whole scene per animation frame. Times every draw
 * so the netgraph and tools/render_bench.ts can report it.
 */
import { PlayerFlag } from "../net/wire/mod.ts";
import { BulletLayer } from "./bullet_layer.ts";
import { Camera } from "./camera.ts";
import {
  drawArena,
  drawBoss,
  drawEnemy,
  drawFlashes,
  drawHitbox,
  drawLabels,
  drawPortal,
  drawShip,
} from "./draw_world.ts";
import { drawFocus, drawSparks, drawTelegraphs } from "./draw_effects.ts";
import { computeLayout, type Layout } from "./layout.ts";
import type { Scene } from "./scene.ts";

const TIMING_SAMPLES = 2048;

/** Draws scenes on one canvas. */
export class Renderer {
  readonly camera = new Camera();
  readonly #canvas: HTMLCanvasElement;
  readonly #ctx: CanvasRenderingContext2D;
  readonly #bullets = new BulletLayer();
  readonly #allyShots = new BulletLayer();
  #dpr = 0;
  #cssW = 0;
  #cssH = 0;
  readonly #drawMs = new Float64Array(TIMING_SAMPLES);
  #draws = 0;
  /**
   * Read one pixel back after each draw, forcing the rasteriser to finish inside the
   * timed region (the bench's honest mode; normal play leaves it off).
   */
  flushForTiming = false;
  /** Where the own ship was drawn last, in CSS pixels (undefined when not in a world). */
  lastSelfScreen: { x: number; y: number } | undefined;
  /** Touch layout (more room under the arena for thumbs). */
  touch = false;
  /** The layout of the last frame. */
  layout: Layout | undefined;
  /** The last scene drawn (for tests and tools reading what the page showed). */
  lastScene: Scene | undefined;

  constructor(canvas: HTMLCanvasElement) {
    this.#canvas = canvas;
    const ctx = canvas.getContext("2d", { alpha: false });
    if (!ctx) throw new Error("Cannot draw: this browser has no 2D canvas");
    this.#ctx = ctx;
  }

  /** Bullets drawn in the last frame (after culling). */
  get bulletsDrawn(): number {
    return this.#bullets.drawn + this.#allyShots.drawn;
  }

  /** The last `n` draw durations in ms, oldest first. */
  drawTimes(n = TIMING_SAMPLES): number[] {
    const count = Math.min(n, this.#draws, TIMING_SAMPLES);
    const out: number[] = [];
    for (let k = this.#draws - count; k < this.#draws; k++) {
      out.push(this.#drawMs[k % TIMING_SAMPLES]);
    }
    return out;
  }

  /** Draws one frame and records how long it took. */
  draw(scene: Scene): void {
    const t0 = performance.now();
    this.#fit();
    this.#drawScene(scene);
    this.lastScene = scene;
    if (this.flushForTiming) this.#ctx.getImageData(0, 0, 1, 1);
    this.#drawMs[this.#draws % TIMING_SAMPLES] = performance.now() - t0;
    this.#draws++;
  }

  /** Keeps the backing store at window size × devicePixelRatio. */
  #fit(): void {
    const dpr = Math.min(globalThis.devicePixelRatio || 1, 3);
    // The canvas fills the window; asking the window avoids the forced layout that
    // reading the canvas's clientWidth would cost after every HUD update.
    const w = globalThis.innerWidth;
    const h = globalThis.innerHeight;
    if (dpr === this.#dpr && w === this.#cssW && h === this.#cssH) return;
    this.#dpr = dpr;
    this.#cssW = w;
    this.#cssH = h;
    this.#canvas.width = Math.round(w * dpr);
    this.#canvas.height = Math.round(h * dpr);
  }

  #drawScene(scene: Scene): void {
    const ctx = this.#ctx;
    const dpr = this.#dpr;
    const cam = this.camera;
    const { world, self, nowMs } = scene;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "#05060d";
    ctx.fillRect(0, 0, this.#cssW, this.#cssH);

    const arenaW = world.arena.widthPx;
    const arenaH = world.arena.heightPx;
    const layout = computeLayout({ w: this.#cssW, h: this.#cssH }, {
      arenaW,
      arenaH,
      touch: this.touch,
    });
    this.layout = layout;
    cam.fit(layout, { arenaW, arenaH, shake: scene.shake ?? { x: 0, y: 0 } });
    const s = cam.scale * dpr;
    ctx.setTransform(s, 0, 0, s, dpr * cam.originX, dpr * cam.originY);
    const view = cam.visible(4);

    drawArena(ctx, world, view);
    for (const portal of world.portals) drawPortal(ctx, portal, nowMs);
    if (scene.boss) drawBoss(ctx, scene.boss, { nowMs, lookAt: self });
    for (const e of scene.enemies) drawEnemy(ctx, e, { nowMs, aimAt: self });
    for (const p of scene.others) drawShip(ctx, p, { self: false, nowMs });
    if (self) drawShip(ctx, self, { self: true, nowMs });
    if (scene.telegraphs) drawTelegraphs(ctx, scene, scene.telegraphs);
    const selfId = self?.id ?? 0;
    if (scene.allyShots) this.#allyShots.draw(ctx, scene.allyShots, { selfId, view });
    this.#bullets.draw(ctx, scene.bullets, { selfId, view });
    if (self && (self.flags & PlayerFlag.Active) !== 0) {
      if (scene.focus) drawFocus(ctx, self, world.player);
      drawHitbox(ctx, self, world);
    }
    drawFlashes(ctx, scene);
    drawSparks(ctx, scene);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    drawLabels(ctx, scene, (x, y) => cam.toScreen(x, y));
    this.lastSelfScreen = self && cam.toScreen(self.x, self.y);
  }
}
