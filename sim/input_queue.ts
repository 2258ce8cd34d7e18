/**
 * The single audit point for client input. A frame is applied on the server tick it
 * names; this queue decides which frames are kept and which frame a tick uses.
 * Must not import anything outside sim/.
 */
import { BUTTON_MASK, type InputFrame } from "./types.ts";
import { ANGLE_UNITS } from "./grid.ts";
import { MOVE_UNITS } from "./movement.ts";

/** Limits of the audit; the defaults live in content's net tuning. */
export interface InputQueueLimits {
  /** Furthest ahead of the current tick a frame may claim. */
  readonly maxLeadTicks: number;
  /** Most frames held at once. */
  readonly maxQueued: number;
  /** Ticks a silent client keeps its last input before it stops. */
  readonly coastTicks: number;
}

/** What `offer` did with a frame. Every verdict but "queued" is a drop. */
export type InputVerdict = "queued" | "replay" | "stale" | "future" | "flood" | "invalid";

const NEUTRAL = { moveX: 0, moveY: 0, buttons: 0 };

/** Holds one player's pending frames, in tick order, and tracks coasting. */
export class InputQueue {
  readonly #limits: InputQueueLimits;
  readonly #frames: InputFrame[] = [];
  #last: InputFrame | undefined;
  #coasted = 0;
  /** Tick of the newest frame applied, -1 before the first. */
  lastInputTick = -1;
  /** The newest tick whose frame came too late, and the most any was late by since asked. */
  #lastLateTick = -1;
  #lateTicks = 0;

  constructor(limits: InputQueueLimits) {
    this.#limits = limits;
  }

  /** Frames waiting for their tick. */
  get size(): number {
    return this.#frames.length;
  }

  /** Audits a frame that arrived while the server is about to run `currentTick`. */
  offer(frame: InputFrame, currentTick: number): InputVerdict {
    if (!isWellFormed(frame)) return "invalid";
    if (frame.tick <= this.lastInputTick) return "replay";
    if (frame.tick < currentTick) {
      // Measured on its first copy only: the redundant ones come a tick or two later.
      if (frame.tick > this.#lastLateTick) {
        this.#lastLateTick = frame.tick;
        this.#lateTicks = Math.max(this.#lateTicks, currentTick - frame.tick);
      }
      return "stale";
    }
    if (frame.tick > currentTick + this.#limits.maxLeadTicks) return "future";
    // Sorted insert; redundant copies of a queued tick are replays too.
    let i = this.#frames.length;
    while (i > 0 && this.#frames[i - 1].tick > frame.tick) i--;
    if (i > 0 && this.#frames[i - 1].tick === frame.tick) return "replay";
    if (this.#frames.length >= this.#limits.maxQueued) return "flood";
    this.#frames.splice(i, 0, frame);
    return "queued";
  }

  /**
   * How late the frames that missed their tick arrived, in ticks: the most since the
   * last call that `reset`s (0: all on time). The client leads by more once it knows.
   */
  lateTicks(opts: { reset: boolean }): number {
    const late = this.#lateTicks;
    if (opts.reset) this.#lateTicks = 0;
    return late;
  }

  /**
   * The input for `tick`: its own frame if it came, else the last one for a
   * bounded number of ticks, else neutral. Frames older than `tick` are discarded.
   */
  take(tick: number): InputFrame {
    while (this.#frames.length > 0 && this.#frames[0].tick < tick) this.#frames.shift();
    const head = this.#frames[0];
    if (head !== undefined && head.tick === tick) {
      this.#frames.shift();
      this.#last = head;
      this.#coasted = 0;
      this.lastInputTick = tick;
      return head;
    }
    const last = this.#last;
    if (last !== undefined && this.#coasted < this.#limits.coastTicks) {
      this.#coasted++;
      return { ...last, tick };
    }
    return { ...NEUTRAL, aim: last?.aim ?? 0, tick };
  }
}

function isWellFormed(f: InputFrame): boolean {
  return Number.isInteger(f.tick) && f.tick >= 0 &&
    Number.isInteger(f.moveX) && Math.abs(f.moveX) <= MOVE_UNITS &&
    Number.isInteger(f.moveY) && Math.abs(f.moveY) <= MOVE_UNITS &&
    Number.isInteger(f.aim) && f.aim >= 0 && f.aim < ANGLE_UNITS &&
    Number.isInteger(f.buttons) && (f.buttons & ~BUTTON_MASK) === 0 &&
    (f.viewLag === undefined || (Number.isInteger(f.viewLag) && f.viewLag >= 0));
}
