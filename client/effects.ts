/**
 * Short-lived feedback the page adds on top of the game state: sparks where a
 * bullet struck, graze glints, the screen shake and the attack warnings still
 * pending. Fed by Game from server events; read by the renderer each frame.
 * Shake honours prefers-reduced-motion and the player's own setting. No DOM.
 */

/** A burst at a point (world px). */
export interface Spark {
  readonly x: number;
  readonly y: number;
  readonly atMs: number;
  readonly kind: "hit" | "hurt" | "graze";
}

/** An attack warning, on the client's predicted timeline. */
export interface TelegraphView {
  readonly source: "enemy" | "boss";
  readonly sourceId: number;
  readonly emitter: number;
  readonly style: "line" | "flash" | "edge";
  readonly aimRad: number;
  /** The server tick the shot is fired on. */
  readonly fireTick: number;
  readonly leadTicks: number;
  /** The boss phase when it was given (picks the emitter def). */
  readonly phase: number;
}

/** How long a spark lasts, by kind, in ms. */
export const SPARK_MS = { hit: 180, hurt: 320, graze: 260 } as const;
/** Shake decay time in ms. */
const SHAKE_MS = 260;
/** Shake strengths in CSS px. */
export const SHAKE_PX = { hurt: 7, phase: 5, bossDown: 9 } as const;
/** At most this many sparks alive: a storm of hits must not cost frames. */
const MAX_SPARKS = 64;

/** The page's passing effects. */
export class Effects {
  readonly sparks: Spark[] = [];
  readonly telegraphs: TelegraphView[] = [];
  /** No shake at all when true (reduced motion, asked by the OS or the player). */
  calm = false;
  #shakePx = 0;
  #shakeAtMs = 0;

  /** Starts a shake of `px` (a stronger one replaces a weaker one). */
  shake(px: number, nowMs: number): void {
    if (this.calm) return;
    if (px >= this.#shakeLeft(nowMs)) {
      this.#shakePx = px;
      this.#shakeAtMs = nowMs;
    }
  }

  #shakeLeft(nowMs: number): number {
    const t = (nowMs - this.#shakeAtMs) / SHAKE_MS;
    return t >= 1 ? 0 : this.#shakePx * (1 - t) * (1 - t);
  }

  /** The screen offset now, in CSS px (zero when calm or settled). */
  shakeOffset(nowMs: number): { x: number; y: number } {
    const amp = this.calm ? 0 : this.#shakeLeft(nowMs);
    if (amp < 0.2) return { x: 0, y: 0 };
    // Two incommensurate sines: a shudder, not a wobble, and no Math.random.
    return { x: amp * Math.sin(nowMs * 0.11), y: amp * Math.cos(nowMs * 0.083) };
  }

  /** Adds a spark. */
  spark(s: Spark): void {
    if (this.sparks.length >= MAX_SPARKS) this.sparks.shift();
    this.sparks.push(s);
  }

  /** Forgets sparks that have faded and warnings whose shot has been fired by `tick`. */
  prune(nowMs: number, tick: number): void {
    while (this.sparks.length > 0 && nowMs - this.sparks[0].atMs > SPARK_MS.hurt) {
      this.sparks.shift();
    }
    for (let i = this.telegraphs.length - 1; i >= 0; i--) {
      if (this.telegraphs[i].fireTick < tick) this.telegraphs.splice(i, 1);
    }
  }

  /** Drops everything (a transfer to another instance). */
  clear(): void {
    this.sparks.length = 0;
    this.telegraphs.length = 0;
    this.#shakePx = 0;
  }
}
